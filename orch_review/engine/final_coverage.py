"""After the main agent: the sweep over files nothing covers, the critic's concerns, and the
coverage ledger they end in."""

from __future__ import annotations

from collections.abc import Callable

from orch_review.config.settings import Config
from orch_review.engine.agents.critic import Critic
from orch_review.engine.agents.intent_review import INTENT_CATEGORY
from orch_review.engine.agents.sweep import covering, run_sweep
from orch_review.engine.agents.workflow import Workflow
from orch_review.engine.api.budget import Budget
from orch_review.findings.coverage import Coverage, LedgerFile, SkippedPath, build_coverage
from orch_review.findings.records import Finding
from orch_review.scope.resolve import Scope
from orch_review.scope.workspace import Workspace
from orch_review.wording import counted


def cover_rest(
    workflow: Workflow,
    critic: Critic | None,
    files: list[LedgerFile],
    scope: Scope,
    done: frozenset[str],
    agents_left: Callable[[], int | None],
    warnings: list[str],
) -> tuple[str, ...]:
    """After the main agent: the sweep over files nothing covers, and the critic's concerns
    (started with the first concern list, so usually queued or done by now); the report's
    notes on what they did. Files the critic's queued concerns name are swept only if those fail."""
    if critic is not None:
        critic.wait_queued()
    pending = workflow.pending_files()
    swept = run_sweep(
        workflow,
        [f for f in files if f.path not in pending],
        scope.base_commit,
        done=done,
        agents_left=agents_left(),
    )
    added: list[str] = []
    if critic is not None:
        run = critic.finish()
        if run.failure:
            warnings.append(run.failure)
        if run.outcomes:
            added.append(
                f"The completeness critic added {counted(len(run.outcomes), 'concern')} the "
                "first wave had not covered."
            )
        swept += run_sweep(
            workflow,
            [f for f in files if f.path in pending],
            scope.base_commit,
            done=done,
            agents_left=agents_left(),
        )
    if swept:
        count = sum(len(workflow.files_of[o.index]) for o in swept)
        sweeps = "a sweep" if len(swept) == 1 else counted(len(swept), "sweep")
        added.insert(
            0, f"orch-review reviewed {counted(count, 'file')} no concern had covered, in {sweeps}."
        )
    return tuple(added)


def ledger_files(scope: Scope, workspace: Workspace) -> list[LedgerFile]:
    """Every reviewable file in scope: for a change its changed lines and hunks, for a full
    audit its length (read from the snapshot, so call it once the content is in place)."""
    out = []
    for file in scope.files:
        if file.change is not None:
            changed = file.change.additions + file.change.deletions
            out.append(LedgerFile(file.path, changed, file.change.hunks))
        else:
            out.append(LedgerFile(file.path, workspace.line_count(file.path) or 0))
    return out


def agents_left(config: Config, budget: Budget) -> int | None:
    if config.max_agents is None:
        return None
    return max(0, config.max_agents - sum(budget.report().agents_started.values()))


def verified_by_path(workflow: Workflow) -> dict[str, list[Finding]]:
    """Findings of the concerns this review ran and fully verified, by path; not the intent
    check's, which are about the request's description, not the file alone."""
    out: dict[str, list[Finding]] = {}
    for outcome in workflow.outcomes:
        if outcome.covered and outcome.index not in workflow.answered:
            for finding in outcome.findings:
                if finding.category != INTENT_CATEGORY:
                    out.setdefault(finding.path, []).append(finding)
    return out


def coverage_of(
    scope: Scope, files: list[LedgerFile], workflow: Workflow, reused: frozenset[str]
) -> Coverage:
    covered_by, reasons = covering(workflow.outcomes, workflow.files_of, workflow.answered)
    return build_coverage(
        files,
        covered_by=covered_by,
        reused=reused,
        reasons=reasons,
        skipped=[SkippedPath(s.path, s.reason) for s in scope.skipped],
        unit="files" if scope.kind == "all" else "changed files",
    )
