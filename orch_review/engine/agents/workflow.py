"""The Workflow tool: a journaled fan-out of subagents with pipelined verification.

Each concern runs as a subagent; as soon as its findings are in, a verifier for them is
queued ahead of concerns not yet started (``verification``). Every request an agent sends
waits at the pool's gate for a slot, ranked by the chain of work still behind it, and
reserves what it may cost (``gated_session``). Every agent's result is looked up in, and stored to,
the journal under a key of everything that changes its answer (``concern_keys``), so a
rerun pays only for agents that never finished. A subagent starts only when the budget
admits it with its verifier (``budget``). The tool's input and result are
``workflow_tool``'s; which concern covers which files is ``concern_book``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any

from orch_review import waiting
from orch_review.engine.agents.concern_book import ConcernBook, Numbered
from orch_review.engine.agents.concern_keys import ConcernKeys
from orch_review.engine.agents.gated_client import GatedClient, gated_session
from orch_review.engine.agents.inlined_files import inline_files
from orch_review.engine.agents.packing import Packed, PackLimits, pack
from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.subagent import run_subagent
from orch_review.engine.agents.verification import (
    VERDICTS_FORMAT,
    queue_verification,
    skipped_if_cancelled,
    unverified,
)
from orch_review.engine.agents.workflow_tool import WorkflowTool, describe, parse_subtasks
from orch_review.engine.api.scheduler import REVIEW
from orch_review.engine.memory.reuse import EarlierReviews
from orch_review.errors import OrchReviewError
from orch_review.findings.codec import finding_from_json, finding_to_json
from orch_review.findings.records import ConcernOutcome

__all__ = [
    "VERDICTS_FORMAT",
    "GatedClient",
    "Workflow",
    "describe",
    "gated_session",
    "parse_subtasks",
]


class Workflow:
    """Runs concerns for one session; each :meth:`run` is one Workflow tool call."""

    def __init__(
        self,
        session: Session,
        *,
        require_files: bool = False,
        earlier: EarlierReviews | None = None,
        on_concerns: Callable[[list[str]], None] | None = None,
        hunks: Mapping[str, Sequence[tuple[int, int]]] | None = None,
        on_outcome: Callable[[ConcernOutcome], None] | None = None,
    ) -> None:
        """``require_files``: refuse subtasks that name no reviewable file (a change's
        concerns must be about the change); ``earlier``: files an earlier review covered;
        ``on_concerns``: told each list of concerns about to run, before they run (a whole
        plan's at once), e.g. to start the completeness critic; ``hunks``: per changed
        file, the new-side line ranges of its diff hunks, shown with the file;
        ``on_outcome``: told each concern's outcome, verified, as soon as it is in (on the
        thread that settled it; it must not raise), e.g. to start provers."""
        self._session = session
        self._require_files = require_files
        self._earlier = earlier
        self._on_concerns = on_concerns
        self._hunks = dict(hunks or {})
        self._on_outcome = on_outcome
        # Concerns answered from an earlier review instead of being run.
        self.answered: set[int] = set()
        self._book = ConcernBook(session.workspace)
        self._keys = ConcernKeys(session)
        self._tool = WorkflowTool(
            session.config.max_subtasks, self.run, self.refusal, self._announce, self._pack
        )

    @property
    def outcomes(self) -> list[ConcernOutcome]:
        """The outcomes collected so far, in concern order."""
        return self._book.outcomes

    @property
    def files_of(self) -> dict[int, tuple[str, ...]]:
        """Concern index -> the reviewable files it is about: what its outcome covers."""
        return self._book.files_of

    @property
    def refused(self) -> list[tuple[str, str]]:
        """(subtask, why) of each subtask refused, as told to the model."""
        return self._tool.refused

    @property
    def guidance_truncated(self) -> bool:
        """True when some agent's review guidance was cut to the limit."""
        return self._keys.guidance_truncated

    def refusal(self, subtask: str) -> str | None:
        """Why ``subtask`` may not run (a skipped file, or no file of the change), or None."""
        workspace = self._session.workspace
        reason = workspace.refusal(subtask)
        if reason is None and self._require_files and not workspace.mentioned_files(subtask):
            reason = (
                "it names no file of the change; concerns must be about changed files "
                "(name them by their paths, as listed in the pre-scout summary)"
            )
        return reason

    def handle_tool_call(self, tool_input: Mapping[str, Any]) -> tuple[str, bool]:
        """The tool handler given to the main agent: ``subtasks``, or a ``phases`` plan."""
        return self._tool.handle(tool_input)

    def _pack(self, subtasks: list[str]) -> Packed:
        """The small ones of a tool call's ``subtasks`` packed (``engine.packing``)."""
        config = self._session.config
        budget = config.inline_file_bytes if config.pack_subtasks else 0
        return pack(subtasks, self._sizes, PackLimits(config.max_concurrent, budget))

    def _sizes(self, subtask: str) -> list[int]:
        """The sizes of the files ``subtask`` names; none when one cannot be shown, or when
        an earlier review answers it (it needs no agent, packed or not)."""
        workspace = self._session.workspace
        named = workspace.mentioned_files(subtask)
        if self._earlier is not None and self._earlier.answers(named):
            return []
        sizes = []
        for path in named:
            data = workspace.read(path)
            if data is None or b"\0" in data:
                return []
            sizes.append(len(data))
        return sizes

    def _announce(self, concerns: Sequence[str]) -> None:
        accepted = [c for c in concerns if self.refusal(c) is None]
        if accepted and self._on_concerns is not None:
            self._on_concerns(accepted)

    def run(
        self, concerns: list[str], files: Sequence[Sequence[str]] | None = None
    ) -> list[ConcernOutcome]:
        """Review ``concerns`` and return their outcomes in order. ``files`` gives, per
        concern, the files it covers (default: the reviewable files its text names)."""
        numbered = self._book.number(concerns, files)
        self._announce(concerns)  # the critic, if it starts now, queues ahead of them
        return self.collect(self._queue(numbered))

    def start(
        self, concerns: Sequence[str], files: Sequence[Sequence[str]] | None = None
    ) -> list[Future[ConcernOutcome]]:
        """Queue ``concerns`` without waiting; :meth:`collect` their outcomes."""
        return self._queue(self._book.number(concerns, files))

    def _queue(self, numbered: Sequence[Numbered]) -> list[Future[ConcernOutcome]]:
        for item in numbered:
            if item.earlier:
                continue
            if self._on_outcome is not None:
                item.outcome.add_done_callback(self._outcome_in)
            if self._earlier is not None and self._earlier.answers(item.files):
                self._answered(item, self._earlier)
                continue
            queued = self._session.pool.submit(
                REVIEW, partial(self._review, item.index, item.concern, item.outcome)
            )
            skipped = ConcernOutcome(item.index, item.concern, "skipped", error="interrupted")
            skipped_if_cancelled(queued, item.outcome, skipped)
        return [item.outcome for item in numbered]

    def _outcome_in(self, done: Future[ConcernOutcome]) -> None:
        assert self._on_outcome is not None
        if not done.cancelled() and done.exception() is None:
            self._on_outcome(done.result())

    def collect(self, futures: Sequence[Future[ConcernOutcome]]) -> list[ConcernOutcome]:
        """Wait for queued concerns; their outcomes join :attr:`outcomes` in concern order."""
        try:
            outcomes = [waiting.result(f) for f in futures]
        except BaseException as exc:
            if not isinstance(exc, Exception):  # Ctrl-C or a signal: stop admitting at once
                self._session.cancel.set()
                self._session.pool.cancel_pending()
            raise
        for outcome in outcomes:
            self._session.budget.concern_ended(outcome.index, outcome.covered)
        self._book.add(outcomes)
        return outcomes

    def pending_files(self) -> frozenset[str]:
        """Files named by queued concerns whose outcome is not in yet."""
        return self._book.pending_files()

    def _answered(self, item: Numbered, earlier: EarlierReviews) -> None:
        """The outcome of a concern whose files an earlier review covered, without an agent."""
        self.answered.add(item.index)
        self._session.emit(f"s{item.index}", "subagent", item.concern, "cached", "earlier review")
        findings = tuple(f for path in item.files for f in earlier.findings[path])
        item.outcome.set_result(
            ConcernOutcome(
                item.index,
                item.concern,
                "reviewed",
                findings,
                "Answered from an earlier review of the same content.",
                from_journal=True,
            )
        )

    def _review(self, index: int, concern: str, done: Future[ConcernOutcome]) -> None:
        session = self._session
        try:
            result = self._reviewed(index, concern)
        except OrchReviewError as exc:
            session.budget.withdraw("verifier", index)  # the agent said it failed
            done.set_result(ConcernOutcome(index, concern, "failed", error=str(exc)))
            return
        except BaseException as exc:
            session.budget.withdraw("verifier", index)
            done.set_exception(exc)
            return
        if result.status != "reviewed" or not result.findings:
            session.budget.withdraw("verifier", index)
            done.set_result(result)
        elif not session.config.verify:  # honestly incomplete: the findings stay unverified
            done.set_result(unverified(result, "verification off"))
        else:
            queue_verification(session, self._keys, result, done)

    def _reviewed(self, index: int, concern: str) -> ConcernOutcome:
        """The subagent's outcome for ``concern``, from the journal or a subagent run (once
        the budget admits it with its verifier); raises what the subagent raised."""
        session = self._session
        if session.cancel.is_set():  # after a stop the snapshot may be gone: read nothing
            return self._skipped(index, concern, "interrupted")
        budget = session.config.inline_file_bytes
        key = self._keys.key("subagent", concern, "inline", budget)
        stored = session.journal.get(key)
        from_journal = stored is not None
        if stored is None:
            admitted = session.budget.admit(
                "subagent",
                index,
                session.config.agent_model,
                verify_after=session.config.verify,
                cancel=session.cancel,
            )
            if not admitted:
                reason = "interrupted"
                if not session.cancel.is_set():
                    reason = session.budget.report().cap_reached or "budget reached"
                return self._skipped(index, concern, reason)
            named = session.workspace.mentioned_files(concern)
            try:
                reported = run_subagent(
                    gated_session(session, "subagent", index),
                    f"s{index}",
                    concern,
                    self._keys.guidance_for(concern),
                    inline_files(
                        session.workspace, named, budget, self._hunks, shell=session.has_shell
                    ).text,
                )
                if reported.findings:  # before its place is freed: nobody takes the money
                    session.budget.will_verify(index, session.config.agent_model)
            finally:
                session.budget.finished("subagent", index)
            stored = {
                "summary": reported.summary,
                "findings": [finding_to_json(f) for f in reported.findings],
            }
            session.journal.put(key, "subagent", stored)
        else:
            session.budget.reused("subagent")
            session.emit(f"s{index}", "subagent", concern, "cached")
        findings = tuple(finding_from_json(f) for f in stored["findings"])
        return ConcernOutcome(
            index, concern, "reviewed", findings, stored["summary"], from_journal=from_journal
        )

    def _skipped(self, index: int, concern: str, reason: str) -> ConcernOutcome:
        """The outcome of a concern that was not run, said in the live view too."""
        self._session.emit(f"s{index}", "subagent", concern, "skipped", reason)
        return ConcernOutcome(index, concern, "skipped", error=reason)
