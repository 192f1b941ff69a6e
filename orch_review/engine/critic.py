"""The completeness critic: after the first wave, hunt for what nobody covered.

One agent with the same tools receives the concerns that were reviewed and the findings that
survived, checks the content with bash, and proposes new self-contained concerns; those run
as a second fan-out through the same Workflow (journaled, verified like the first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from orch_review.engine.agent import AgentLoop, Terminal
from orch_review.engine.bash import BASH_TOOL
from orch_review.engine.journal import journal_key
from orch_review.engine.prompts import CRITIC_SYSTEM, CRITIC_TURN_LIMIT_NOTE, critic_task
from orch_review.engine.session import Session
from orch_review.engine.tools import REPORT_CONCERNS_TOOL, TOOLS_VERSION, ToolInputError
from orch_review.engine.workflow import Workflow, parse_subtasks
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


def run_critic(
    session: Session, workflow: Workflow, scope_summary: str, guidance: str = ""
) -> CriticRun:
    """Ask the critic for uncovered concerns and review them. A critic that ends without
    its report (after one reminder and a forced final turn) is a failure, never silence."""
    reviewed = list(workflow.outcomes)
    if not reviewed:
        return CriticRun()
    confirmed = [
        f"{f.severity.value} {f.location}: {f.claim}"
        for outcome in reviewed
        for f in outcome.findings
        if f.verdict is not None and f.verdict.confirmed
    ]
    task = critic_task([o.concern for o in reviewed], confirmed, scope_summary, guidance)
    config = session.config
    key = journal_key(
        "critic",
        TOOLS_VERSION,
        config.model,
        config.effort,
        task,
        session.workspace.content_key(""),
    )
    stored = session.journal.get(key)
    if stored is None:
        if not session.ledger.start_agent("critic"):
            reason = session.ledger.report().cap_reached or "budget reached"
            return CriticRun(failure=f"the completeness critic did not run: {reason}")
        session.emit("critic", "critic", "completeness critic", "started")
        with session.bash_session() as bash:
            loop: AgentLoop[list[str]] = AgentLoop(
                client=session.client,
                ledger=session.ledger,
                role="critic",
                model=config.model,
                system=CRITIC_SYSTEM,
                tools=(BASH_TOOL, REPORT_CONCERNS_TOOL),
                max_turns=config.subagent_max_turns,
                bash=bash,
                terminal=Terminal("report_concerns", _parse, CRITIC_TURN_LIMIT_NOTE),
                events=session.events,
                agent_id="critic",
                label="completeness critic",
            )
            run = loop.run([{"role": "user", "content": task}])
        if run.result is None:
            why = run.note or "it ended without calling report_concerns"
            session.emit("critic", "critic", "completeness critic", "failed", why)
            return CriticRun(failure=f"the completeness critic failed: {why}")
        stored = {"concerns": run.result}
        session.journal.put(key, "critic", stored)
        session.emit("critic", "critic", "completeness critic", "done", f"{len(run.result)} new")
    else:
        session.ledger.reused("critic")
    new = [c for c in stored["concerns"] if workflow.refusal(c) is None]
    return CriticRun(workflow.run(new) if new else [])
