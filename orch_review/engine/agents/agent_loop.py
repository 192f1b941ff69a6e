"""One agent's loop: request, run the tools it asked for, feed results back, until done.

Subagents and verifiers end by calling a *terminal* tool (``report_findings`` or
``report_verdicts``) whose validated input is their result; the main agent ends with text.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from orch_review.engine.agents.prompts import FINAL_TURN_NOTE, TRUNCATION_NOTE
from orch_review.engine.agents.tools import ToolInputError
from orch_review.engine.api.budget import Budget
from orch_review.engine.api.client import Completer, Reply
from orch_review.engine.shell.bash import BashSession, handle_tool_call
from orch_review.engine.shell.read_tools import ToolHandler
from orch_review.events import AgentEvent, EventSink
from orch_review.wording import counted

_T = TypeVar("_T")

MAX_RESTARTS = 1  # after a refusal
MAX_CUT_OFF_RETRIES = 1  # after a tool call cut off at the output limit
CUT_OFF_NOTE = (
    "Your call to `{name}` was cut off at the output token limit, so it was not run. Send it "
    "again, smaller: a shorter input, or the work split over several calls."
)
INTERRUPTED_NOTE = "Not run: the review was interrupted."
EMPTY_REPLY_NOTE = "Your last reply was empty, so it was left out. Continue from here."
BUNDLED_REPORT_ERROR = (
    "{name} was not recorded: it came in the same turn as other tool calls, before you could "
    "read their results. Read them, then call {name} on its own."
)


@dataclass(frozen=True, slots=True)
class Terminal(Generic[_T]):
    """The tool that ends an agent, its parser, and what to say at the turn limit."""

    name: str
    parse: Callable[[Mapping[str, Any]], _T]
    turn_limit_note: str


@dataclass(slots=True)
class AgentRun(Generic[_T]):
    """What an agent produced."""

    result: _T | None = None
    text: str = ""
    turns: int = 0
    tokens: int = 0
    note: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)


# A request (the messages and tool choice it was sent with) and the reply it got.
_Answer = tuple[list[dict[str, Any]], Mapping[str, Any] | None, Reply]
# What the loop does after a reply: ask again, return the run, or stop asking.
_Step = Literal["next", "done", "stop"]


@dataclass(slots=True)
class _LoopState:
    """What one :meth:`AgentLoop.run` keeps from turn to turn."""

    task_length: int  # messages of the task itself: a restart keeps these
    started: float
    refusals: int = 0
    cut_offs: int = 0
    reminded: bool = False  # told once to call the terminal tool
    forced: bool = False  # the next turn must call it
    # The replies of this attempt, and of those a refusal ended: a restart is answered
    # from them while it asks what they answered (a reply cut off at the output limit
    # included), so that it pays only from the refused turn on.
    answered: list[_Answer] = field(default_factory=list)
    earlier: list[_Answer] = field(default_factory=list)


class AgentLoop(Generic[_T]):
    """Runs one agent to completion with the given tools."""

    def __init__(
        self,
        *,
        client: Completer,
        budget: Budget,
        role: str,
        model: str,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        max_turns: int,
        bash: BashSession | None,
        handlers: Mapping[str, ToolHandler] | None = None,
        terminal: Terminal[_T] | None = None,
        events: EventSink | None = None,
        agent_id: str = "",
        label: str = "",
        cancel: threading.Event | None = None,
    ) -> None:
        """``cancel``, once set, keeps the agent's tools from running: a reply that lands
        after an interruption yields its report, if it is one, and nothing else."""
        self._client = client
        self._cancel = cancel
        self._budget = budget
        self._role = role
        self._model = model
        self._system = system
        self._tools = list(tools)
        self._max_turns = max_turns
        self._bash = bash
        self._handlers = dict(handlers or {})
        self._terminal = terminal
        self._events = events
        self._agent_id = agent_id
        self._label = label

    def _emit(self, state: str, run: AgentRun[_T], detail: str = "") -> None:
        if self._events is not None:
            self._events(
                AgentEvent(
                    self._agent_id, self._role, self._label, state, run.turns, run.tokens, detail
                )
            )

    def run(
        self,
        messages: list[dict[str, Any]],
        before_request: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> AgentRun[_T]:
        """Loop until the terminal tool is called, the model ends, or the turn limit.

        Whatever the model sends, the conversation stays one the API accepts: empty replies
        are left out, every tool call sent back gets its result, a call cut off at the output
        limit is dropped and the model told to resend it smaller (once), and a refused turn
        is removed with everything after the task (one restart).
        """
        run: AgentRun[_T] = AgentRun(messages=messages)
        loop = _LoopState(task_length=len(messages), started=time.monotonic())
        if self._bash is not None:
            self._bash.start()  # ready by the time the model asks for its first command
        while run.turns < self._max_turns:
            reply = self._next_reply(loop, run, messages, before_request)
            if reply.stop_reason == "refusal":
                step = self._restart(loop, run, messages)
            else:
                step = self._take_reply(reply, loop, run, messages)
            if step == "done":
                return run
            if step == "stop":
                break
        return self._ended(loop, run)

    def _next_reply(
        self,
        loop: _LoopState,
        run: AgentRun[_T],
        messages: list[dict[str, Any]],
        before_request: Callable[[list[dict[str, Any]]], None] | None,
    ) -> Reply:
        """The model's next reply (forced to the terminal tool on the last turn, or after a
        reminder), given again from an earlier attempt when it answered the same request;
        its usage counted."""
        last_turn = run.turns == self._max_turns - 1
        tool_choice = None
        if (last_turn or loop.forced) and self._terminal is not None:
            name = self._terminal.name
            note = self._terminal.turn_limit_note if last_turn else FINAL_TURN_NOTE
            self._append_user_text(messages, note.replace("{tool}", name))
            tool_choice = {"type": "tool", "name": name}
        if before_request is not None:
            before_request(messages)
        reply = _replay(loop.earlier, messages, tool_choice)
        if reply is None:
            reply = self._client.complete(
                model=self._model,
                system=self._system,
                tools=self._tools,
                messages=messages,
                tool_choice=tool_choice,
            )
            run.turns += 1  # a reply given again costs no turn
        if reply.stop_reason != "refusal":
            loop.answered.append((list(messages), tool_choice, reply))
        if not reply.replayed:
            usage = self._budget.record(
                self._role,
                self._model,
                reply.input_tokens,
                reply.output_tokens,
                reply.cache_write_tokens,
                reply.cache_read_tokens,
            )
            run.tokens += usage.total_tokens
        self._emit("turn", run, f"{time.monotonic() - loop.started:.0f}s")
        return reply

    def _restart(
        self, loop: _LoopState, run: AgentRun[_T], messages: list[dict[str, Any]]
    ) -> _Step:
        """After a refused turn. Continuing after a refusal only brings more: the API's
        guidance is to drop the refused turn. Start over from the task, once."""
        loop.refusals += 1
        if loop.refusals > MAX_RESTARTS:
            run.note = "the model refused the task (stop_reason `refusal`) twice"
            return "done"
        del messages[loop.task_length :]
        loop.earlier += loop.answered
        loop.answered = []
        loop.cut_offs, loop.reminded, loop.forced = 0, False, False
        return "next"

    def _take_reply(
        self, reply: Reply, loop: _LoopState, run: AgentRun[_T], messages: list[dict[str, Any]]
    ) -> _Step:
        """Add ``reply`` to the conversation and run the tools it calls."""
        content = _sendable(reply.content)
        if content:
            messages.append({"role": "assistant", "content": content})
        if reply.cut_off:
            loop.cut_offs += 1
            if loop.cut_offs > MAX_CUT_OFF_RETRIES:
                run.note = "its tool calls were cut off at the output token limit twice"
                return "done"
        uses = [b for b in content if b.get("type") == "tool_use"]
        if uses:
            alone = len(uses) + len(reply.cut_off) == 1
            messages.append({"role": "user", "content": self._run_tools(uses, alone, run)})
        for name in reply.cut_off:
            self._append_user_text(messages, CUT_OFF_NOTE.format(name=name))
        if run.result is not None:
            run.text = reply.text
            return "done"
        if reply.cut_off:
            return "next"
        if uses:
            if reply.stop_reason == "max_tokens":
                self._append_user_text(messages, TRUNCATION_NOTE)
            return "stop" if loop.forced else "next"
        return self._without_tool_calls(reply, bool(content), loop, run, messages)

    def _without_tool_calls(
        self,
        reply: Reply,
        has_content: bool,
        loop: _LoopState,
        run: AgentRun[_T],
        messages: list[dict[str, Any]],
    ) -> _Step:
        """A reply that called no tool: the main agent's answer, or a subagent to remind of
        its report tool (once; the next time the tool is forced, then it stops)."""
        if not has_content:
            self._append_user_text(messages, EMPTY_REPLY_NOTE)
            return "next"
        if reply.stop_reason == "pause_turn":
            return "next"  # the content sent back lets the model resume
        if reply.stop_reason == "max_tokens":
            self._append_user_text(messages, TRUNCATION_NOTE)
            return "next"
        if self._terminal is not None:
            if loop.forced:
                return "stop"
            loop.forced, loop.reminded = loop.reminded, True
            if not loop.forced:
                self._append_user_text(
                    messages, f"You have not called {self._terminal.name} yet. Call it now."
                )
            return "next"
        run.text = reply.text
        return "done"

    def _ended(self, loop: _LoopState, run: AgentRun[_T]) -> AgentRun[_T]:
        """The run, with why it ended without a result: the turn limit, or a forced final
        turn that still did not call the terminal tool."""
        if loop.forced and run.turns < self._max_turns:
            run.note = (
                f"ended without calling {self._terminal.name if self._terminal else 'its report'}"
                " after a reminder and a final turn that required it"
            )
            return run
        run.note = f"stopped at the turn limit ({counted(self._max_turns, 'turn')})"
        return run

    def _run_tools(
        self, uses: list[dict[str, Any]], alone: bool, run: AgentRun[_T]
    ) -> list[dict[str, Any]]:
        results = []
        for use in uses:
            terminal = self._terminal is not None and use["name"] == self._terminal.name
            if not alone and terminal:
                text, is_error = BUNDLED_REPORT_ERROR.format(name=use["name"]), True
            elif not terminal and self._cancel is not None and self._cancel.is_set():
                text, is_error = INTERRUPTED_NOTE, True  # no request would carry the result
            else:
                text, is_error = self._run_tool(use["name"], use.get("input") or {}, run)
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": use["id"],
                "content": text,
            }
            if is_error:
                block["is_error"] = True
            results.append(block)
        return results

    def _run_tool(self, name: str, tool_input: Any, run: AgentRun[_T]) -> tuple[str, bool]:
        if not isinstance(tool_input, Mapping):
            return "tool input must be a JSON object", True
        if self._terminal is not None and name == self._terminal.name:
            if run.result is not None:
                return f"{name} was already called; your first report stands.", True
            try:
                run.result = self._terminal.parse(tool_input)
            except ToolInputError as exc:
                return f"{name} was not recorded: {exc}. Fix it and call {name} again.", True
            return "Recorded. Your work is done.", False
        if name == "bash" and self._bash is not None:
            outcome = handle_tool_call(self._bash, tool_input)
            return outcome.text, outcome.is_error
        handler = self._handlers.get(name)
        if handler is None:
            return f"unknown tool `{name}`", True
        return handler(tool_input)

    @staticmethod
    def _append_user_text(messages: list[dict[str, Any]], text: str) -> None:
        """Add text to the trailing user turn, or start one (roles must alternate)."""
        block = {"type": "text", "text": text}
        if messages and messages[-1]["role"] == "user":
            content = messages[-1]["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            messages[-1] = {"role": "user", "content": [*content, block]}
        else:
            messages.append({"role": "user", "content": [block]})


def _replay(
    earlier: list[_Answer],
    messages: list[dict[str, Any]],
    tool_choice: Mapping[str, Any] | None,
) -> Reply | None:
    """The reply an earlier attempt got to this very request, marked as given again."""
    for asked, choice, reply in earlier:
        if choice == tool_choice and asked == messages:
            return dataclasses.replace(reply, replayed=True)
    return None


def _sendable(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``content`` without the blocks the API refuses to take back (whitespace-only text)."""
    return [b for b in content if b.get("type") != "text" or str(b.get("text") or "").strip()]
