"""What a scripted "model" sees (`ModelRequest`) and what it answers (`Reply`)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

#: Tool name -> the agent role that is offered it, checked in this order.
ROLE_TOOLS = (
    ("Workflow", "main"),
    ("report_verdicts", "verifier"),
    ("report_findings", "subagent"),
    ("report_proof", "prover"),
)
#: How the main agent's system prompt starts: a follow-up that starts afresh with the mode
#: off is offered bash alone.
MAIN_PROMPT_START = "You are orch-review, a senior code reviewer."


def content_text(content: Any) -> str:
    """Flatten a string or a list of content blocks to its text (text blocks joined by newlines)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


@dataclass(frozen=True)
class ModelRequest:
    """Read-only view of one parsed request body, handed to the policy.

    The body is a deep copy, so a policy cannot alter what was recorded.
    """

    body: Mapping[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "body", copy.deepcopy(dict(self.body)))

    @property
    def model(self) -> str:
        """The requested model name."""
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The `messages` array, as sent."""
        messages = self.body.get("messages")
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The offered tool definitions, as sent."""
        tools = self.body.get("tools")
        return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []

    @cached_property
    def tool_names(self) -> frozenset[str]:
        """Names of the offered tools (custom and Anthropic-defined alike)."""
        return frozenset(str(t["name"]) for t in self.tools if "name" in t)

    def has_tool(self, name: str) -> bool:
        """Whether a tool with this name is offered."""
        return name in self.tool_names

    @property
    def role(self) -> str:
        """ "main", "verifier", "subagent" or "other", told apart by the tools offered (the
        main agent without Workflow by its system prompt)."""
        role = next((role for tool, role in ROLE_TOOLS if self.has_tool(tool)), "other")
        if role == "other" and self.system_text.startswith(MAIN_PROMPT_START):
            return "main"
        return role

    @property
    def system_text(self) -> str:
        """The top-level `system` prompt as one string."""
        return content_text(self.body.get("system", ""))

    @property
    def system_messages(self) -> list[str]:
        """Texts of the mid-conversation `{"role": "system"}` entries of `messages`."""
        return [content_text(m.get("content")) for m in self.messages if m.get("role") == "system"]

    @property
    def first_user_text(self) -> str:
        """Text of the first user message (tool results excluded)."""
        return next((content_text(m.get("content")) for m in self._user_messages()), "")

    @property
    def last_user_text(self) -> str:
        """Text of the last user message (tool results excluded)."""
        users = self._user_messages()
        return content_text(users[-1].get("content")) if users else ""

    @property
    def assistant_turns(self) -> int:
        """How many assistant messages the conversation holds."""
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    def tool_results(self) -> list[tuple[str, str, bool]]:
        """`(tool_use_id, text, is_error)` of each tool result in the last user message."""
        users = self._user_messages()
        return _tool_results([users[-1]]) if users else []

    def tool_result_texts(self) -> list[str]:
        """Texts of every tool result in the conversation, oldest first."""
        return [text for _, text, _ in _tool_results(self._user_messages())]

    def _user_messages(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("role") == "user"]


def _tool_results(messages: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, bool]]:
    results = []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                text = content_text(block.get("content", ""))
                results.append((str(block.get("tool_use_id")), text, bool(block.get("is_error"))))
    return results


@dataclass
class Reply:
    """A scripted model answer: content blocks plus the stop reason.

    Blocks are `{"type": "text", "text": ...}` or `{"type": "tool_use", "name": ..., "input":
    {...}}` (with `"cut_off": True`, only half its input is streamed); the server assigns
    tool-use ids. `stop_reason` defaults to "tool_use" when a
    tool_use block is present, else "end_turn".
    """

    blocks: list[dict[str, Any]]
    stop_reason: str | None = None

    @classmethod
    def text(cls, text: str) -> Reply:
        """A plain text answer."""
        return cls([{"type": "text", "text": text}])

    @classmethod
    def tool_use(cls, name: str, input: Mapping[str, Any], text: str | None = None) -> Reply:
        """One tool call, optionally preceded by text."""
        return cls.tool_uses([(name, input)], text=text)

    @classmethod
    def tool_uses(
        cls, calls: Iterable[tuple[str, Mapping[str, Any]]], text: str | None = None
    ) -> Reply:
        """Several (parallel) tool calls, optionally preceded by text."""
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks += [{"type": "tool_use", "name": n, "input": dict(i)} for n, i in calls]
        return cls(blocks)

    @classmethod
    def empty(cls, stop_reason: str = "end_turn") -> Reply:
        """No content at all, as models sometimes answer."""
        return cls([], stop_reason)

    @classmethod
    def refusal(cls, text: str | None = None) -> Reply:
        """A streaming-classifier refusal: `stop_reason: "refusal"`, little or no content."""
        return cls([{"type": "text", "text": text}] if text else [], "refusal")

    @classmethod
    def cut_off(cls, name: str, input: Mapping[str, Any], text: str | None = None) -> Reply:
        """A tool call the output limit cuts halfway through its input (`max_tokens`)."""
        reply = cls.tool_use(name, input, text=text)
        reply.blocks[-1]["cut_off"] = True
        reply.stop_reason = "max_tokens"
        return reply

    @property
    def effective_stop_reason(self) -> str:
        """The stop reason that will be sent."""
        if self.stop_reason is not None:
            return self.stop_reason
        has_tool_use = any(b.get("type") == "tool_use" for b in self.blocks)
        return "tool_use" if has_tool_use else "end_turn"
