"""The review conversation, kept with the journal so follow-up questions can continue it.

``orch-review ask`` and ``chat`` resume the main agent's conversation exactly as it was sent
(so its prefix is still cached), with orchestration mode switched off unless asked for.
"""

from __future__ import annotations

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

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form for the journal."""
        return {
            "messages": self.messages,
            "mode": self.mode.to_json(),
            "snapshot_commit": self.snapshot_commit,
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
        )


def save_conversation(journal: JournalLike, main: MainResult, commit: str, scope: str) -> None:
    """Keep the review's conversation, and the commit of the content it was about, for
    follow-up questions."""
    conversation = Conversation(main.messages, main.mode, commit, scope)
    journal.put(CONVERSATION_KEY, "conversation", conversation.to_json())


def update_conversation(journal: JournalLike, before: Conversation, after: MainResult) -> None:
    """Store the conversation after a follow-up turn."""
    conversation = Conversation(after.messages, after.mode, before.snapshot_commit, before.scope)
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
