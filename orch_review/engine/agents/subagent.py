"""The two fan-out roles: a subagent reviews one concern, a verifier attacks its findings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from orch_review.engine.agents.agent_loop import AgentLoop, Terminal
from orch_review.engine.agents.prompts import (
    SUBAGENT_SYSTEM,
    SUBAGENT_TURN_LIMIT_NOTE,
    VERIFIER_SYSTEM,
    VERIFIER_TURN_LIMIT_NOTE,
    subagent_task,
    system_prompt,
    verifier_task,
)
from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.tools import (
    REPORT_FINDINGS_TOOL,
    REPORT_VERDICTS_TOOL,
    ReportedFindings,
    described,
    parse_findings,
    parse_verdicts,
)
from orch_review.errors import OrchReviewError
from orch_review.findings.records import Finding, Verdict
from orch_review.wording import counted

_T = TypeVar("_T")


class AgentFailed(OrchReviewError):
    """An agent ended without its structured report."""


def run_subagent(
    session: Session, agent_id: str, concern: str, guidance: str = "", shown: str = ""
) -> ReportedFindings:
    """Review one concern; raises :class:`OrchReviewError` when it produced no report.
    ``shown``: the files it names, for its task (``engine.inline``)."""

    def parse(tool_input: Mapping[str, Any]) -> ReportedFindings:
        workspace = session.workspace
        return parse_findings(tool_input, concern, workspace.line_count, workspace.canonical_path)

    terminal = Terminal("report_findings", parse, SUBAGENT_TURN_LIMIT_NOTE)
    result = run_agent(
        session,
        agent_id,
        "subagent",
        concern,
        SUBAGENT_SYSTEM,
        REPORT_FINDINGS_TOOL,
        subagent_task(concern, guidance, shown),
        terminal,
    )
    return result


def run_verifier(
    session: Session,
    agent_id: str,
    concern: str,
    findings: Sequence[Finding],
    guidance: str = "",
) -> dict[int, Verdict]:
    """Try to refute ``findings``; returns a verdict per 1-based finding number."""

    fixes = {n for n, f in enumerate(findings, 1) if f.replacement is not None}

    def parse(tool_input: Mapping[str, Any]) -> dict[int, Verdict]:
        return parse_verdicts(tool_input, len(findings), fixes)

    terminal = Terminal("report_verdicts", parse, VERIFIER_TURN_LIMIT_NOTE)
    return run_agent(
        session,
        agent_id,
        "verifier",
        concern,
        VERIFIER_SYSTEM,
        REPORT_VERDICTS_TOOL,
        verifier_task(concern, findings, guidance, shell=session.has_shell),
        terminal,
    )


def run_agent(
    session: Session,
    agent_id: str,
    role: str,
    label: str,
    system: str,
    report: dict[str, Any],
    task: str,
    terminal: Terminal[_T],
) -> _T:
    """Run one agent: the tools it looks with (bash, or the read-only tools), ``report``
    its terminal tool; prompts and descriptions worded for what it is offered."""

    def stop_if_cancelled(_: list[dict[str, Any]]) -> None:
        # After an interruption the snapshot may be gone: tool results can no longer be
        # trusted, so no request goes out with them (and no result is journaled).
        if session.cancel.is_set():
            raise AgentFailed("interrupted")

    session.emit(agent_id, role, label, "started")
    try:
        with session.agent_tools() as looking:
            shell = session.has_shell
            loop = AgentLoop(
                client=session.client,
                budget=session.budget,
                role=role,
                model=session.config.agent_model,
                system=system_prompt(system, shell),
                tools=(*looking.definitions, described(report, shell)),
                max_turns=session.config.subagent_max_turns,
                bash=looking.bash,
                handlers=looking.handlers,
                terminal=terminal,
                events=session.events,
                agent_id=agent_id,
                label=label,
                cancel=session.cancel,
            )
            run = loop.run([{"role": "user", "content": task}], before_request=stop_if_cancelled)
    except OrchReviewError as exc:  # the agent's one "failed" event, whatever failed
        session.emit(agent_id, role, label, "failed", str(exc))
        raise
    if run.result is None:
        reason = f"the {role} did not call {terminal.name} ({run.note or 'it ended early'})"
        session.emit(agent_id, role, label, "failed", reason)
        raise AgentFailed(reason)
    session.emit(agent_id, role, label, "done", counted(run.turns, "turn"))
    return run.result
