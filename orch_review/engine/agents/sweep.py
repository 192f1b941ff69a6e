"""The engine's coverage guarantee: a sweep wave over the files no finished concern covered.

After the main agent's Workflow calls (and whatever it chose not to do), every reviewable file
that no finished, verified concern named is grouped with its neighbours (same directory first)
into concerns sized to fit one agent's budget, and those run through the same Workflow:
journaled, verified, capped by the session's budget like any other concern.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from orch_review.engine.agents.workflow import Workflow
from orch_review.findings.coverage import LedgerFile
from orch_review.findings.records import ConcernOutcome
from orch_review.findings.sweep_groups import SweepLimits, fit_groups
from orch_review.quoting import quote_path
from orch_review.scope.diff import line_ranges
from orch_review.wording import counted


def _common_directory(paths: Sequence[str]) -> str:
    parts = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return "/".join(common)


def sweep_concern(group: Sequence[LedgerFile], base: str | None) -> str:
    """The self-contained subtask for one group: what to read and what to look for."""
    where = _common_directory([f.path for f in group])
    place = f"under `{quote_path(where)}/`" if where else "at the top of the repository"
    if base:
        head = (
            f"Sweep review of {counted(len(group), 'changed file')} {place} that no other concern "
            f"covered. Review what changed in each (`git diff {base} HEAD -- FILE` shows it; "
            "read the surrounding code too) for defects of any kind: correctness, security, "
            "error handling, resource use, concurrency. Files and changed line ranges:"
        )
        lines = [f"- {quote_path(f.path)} (lines {line_ranges(f.hunks) or 'n/a'})" for f in group]
    else:
        head = (
            f"Sweep review of {counted(len(group), 'file')} {place} that no other concern covered. "
            "Review each for defects of any kind: correctness, security, error handling, "
            "resource use, concurrency. Files:"
        )
        lines = [f"- {quote_path(f.path)} ({f.lines} lines)" for f in group]
    return "\n".join([head, *lines])


def covering(
    outcomes: Sequence[ConcernOutcome],
    files_of: Mapping[int, Sequence[str]],
    answered: AbstractSet[int] = frozenset(),
) -> tuple[dict[str, list[int]], dict[str, str]]:
    """Per path, the 1-based ids of the concerns that covered it; for paths named only by
    concerns that did not finish, why (the last such concern's reason). Concerns in
    ``answered`` were answered from an earlier review: their files count as reused."""
    covered_by: dict[str, list[int]] = defaultdict(list)
    reasons: dict[str, str] = {}
    for outcome in outcomes:
        if outcome.index in answered:
            continue
        for path in files_of.get(outcome.index, ()):
            if outcome.covered:
                covered_by[path].append(outcome.index + 1)
            else:
                reasons[path] = f"concern [{outcome.index + 1}] {_why(outcome)}"
    # A finding nobody verified may be a real problem: its file is not covered, whatever
    # other concerns (a sweep included) found there.
    for outcome in outcomes:
        for finding in outcome.findings:
            if finding.verdict is None and outcome.index not in answered:
                covered_by.pop(finding.path, None)
                why = f" ({outcome.error})" if outcome.error else ""
                reasons[finding.path] = (
                    f"concern [{outcome.index + 1}] reported a finding here that was not "
                    f"verified{why}"
                )
    return dict(covered_by), reasons


def _why(outcome: ConcernOutcome) -> str:
    if outcome.status == "failed":
        return f"failed: {outcome.error}"
    if outcome.status == "skipped":
        return f"was not run: {outcome.error}"
    return f"was not fully verified: {outcome.error or 'a verifier did not run'}"


def uncovered_files(
    files: Sequence[LedgerFile], workflow: Workflow, done: frozenset[str] = frozenset()
) -> list[LedgerFile]:
    """Files no finished, verified concern of ``workflow`` covered (``done``: already
    covered some other way, e.g. reused from an earlier review)."""
    covered_by, _ = covering(workflow.outcomes, workflow.files_of, workflow.answered)
    return [f for f in files if f.path not in covered_by and f.path not in done]


def run_sweep(
    workflow: Workflow,
    files: Sequence[LedgerFile],
    base: str | None,
    *,
    done: frozenset[str] = frozenset(),
    limits: SweepLimits | None = None,
    agents_left: int | None = None,
) -> list[ConcernOutcome]:
    """Review every file in ``files`` nothing covered yet; returns the sweep's outcomes.
    ``agents_left``: what ``--max-agents`` still allows (None: no cap)."""
    missing = uncovered_files(files, workflow, done)
    if not missing:
        return []
    groups = fit_groups(missing, limits or SweepLimits(), agents_left)
    return workflow.run(
        [sweep_concern(g, base) for g in groups], files=[[f.path for f in g] for g in groups]
    )
