"""The completeness critic: from the list of concerns, hunt for what nobody covers.

The critic needs the concern list, not the findings: what nobody looks at is visible in the
list. So it starts as soon as the first list is known, on the same pool and request gate as
the first wave (ahead of it: its chain is the longest), and the concerns it proposes join the
fan-out, journaled and verified like the others, while the first wave still runs.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from orch_review import waiting
from orch_review.engine.agents.agent_loop import AgentLoop, Terminal
from orch_review.engine.agents.prompts import (
    CRITIC_SYSTEM,
    CRITIC_TURN_LIMIT_NOTE,
    critic_task,
    system_prompt,
)
from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.tools import (
    REPORT_CONCERNS_TOOL,
    TOOLS_VERSION,
    ToolInputError,
    described,
)
from orch_review.engine.agents.workflow import Workflow, gated_session, parse_subtasks
from orch_review.engine.api.scheduler import CRITIC
from orch_review.engine.memory.journal import journal_key
from orch_review.errors import OrchReviewError
from orch_review.findings.records import ConcernOutcome

MAX_NEW_CONCERNS = 10


def _parse(tool_input: Mapping[str, Any]) -> list[str]:
    if not tool_input.get("concerns"):
        return []  # nothing was missed: a valid answer
    concerns = parse_subtasks({"subtasks": tool_input.get("concerns")})
    if len(concerns) > MAX_NEW_CONCERNS:
        raise ToolInputError(f"propose at most {MAX_NEW_CONCERNS} concerns, the most important")
    return concerns


@dataclass(frozen=True, slots=True)
class CriticRun:
    """The concerns the critic added (their outcomes), or why the critic failed."""

    outcomes: list[ConcernOutcome] = field(default_factory=list)
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class _Proposal:
    queued: list[Future[ConcernOutcome]] = field(default_factory=list)
    failure: str | None = None


class Critic:
    """The critic of one review: :meth:`start` it with the first concern list, :meth:`wait_queued`
    before deciding what is left uncovered, :meth:`finish` for its concerns' outcomes."""

    def __init__(
        self, session: Session, workflow: Workflow, scope_summary: str, guidance: str = ""
    ) -> None:
        self._session = session
        self._workflow = workflow
        self._scope_summary = scope_summary
        self._guidance = guidance
        self._lock = threading.Lock()
        self._proposal: Future[_Proposal] | None = None

    @property
    def started(self) -> bool:
        """Whether the critic was given a concern list."""
        with self._lock:
            return self._proposal is not None

    def start(self, concerns: Sequence[str]) -> None:
        """Queue the critic on the pool with ``concerns``; later lists are ignored."""
        if not concerns:
            return
        with self._lock:
            if self._proposal is None:
                self._proposal = self._session.pool.submit(
                    CRITIC, partial(self._propose, list(concerns))
                )

    def wait_queued(self) -> None:
        """Return once the critic's own concerns are queued (or it failed or never started)."""
        with self._lock:
            proposal = self._proposal
        if proposal is not None:
            with contextlib.suppress(CancelledError):
                proposal.exception()

    def finish(self) -> CriticRun:
        """Wait for the critic's concerns; a critic that could not run or report is a failure,
        never silence."""
        with self._lock:
            proposal = self._proposal
        if proposal is None:
            return CriticRun()
        try:
            done = waiting.result(proposal)
        except CancelledError:
            return CriticRun(failure="the completeness critic did not run: interrupted")
        return CriticRun(self._workflow.collect(done.queued), done.failure)

    def _propose(self, concerns: list[str]) -> _Proposal:
        """Run the critic agent (or reuse its journaled answer) and queue its concerns."""
        session = self._session
        config = session.config
        task = critic_task(concerns, self._scope_summary, self._guidance)
        key = journal_key(
            "critic",
            TOOLS_VERSION,
            config.model,
            config.effort,
            config.subagent_max_turns,
            session.toolset,
            CRITIC_SYSTEM,
            task,
            session.workspace.content_key(""),
        )
        stored = session.journal.get(key)
        if stored is None:
            if session.cancel.is_set():
                return _Proposal(failure="the completeness critic did not run: interrupted")
            if not session.budget.start_agent("critic"):
                reason = session.budget.report().cap_reached or "budget reached"
                return _Proposal(failure=f"the completeness critic did not run: {reason}")
            try:
                proposed = self._run_agent(task)
            except OrchReviewError as exc:
                session.emit("critic", "critic", "completeness critic", "failed", str(exc))
                return _Proposal(failure=f"the completeness critic failed: {exc}")
            if isinstance(proposed, str):
                session.emit("critic", "critic", "completeness critic", "failed", proposed)
                return _Proposal(failure=f"the completeness critic failed: {proposed}")
            stored = {"concerns": proposed}
            session.journal.put(key, "critic", stored)
            session.emit("critic", "critic", "completeness critic", "done", f"{len(proposed)} new")
        else:
            session.budget.reused("critic")
        new = [c for c in stored["concerns"] if self._workflow.refusal(c) is None]
        return _Proposal(self._workflow.start(new) if new else [])

    def _run_agent(self, task: str) -> list[str] | str:
        """The critic's proposed concerns, or why it gave none."""
        session = self._session
        config = session.config
        session.emit("critic", "critic", "completeness critic", "started")
        agent = gated_session(session, "critic", -1)
        with agent.agent_tools() as looking:
            shell = agent.has_shell
            loop: AgentLoop[list[str]] = AgentLoop(
                client=agent.client,
                budget=session.budget,
                role="critic",
                model=config.model,
                system=system_prompt(CRITIC_SYSTEM, shell),
                tools=(*looking.definitions, described(REPORT_CONCERNS_TOOL, shell)),
                max_turns=config.subagent_max_turns,
                bash=looking.bash,
                handlers=looking.handlers,
                terminal=Terminal("report_concerns", _parse, CRITIC_TURN_LIMIT_NOTE),
                events=session.events,
                agent_id="critic",
                label="completeness critic",
                cancel=session.cancel,
            )
            run = loop.run([{"role": "user", "content": task}])
        if run.result is None:
            return run.note or "it ended without calling report_concerns"
        return run.result
