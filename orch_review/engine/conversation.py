"""The review conversation, kept with the journal so follow-up questions can continue it.

``orch-review ask`` and ``chat`` resume the main agent's conversation exactly as it was sent
(so its prefix is still cached), with orchestration mode switched off unless asked for.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from orch_review.engine.journal import JournalLike
from orch_review.engine.main_agent import MainResult
from orch_review.engine.mode import ModeState
from orch_review.errors import OrchReviewError

CONVERSATION_KEY = "conversation:last-review"


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
        """Inverse of :meth:`to_json`."""
        return cls(
            data["messages"],
            ModeState.from_json(data["mode"]),
            data["snapshot_commit"],
            data["scope"],
            base64.b64decode(data.get("snapshot_objects", "")),
        )


def save_conversation(
    journal: JournalLike, main: MainResult, commit: str, scope: str, objects: bytes = b""
) -> None:
    """Keep the review's conversation, and the commit of the content it was about (with
    ``objects``, the pack of what the review made of it), for follow-up questions."""
    conversation = Conversation(main.messages, main.mode, commit, scope, objects)
    journal.put(CONVERSATION_KEY, "conversation", conversation.to_json())


def update_conversation(journal: JournalLike, before: Conversation, after: MainResult) -> None:
    """Store the conversation after a follow-up turn."""
    conversation = Conversation(
        after.messages, after.mode, before.snapshot_commit, before.scope, before.snapshot_objects
    )
    journal.put(CONVERSATION_KEY, "conversation", conversation.to_json())


def load_conversation(journal: JournalLike) -> Conversation:
    """The last review's conversation; a clear error when there is none."""
    stored = journal.get(CONVERSATION_KEY)
    if stored is None:
        raise NoConversation(
            "there is no review to ask about in this repository's journal: run `orch-review` "
            "first (with the journal enabled)."
        )
    return Conversation.from_json(stored)
