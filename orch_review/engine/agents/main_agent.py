"""The main agent: orchestration mode on, scouting with bash, fanning out through Workflow.

Its turns are journaled too, keyed by the full request, so a rerun of an interrupted review
replays the main conversation from the journal instead of paying for it again.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from orch_review.engine.agents.agent_loop import AgentLoop
from orch_review.engine.agents.orchestration_mode import ModeState, system_message
from orch_review.engine.agents.prompts import (
    MAIN_SYSTEM,
    MODE_EXIT,
    READ_TOOL_NAMES,
    system_prompt,
    without_shell,
)
from orch_review.engine.agents.review_session import AgentTools, Session
from orch_review.engine.agents.tools import TOOLS_VERSION, workflow_tool
from orch_review.engine.agents.workflow import Workflow
from orch_review.engine.api.client import Reply
from orch_review.engine.memory.journal import journal_key
from orch_review.engine.shell.bash import BASH_TOOL
from orch_review.engine.shell.read_tools import READ_TOOLS
from orch_review.errors import BudgetExceeded
from orch_review.wording import counted


class ConversationHash:
    """A hash chain over a growing conversation: each message is serialized once.

    Link ``i`` is SHA-256 of link ``i - 1`` and the canonical JSON of message ``i``, so the
    last link stands for the whole list. Messages are matched by identity with the ones
    already hashed: the agent loop appends messages and may replace the last one, but never
    changes a message in place.
    """

    def __init__(self) -> None:
        self._messages: list[Mapping[str, Any]] = []  # kept alive, so identities stay unique
        self._links: list[str] = []

    def digest(self, messages: Sequence[Mapping[str, Any]]) -> str:
        """Hex digest standing for ``messages``."""
        same = 0
        for mine, theirs in zip(self._messages, messages, strict=False):
            if mine is not theirs:
                break
            same += 1
        del self._messages[same:], self._links[same:]
        link = self._links[-1] if self._links else ""
        for message in messages[same:]:
            link = hashlib.sha256((link + journal_key(message)).encode()).hexdigest()
            self._messages.append(message)
            self._links.append(link)
        return link


class JournaledClient:
    """Wraps the session's client: replays a stored reply for an identical request."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._conversation = ConversationHash()

    def complete(
        self,
        *,
        model: str,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        tool_choice: Mapping[str, Any] | None = None,
    ) -> Reply:
        """Same contract as :meth:`ModelClient.complete`; replayed replies cost nothing."""
        session = self._session
        key = journal_key(
            "main",
            TOOLS_VERSION,
            model,
            session.config.effort,
            system,
            list(tools),
            self._conversation.digest(messages),
            tool_choice,
            session.workspace.content_key(""),
        )
        stored = session.journal.get(key)
        if stored is not None:
            cut_off = tuple(stored.get("cut_off") or ())
            return Reply(
                stored["content"], stored["stop_reason"], 0, 0, 0, 0, True, cut_off=cut_off
            )
        reply = session.client.complete(
            model=model, system=system, tools=tools, messages=messages, tool_choice=tool_choice
        )
        if reply.stop_reason != "refusal":  # replaying a refusal would defeat the restart
            session.journal.put(
                key,
                "main",
                {
                    "content": reply.content,
                    "stop_reason": reply.stop_reason,
                    "cut_off": list(reply.cut_off),
                },
            )
        return reply


@dataclass(frozen=True, slots=True)
class MainResult:
    """The main agent's answer, what stopped it if anything, and the conversation so far."""

    summary: str
    note: str
    messages: list[dict[str, Any]]
    mode: ModeState


def run_main_agent(session: Session, workflow: Workflow, task: str) -> MainResult:
    """Run the review conversation: one user turn with orchestration mode switched on."""
    return run_turn(session, workflow, [], ModeState().switch(True), task)


