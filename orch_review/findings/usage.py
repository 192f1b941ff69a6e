"""Token usage and estimated cost of a review, as recorded and as reported."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and estimated cost of one or more requests."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float = 0.0
    requests: int = 0

    @property
    def total_tokens(self) -> int:
        """Every token billed, cache reads and writes included."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_write_tokens
            + self.cache_read_tokens
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cost_usd + other.cost_usd,
            self.requests + other.requests,
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "requests": self.requests,
        }


@dataclass(frozen=True, slots=True)
class CostRange:
    """What a review was estimated to cost before it started, in USD (``orch_review/cost.py``)."""

    low_usd: float
    high_usd: float
    # What the estimate rests on, in words ("calibrated on ...; budget for the high end").
    calibrated_on: str = ""


@dataclass(frozen=True, slots=True)
class UsageReport:
    """What the session used, per role, and which cap stopped it if any."""

    by_role: dict[str, Usage]
    agents_started: dict[str, int]
    agents_from_journal: dict[str, int]
    cap_reached: str | None
    unknown_price_models: tuple[str, ...] = field(default=())
    # What the agents of concerns that ended in verified coverage spent.
    verified_cost_usd: float = 0.0
    verified_tokens: int = 0

    @property
    def total(self) -> Usage:
        """Sum over roles."""
        total = Usage()
        for usage in self.by_role.values():
            total = total + usage
        return total

    @property
    def verified_share(self) -> float | None:
        """The share of the fan-out's spend that ended in verified coverage: what the
        subagents and verifiers of concerns that ended covered spent, over what every
        subagent and verifier spent (by cost; by tokens when no price is known). The main
        agent and the critic plan the work and are not part of it. None when no subagent
        or verifier spent anything."""
        work = Usage()
        for role in ("subagent", "verifier"):
            work = work + self.by_role.get(role, Usage())
        if work.cost_usd > 0:
            return min(1.0, self.verified_cost_usd / work.cost_usd)
        if work.total_tokens > 0:
            return min(1.0, self.verified_tokens / work.total_tokens)
        return None
