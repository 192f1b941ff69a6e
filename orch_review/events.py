"""Progress events of a review's agents, for whoever shows them (a terminal, a log).

A low module: it imports nothing of orch-review, so every layer, the library's callers
included, can name :class:`AgentEvent` and :data:`EventSink` without importing the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """Progress of one agent, for live display."""

    agent_id: str
    role: str
    label: str
    state: str  # "started", "turn", "done", "failed", "cached", "skipped"
    turns: int = 0
    tokens: int = 0
    detail: str = ""
    # The review's totals when the event was sent (None: not known to the sender).
    cost_usd: float | None = None
    files_covered: int | None = None
    files_total: int | None = None


EventSink = Callable[[AgentEvent], None]
