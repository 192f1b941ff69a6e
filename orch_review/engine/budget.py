"""Usage accounting and the session-wide budget caps.

One :class:`Ledger` per review session is shared by every agent thread. It counts agents
started, sums usage per role and refuses to start a new agent once a cap is reached; agents
already running finish.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from orch_review.findings.usage import Usage, UsageReport
from orch_review.wording import counted, usd

ROLES = ("main", "subagent", "verifier", "critic")


@dataclass(frozen=True, slots=True)
class Caps:
    """Hard caps for one session; None means no cap."""

    max_agents: int | None = None
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None


# cost(model, input, output, cache_write, cache_read) -> (usd, price_known)
CostFunction = Callable[[str, int, int, int, int], tuple[float, bool]]


class Ledger:
    """Thread-safe usage accounting and budget enforcement for one session."""

    def __init__(self, caps: Caps, cost: CostFunction) -> None:
        self._caps = caps
        self._cost = cost
        self._lock = threading.Lock()
        self._usage = {role: Usage() for role in ROLES}
        self._started = dict.fromkeys(ROLES, 0)
        self._reused = dict.fromkeys(ROLES, 0)
        self._cap_reached: str | None = None
        self._unknown_models: set[str] = set()

    def start_agent(self, role: str) -> bool:
        """Count a new agent of ``role``; False (and nothing counted) when a cap is reached."""
        with self._lock:
            reason = self._cap_reason()
            if reason is not None:
                self._cap_reached = self._cap_reached or reason
                return False
            self._started[role] += 1
            return True

    def reused(self, role: str) -> None:
        """Count an agent whose result came from the journal (no request made)."""
        with self._lock:
            self._reused[role] += 1

    def record(
        self,
        role: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cache_write_tokens: int,
        cache_read_tokens: int,
    ) -> Usage:
        """Add one request's usage; returns that request's :class:`Usage`."""
        cost, known = self._cost(
            model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens
        )
        usage = Usage(input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost, 1)
        with self._lock:
            self._usage[role] = self._usage[role] + usage
            if not known:
                self._unknown_models.add(model)
        return usage

    def _cap_reason(self) -> str | None:
        caps = self._caps
        started = sum(self._started.values())
        total = Usage()
        for usage in self._usage.values():
            total = total + usage
        if caps.max_agents is not None and started >= caps.max_agents:
            return f"agent cap reached ({counted(caps.max_agents, 'agent')})"
        if caps.max_total_tokens is not None and total.total_tokens >= caps.max_total_tokens:
            return f"token cap reached ({counted(caps.max_total_tokens, 'token')})"
        if caps.max_cost_usd is not None and total.cost_usd >= caps.max_cost_usd:
            return f"cost cap reached ({usd(caps.max_cost_usd, exact=True)})"
        return None

    def over_budget(self) -> str | None:
        """The cap that is reached now, if any (the main agent checks it between turns)."""
        with self._lock:
            reason = self._cap_reason()
            if reason is not None:
                self._cap_reached = self._cap_reached or reason
            return reason

    def report(self) -> UsageReport:
        """A consistent snapshot of the usage so far."""
        with self._lock:
            return UsageReport(
                by_role={role: replace(u) for role, u in self._usage.items()},
                agents_started=dict(self._started),
                agents_from_journal=dict(self._reused),
                cap_reached=self._cap_reached,
                unknown_price_models=tuple(sorted(self._unknown_models)),
            )