def run_turn(
    session: Session,
    workflow: Workflow,
    messages: list[dict[str, Any]],
    mode: ModeState,
    user_text: str,
    *,
    shell: bool = True,
) -> MainResult:
    """One user turn of the main conversation, in ``mode``.

    Mode changes reach the model as a system message right after the user turn (the full
    text when the mode turns on, a refresher every few turns, an exit notice once when it
    turns off); the top-level system prompt and the tools never change, so the conversation
    so far stays a cached prefix. Without ``shell`` the tools are still declared (the prefix
    holds their calls) but no command runs and Workflow is refused: for content that may only
    be read in a sandbox when there is none.

    With the mode off, Workflow is refused: no fan-out. A conversation that starts with the
    mode off (a follow-up without the review's conversation) has no prefix to keep: it is
    told the mode is off and is not offered Workflow at all.
    """
    config = session.config
    fresh = not messages
    messages = [*messages, {"role": "user", "content": user_text}]
    mode, notice = mode.on_user_turn(config.refresh_interval)
    if notice is None and fresh and not mode.enabled:
        notice = MODE_EXIT
    has_shell = session.has_shell
    if notice is not None:
        messages.append(system_message(notice if has_shell else without_shell(notice)))

    def check_budget(_: list[dict[str, Any]]) -> None:
        reason = session.budget.over_budget()
        if reason is not None:
            raise BudgetExceeded(f"The review stopped early: {reason}.")
        if session.cancel.is_set():
            raise KeyboardInterrupt

    session.emit("main", "main", "main agent", "started")
    # The read-only tools need no sandbox: only a shell is withheld without one.
    looking = session.agent_tools() if shell or not has_shell else _nothing(session)
    with looking as offered:
        handlers: dict[str, Callable[[Mapping[str, Any]], tuple[str, bool]]] = {
            **_refused(messages, offered),
            **offered.handlers,
        }
        if not shell:
            handlers["Workflow"] = _unavailable("Workflow")
        elif mode.enabled:
            handlers["Workflow"] = workflow.handle_tool_call
        else:
            handlers["Workflow"] = _mode_off if has_shell else _mode_off_no_shell
        tools = (*offered.definitions, *_declared_before(messages, offered))
        if mode.enabled or not fresh:
            tools += (workflow_tool(config.max_subtasks, config.max_concurrent, has_shell),)
        loop: AgentLoop[None] = AgentLoop(
            client=JournaledClient(session),
            budget=session.budget,
            role="main",
            model=config.model,
            system=system_prompt(MAIN_SYSTEM, has_shell),
            tools=tools,
            max_turns=config.main_max_turns,
            bash=offered.bash,
            handlers=handlers,
            events=session.events,
            agent_id="main",
            label="main agent",
            cancel=session.cancel,
        )
        try:
            run = loop.run(messages, before_request=check_budget)
        except BudgetExceeded as exc:
            session.emit("main", "main", "main agent", "failed", str(exc))
            return MainResult("", str(exc), messages, mode)
    session.emit("main", "main", "main agent", "done", counted(run.turns, "turn"))
    return MainResult(run.text, run.note, messages, mode)


def _unavailable(
    tool: str, instead: str = "answer from what you were given"
) -> Callable[[Mapping[str, Any]], tuple[str, bool]]:
    def refuse(_: Mapping[str, Any]) -> tuple[str, bool]:
        return (
            f"{tool} is not available for this answer: there is no sandbox to run it in; "
            f"{instead}.",
            True,
        )

    return refuse


@contextlib.contextmanager
def _nothing(session: Session) -> Iterator[AgentTools]:
    """No tool runs (a shell is declared, for the conversation's prefix, and refused)."""
    yield AgentTools(session.shell_tools, None, {})


# Tools an earlier turn of a stored conversation called and this session does not offer
# (a review with a shell, asked about where there is none, or the other way round): still
# declared, since the conversation holds their calls, and refused.
_EVERY_LOOKING_TOOL = (BASH_TOOL, *READ_TOOLS)


def _called_before(messages: Sequence[Mapping[str, Any]]) -> set[str]:
    return {
        str(block.get("name"))
        for message in messages
        if message.get("role") == "assistant" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, Mapping) and block.get("type") == "tool_use"
    }


def _declared_before(
    messages: Sequence[Mapping[str, Any]], offered: AgentTools
) -> tuple[dict[str, Any], ...]:
    names = {str(tool["name"]) for tool in offered.definitions}
    called = _called_before(messages)
    return tuple(t for t in _EVERY_LOOKING_TOOL if t["name"] in called - names)


def _refused(
    messages: Sequence[Mapping[str, Any]], offered: AgentTools
) -> dict[str, Callable[[Mapping[str, Any]], tuple[str, bool]]]:
    if offered.bash is not None:
        instead = "use bash instead"
    elif offered.handlers:
        instead = f"use the read-only tools ({READ_TOOL_NAMES}) instead"
    else:
        instead = "answer from what you were given"
    return {
        str(tool["name"]): _unavailable(str(tool["name"]), instead)
        for tool in (*offered.definitions, *_declared_before(messages, offered))
        if str(tool["name"]) not in offered.handlers
        and not (tool is BASH_TOOL and offered.bash is not None)
    }


def _mode_off(_: Mapping[str, Any]) -> tuple[str, bool]:
    return (
        "Workflow is not available: orchestration mode is off for this answer. Answer "
        "directly, checking facts with bash.",
        True,
    )


def _mode_off_no_shell(tool_input: Mapping[str, Any]) -> tuple[str, bool]:
    text, is_error = _mode_off(tool_input)
    return without_shell(text), is_error
