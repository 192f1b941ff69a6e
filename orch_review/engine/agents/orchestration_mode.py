"""Orchestration mode as a session-level state machine.

Mode is not an API parameter: it is announced to the model by mid-conversation system
messages placed right after the user turn they apply to. The full text goes out once when
the mode turns on, a one-line refresher every ``refresh_interval`` user turns while it stays
on, and an exit notice once when it turns off. Nothing is sent when nothing changed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from orch_review.engine.agents.prompts import MODE_ENTER, MODE_EXIT, MODE_REFRESH


@dataclass(frozen=True, slots=True)
class ModeState:
    """Whether the mode is on, whether the model has been told, and turns since it was."""

    enabled: bool = False
    announced: bool = False
    turns_since_notice: int = 0

    def switch(self, enabled: bool) -> ModeState:
        """The state after the user turns the mode on or off."""
        return replace(self, enabled=enabled)

    def on_user_turn(self, refresh_interval: int) -> tuple[ModeState, str | None]:
        """Advance by one user turn; returns the new state and the system text to insert."""
        if self.enabled and not self.announced:
            return ModeState(True, True, 0), MODE_ENTER
        if self.enabled:
            turns = self.turns_since_notice + 1
            if turns >= refresh_interval:
                return ModeState(True, True, 0), MODE_REFRESH
            return ModeState(True, True, turns), None
        if self.announced:
            return ModeState(False, False, 0), MODE_EXIT
        return self, None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form, for storing a conversation."""
        return {
            "enabled": self.enabled,
            "announced": self.announced,
            "turns_since_notice": self.turns_since_notice,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModeState:
        """Inverse of :meth:`to_json`."""
        return cls(bool(data["enabled"]), bool(data["announced"]), int(data["turns_since_notice"]))


def system_message(text: str) -> dict[str, Any]:
    """A mid-conversation system message entry for ``messages``."""
    return {"role": "system", "content": text}
