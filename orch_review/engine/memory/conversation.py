"""The review conversation, kept with the journal so follow-up questions can continue it.

``orch-review ask`` and ``chat`` resume the main agent's conversation exactly as it was sent
(so its prefix is still cached), with orchestration mode switched off unless asked for.

There is one conversation per working tree (linked worktrees share a journal, not their
reviews). A stored conversation is trusted like any journal entry (signed by orch-review with
this credential's key), and must have the shape orch-review writes: user and assistant turns
with the blocks it sends back, and system turns that are exactly its mode notices.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orch_review.engine.agents.main_agent import MainResult
from orch_review.engine.agents.orchestration_mode import ModeState
from orch_review.engine.agents.prompts import MODE_ENTER, MODE_EXIT, MODE_REFRESH, without_shell
from orch_review.engine.memory.journal import JournalLike, NullJournal, journal_key
from orch_review.errors import OrchReviewError

# As sent to agents with a shell, and to those with the read-only tools.
_SYSTEM_TEXTS = frozenset(
    text for mode in (MODE_ENTER, MODE_EXIT, MODE_REFRESH) for text in (mode, without_shell(mode))
)
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Each block type orch-review sends back, with the keys it may have and their types.
_BLOCKS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "text": {"text": str},
    "tool_use": {"id": str, "name": str, "input": dict},
    "tool_result": {"tool_use_id": str, "content": str, "is_error": bool},
    "thinking": {"thinking": str, "signature": str},
    "redacted_thinking": {"data": str},
}
_REQUIRED = {"text": {"text"}, "tool_use": {"id", "name", "input"}, "tool_result": {"tool_use_id"}}
_ROLE_BLOCKS = {
    "user": frozenset({"text", "tool_result"}),
    "assistant": frozenset({"text", "tool_use", "thinking", "redacted_thinking"}),
}


def conversation_key(work_tree: Path) -> str:
    """The journal key of the conversation of the last review in ``work_tree``."""
    return "conversation:" + journal_key("work tree", str(work_tree.resolve()))


class NoConversation(OrchReviewError):
    """There is no stored review to continue."""


@dataclass(frozen=True)
class Conversation:
    """The main agent's messages, its mode, and the content it was about."""

    messages: list[dict[str, Any]]
    mode: ModeState
    snapshot_commit: str
    scope: str
    # A pack of the objects the review made for its content (a working copy's tree, its
    # commit): they live in no repository once the review is over.
    snapshot_objects: bytes = b""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form for the journal."""
        return {
            "messages": self.messages,
            "mode": self.mode.to_json(),
            "snapshot_commit": self.snapshot_commit,
            "snapshot_objects": base64.b64encode(self.snapshot_objects).decode("ascii"),
            "scope": self.scope,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Conversation:
        """Inverse of :meth:`to_json`; raises ValueError unless it has the shape orch-review
        writes."""
        if not isinstance(data, dict):
            raise ValueError("the conversation is not an object")
        messages = data.get("messages")
        check_messages(messages)
        mode, commit, scope = data.get("mode"), data.get("snapshot_commit"), data.get("scope")
        if not isinstance(mode, dict) or not isinstance(scope, str):
            raise ValueError("the conversation's mode or scope is malformed")
        if not isinstance(commit, str) or not _COMMIT.fullmatch(commit):
            raise ValueError("the conversation's commit is not a commit id")
        objects = data.get("snapshot_objects", "")
        if not isinstance(objects, str):
            raise ValueError("the conversation's objects are malformed")
        try:
            state = ModeState.from_json(mode)
            pack = base64.b64decode(objects, validate=True)
        except (KeyError, TypeError, ValueError, binascii.Error):
            raise ValueError("the conversation's mode or objects are malformed") from None
        assert isinstance(messages, list)
        return cls(messages, state, commit, scope, pack)


def check_messages(messages: object) -> None:
    """Raise ValueError unless ``messages`` are turns as orch-review writes them."""
    if not isinstance(messages, list):
        raise ValueError("the conversation has no messages")
    for number, message in enumerate(messages, 1):
        if not isinstance(message, Mapping) or set(message) != {"role", "content"}:
            raise ValueError(f"message {number} is malformed")
        role, content = message["role"], message["content"]
        if not isinstance(role, str):
            raise ValueError(f"message {number} is malformed")
        if role == "system":
            if not isinstance(content, str) or content not in _SYSTEM_TEXTS:
                raise ValueError(f"message {number} is a system turn orch-review did not write")
            continue
        if role not in _ROLE_BLOCKS:
            raise ValueError(f"message {number} has the role {str(role)[:20]!r}")
        if isinstance(content, str):
            if role != "user":
                raise ValueError(f"message {number} is malformed")
            continue
        if not isinstance(content, list) or not content:
            raise ValueError(f"message {number} is malformed")
        for block in content:
            _check_block(block, _ROLE_BLOCKS[role], number)


def _check_block(block: object, allowed: frozenset[str], number: int) -> None:
    kind = block.get("type") if isinstance(block, Mapping) else None
    if not isinstance(kind, str) or kind not in allowed:
        raise ValueError(f"message {number} has a block orch-review does not send")
    assert isinstance(block, Mapping)
    fields = _BLOCKS[kind]
    if not set(block) - {"type"} <= set(fields) or not _REQUIRED.get(kind, set()) <= set(block):
        raise ValueError(f"message {number} has a malformed {kind} block")
    if not all(isinstance(block[k], fields[k]) for k in block if k != "type"):
        raise ValueError(f"message {number} has a malformed {kind} block")


def save_conversation(
    journal: JournalLike,
    main: MainResult,
    commit: str,
    scope: str,
    objects: Callable[[], bytes] = bytes,
    *,
    work_tree: Path,
) -> None:
    """Keep the review's conversation, and the commit of the content it was about (with
    ``objects()``, the pack of what the review made of it), for follow-up questions in
    ``work_tree``."""
    if isinstance(journal, NullJournal):
        return  # nowhere to keep it: the pack (a tree as wide as a directory) is not made
    conversation = Conversation(main.messages, main.mode, commit, scope, objects())
    journal.put(conversation_key(work_tree), "conversation", conversation.to_json())


def update_conversation(
    journal: JournalLike, before: Conversation, after: MainResult, *, work_tree: Path
) -> None:
    """Store the conversation after a follow-up turn."""
    conversation = Conversation(
        after.messages, after.mode, before.snapshot_commit, before.scope, before.snapshot_objects
    )
    journal.put(conversation_key(work_tree), "conversation", conversation.to_json())


def load_conversation(journal: JournalLike, work_tree: Path) -> Conversation:
    """The conversation of the last review in ``work_tree``; a clear error when there is none
    or the stored one cannot be trusted."""
    stored = journal.get(conversation_key(work_tree))
    if stored is None:
        if journal.trust_notes():
            raise NoConversation(
                "the journal's conversation was not written by this version of orch-review "
                "with this credential (another credential, or forged), so it was ignored: run "
                "`orch-review` again, then ask."
            )
        raise NoConversation(
            "there is no review to ask about in this working tree's journal: run `orch-review` "
            "first (with the journal enabled)."
        )
    try:
        return Conversation.from_json(stored)
    except ValueError as exc:
        raise NoConversation(
            f"the stored conversation is not one orch-review wrote ({exc}): run `orch-review` "
            "again, then ask."
        ) from None
