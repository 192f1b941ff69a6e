"""What each MCP tool does, in plain Python over :mod:`orch_review.core`.

One :class:`ReviewService` serves one repository for the life of the server. It keeps the
last review's report in memory (the ``explain_finding`` and ``apply_fix`` tools and the
report resource read it), reads the secrets once when it is made, and never writes to
stdout.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orch_review.errors import UsageError
from orch_review.mcp_server.arguments import BadArguments, ScopeArgs

if TYPE_CHECKING:
    from orch_review.core import PreparedReview, ReviewOptions
    from orch_review.engine.agents.agent_loop import AgentEvent
    from orch_review.findings.records import Finding
    from orch_review.findings.report import Report

_FINAL = ("done", "failed", "cached", "skipped")
#: The budget caps a caller may lower (never raise) for one review.
CAPS = ("max_cost_usd", "max_agents", "max_total_tokens")


class Cancelled(Exception):
    """The review was cancelled: what finished is in the journal for the next run."""


@dataclass(slots=True)
class _Last:
    report: Report
    prepared: PreparedReview


@dataclass(slots=True)
class ProgressCounter:
    """Agents started and finished so far, as progress notifications tell them.

    MCP requires each notification's progress to be greater than the last one's: it is the
    number of agents finished, so a notification goes out only when one more has finished.
    Agents are counted once each, by id; an agent reused from the journal finishes without
    having started, and counts as both. The review's own steps (the snapshot) are not agents.
    """

    started: set[str] = field(default_factory=set)
    finished: set[str] = field(default_factory=set)
    by_role: dict[str, int] = field(default_factory=dict)

    def count(self, event: AgentEvent) -> bool:
        """Count ``event``; True when one more agent has finished."""
        if event.role == "setup":
            return False
        if event.state == "started":
            self.started.add(event.agent_id)
        elif event.state in _FINAL and event.agent_id not in self.finished:
            self.started.add(event.agent_id)
            self.finished.add(event.agent_id)
            self.by_role[event.role] = self.by_role.get(event.role, 0) + 1
            return True
        return False

    @property
    def done(self) -> int:
        """Agents finished."""
        return len(self.finished)

    @property
    def total(self) -> int:
        """Agents started so far (a review starts more as it goes)."""
        return len(self.started)

    def message(self) -> str:
        """One line: agents finished of those started, per role."""
        roles = ", ".join(f"{n} {role}" for role, n in sorted(self.by_role.items()))
        return f"{self.done} of {self.total} agents done" + (f" ({roles})" if roles else "")


class ReviewService:
    """Plans, reviews, follow-ups and fixes for the repository at ``repo``."""

    def __init__(self, repo: Path, env: Mapping[str, str]) -> None:
        self._repo = repo
        self._env = dict(env)
        self._lock = threading.Lock()
        self._last: _Last | None = None

    def _options(self, scope: ScopeArgs, settings: Mapping[str, object]) -> ReviewOptions:
        from orch_review.core import ReviewOptions

        return ReviewOptions(
            staged=scope.staged,
            base=scope.base,
            head=scope.head,
            all_files=scope.all_files,
            paths=scope.paths,
            settings=dict(settings),
        )

    def plan(self, scope: ScopeArgs) -> dict[str, Any]:
        """What a review of ``scope`` would cover and cost, with no API call."""
        from orch_review import core
        from orch_review.engine.agents.prompts import MAIN_SYSTEM
        from orch_review.engine.plan import plan_data

        prepared = core.prepare(self._repo, self._options(scope, {}), self._env)
        return plan_data(prepared.scope, MAIN_SYSTEM, cost=core.estimate(prepared))

    def review(
        self,
        scope: ScopeArgs,
        settings: Mapping[str, object],
        *,
        on_progress: Callable[[ProgressCounter], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        """Review ``scope`` with the caps in ``settings``; :class:`Cancelled` once ``cancel``
        is set and the agents in flight have stopped."""
        from orch_review import core
        from orch_review.scope.resolve import NothingToReview

        progress = ProgressCounter()
        lock = threading.Lock()

        def events(event: AgentEvent) -> None:
            # Told under the lock: agents finish on several threads, and notifications must
            # leave in the order of their counts.
            with lock:
                if progress.count(event) and on_progress is not None:
                    on_progress(progress)

        try:
            prepared = core.prepare(self._repo, self._options(scope, {}), self._env)
        except NothingToReview as exc:
            return {"nothing_to_review": str(exc), "findings": [], "exit_code": 0}
        prepared = _lowered(prepared, settings)
        with self._lock:
            try:
                report = core.run(prepared, events=events, cancel=cancel)
            except KeyboardInterrupt:
                raise Cancelled(
                    "The review was cancelled. What finished is kept in the journal: call "
                    "`review` again with the same scope to resume; it pays only for what "
                    "did not finish."
                ) from None
            self._last = _Last(report, prepared)
        result = review_result(report, prepared.config.fail_on)
        result["caps"] = {name: getattr(prepared.config, name) for name in CAPS}
        return result

    def guidance(self) -> dict[str, Any]:
        """The review guidance in force for the default scope (or the last review's): the
        REVIEW.md files, instructions and learnings, and the revision they were read from."""
        from orch_review import core
        from orch_review.config.agent_rules import FILE_MAX_BYTES, read_rules
        from orch_review.config.guidance import load_guidance
        from orch_review.scope import git as gitops

        prepared = self._last.prepared if self._last else None
        if prepared is None:
            prepared = core.prepare(self._repo, self._options(ScopeArgs(), {}), self._env)
        scope, config = prepared.scope, prepared.config
        revision = scope.config_revision or scope.head_commit or "HEAD"

        def read(name: str) -> str | None:
            data = gitops.show_file(prepared.repo, revision, name)
            return None if data is None else data.decode("utf-8", "replace")

        names = gitops.files_called(prepared.repo, revision, config.guidance_files)
        cap = min(FILE_MAX_BYTES, config.guidance_max_bytes)
        rules = read_rules(prepared.repo, revision, cap) if config.agent_rules else None
        loaded = load_guidance(config, names, read, prepared.learnings, rules)
        return {
            "read_from": revision,
            "documents": dict(loaded.documents),
            "rules": [
                {"path": rule.path, "applies_to": list(rule.globs), "text": rule.text}
                for rule in loaded.rules
            ],
            "instructions": loaded.instructions,
            "path_instructions": [
                {"glob": rule.glob, "text": rule.text} for rule in loaded.path_instructions
            ],
            "learnings": loaded.learnings,
        }

    def last_report(self) -> Report:
        """The last review's report; UsageError before any review."""
        if self._last is None:
            raise BadArguments("no review has run yet in this server: call `review` first.")
        return self._last.report

    def finding(self, finding: str) -> Finding:
        """The confirmed finding of the last review with this id."""
        for candidate in self.last_report().confirmed:
            if candidate.fingerprint == finding:
                return candidate
        raise BadArguments(
            f"finding: the last review has no confirmed finding with id {finding[:40]!r}."
        )

    def explain(self, finding: str, question: str) -> dict[str, Any]:
        """A follow-up about one finding of the last review, continuing its conversation
        with orchestration mode off: the model answers on its own, with no new fan-out."""
        from orch_review.engine.memory.followup import FollowUp
        from orch_review.mcp_server.questions import compose

        found = self.finding(finding)
        assert self._last is not None
        prepared = self._last.prepared
        with FollowUp(prepared.config, prepared.repo, self._env) as follow_up:
            answer = follow_up.ask(compose(found, question), orchestrate=False)
        return {"answer": answer.text, "finding": finding}

    def apply_fix(self, finding: str) -> dict[str, Any]:
        """Apply one verified patch to the working tree, confined as ``--fix`` is."""
        from orch_review.fixes import apply_fixes
        from orch_review.scope.git import work_tree

        found = self.finding(finding)
        if found.verified_patch is None:
            raise BadArguments("finding: this finding has no verified patch to apply.")
        assert self._last is not None
        top = Path(work_tree(self._last.prepared.repo))
        (outcome,) = apply_fixes(top, [found])
        if not outcome.applied:
            raise UsageError(f"the patch was not applied: {outcome.reason}.")
        return {"applied": True, "path": found.path, "lines": [found.start_line, found.end_line]}


def _lowered(prepared: PreparedReview, asked: Mapping[str, object]) -> PreparedReview:
    """``prepared`` with each cap the caller asked for, where it is lower than the configured
    one: a caller of the server may tighten the budget the configuration set, never loosen
    it (the configuration is the server's owner's; the caller may be steered by a change)."""
    from dataclasses import replace

    config = prepared.config
    lowered: dict[str, Any] = {}
    for name in CAPS:
        wanted = asked.get(name)
        configured = getattr(config, name)
        if isinstance(wanted, int | float) and (configured is None or wanted < configured):
            lowered[name] = wanted
    return replace(prepared, config=replace(config, **lowered)) if lowered else prepared


def review_result(report: Report, fail_on: str) -> dict[str, Any]:
    """What a calling agent acts on: confirmed findings, coverage, cost, the exit code."""
    from orch_review.reporters.json_report import to_data
    from orch_review.reporters.sentences import incomplete_reasons

    data = to_data(report)
    files = data["coverage"]["changed_files"]
    uncovered = [
        {"path": f["path"], "reason": f["reason"] or "not reviewed"}
        for f in data["coverage"]["files"]
        if f["status"] == "uncovered"
    ]
    confirmed = [f for f in data["findings"] if f.get("status") == "confirmed"]
    return {
        "exit_code": int(report.exit_code(fail_on)),
        "complete": not report.incomplete,
        # ``covered`` already counts the files reused from an earlier review.
        "coverage": f"{files['covered']} of {files['total']} files covered"
        + (f" ({files['reused']} reused from an earlier review)" if files["reused"] else ""),
        "uncovered_files": uncovered,
        "skipped_files": data["coverage"]["skipped_files"],
        "incomplete_reasons": incomplete_reasons(report),
        "findings": [{"id": f.get("fingerprint"), **f} for f in confirmed],
        "cost_usd": data["usage"]["total"]["cost_usd"],
        "notes": data["notes"],
    }
