"""Usage accounting and the session-wide budget caps.

One :class:`Budget` per review session is shared by every agent thread. It counts agents
started, sums usage per role and holds the caps in three places (``docs/caps.md``):

- A request waits until what is spent plus what the requests in flight may still cost (each
  one's reservation) is under every cap, and is refused once the spend alone reaches one.
  While that sum, this request's expected output included, is within :data:`FAR_SHARE` of
  every cap, a request reserves its input and its role's expected output (the 95th
  percentile of this review's replies, :class:`Outputs`); nearer the cap, its input and
  ``max_tokens``. A reservation is replaced by the request's usage when the agent records
  it; so a cap is overshot by at most the requests in flight when it was reached, one per
  request slot, and a cap the review stays far from never holds a request back.
- An agent of the fan-out is admitted only when its expected cost, plus verifying what it
  will find, fits in what is left once the spend and the expected rest of the agents
  already admitted are counted (:mod:`orch_review.engine.api.admission`).
- ``max_agents`` is exact: no more agents start, whatever the threads.

It also keeps what each concern's agents spent, so the report can say which share of the
spend ended in verified coverage.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TypeVar

from orch_review.engine.api.admission import NO_AMOUNT, Amount, CostFunction, Estimates, fits
from orch_review.findings.usage import Usage, UsageReport
from orch_review.wording import counted, usd

ROLES = ("main", "subagent", "verifier", "critic", "prover")

# An agent of the fan-out: (role, concern index).
AgentKey = tuple[str, int]

# How long a waiting request or agent sleeps before it looks at ``cancel`` again.
_POLL_SECONDS = 0.2

# Spend plus reservations within this share of every cap is far from it: requests reserve
# their expected output. Past it, what is left is held for requests at their maximum.
FAR_SHARE = 0.8

_N = TypeVar("_N", int, float)

# The replies per role the expected output is taken from (the latest ones).
OUTPUTS_KEPT = 200

# The percentile of the replies' output tokens a request far from the cap reserves.
OUTPUT_PERCENTILE = 0.95


@dataclass(frozen=True, slots=True)
class Caps:
    """Hard caps for one session; None means no cap."""

    max_agents: int | None = None
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class _Hold:
    """The reservation of one request in flight, and the agent it is for."""

    amount: Amount
    agent: AgentKey | None


def nearest_rank(values: Iterable[_N], share: float) -> _N:
    """The ``share`` percentile of ``values`` (not empty) by the nearest-rank method."""
    ranked = sorted(values)
    return ranked[max(1, math.ceil(share * len(ranked))) - 1]


class Outputs:
    """Output tokens of this review's replies, per role, and the share of them a request
    expects (not thread-safe: the budget locks)."""

    def __init__(self) -> None:
        self._by_role: dict[str, deque[int]] = {}
        self._all: deque[int] = deque(maxlen=OUTPUTS_KEPT)

    def learn(self, role: str, output_tokens: int) -> None:
        """A reply of ``role`` wrote ``output_tokens``."""
        self._by_role.setdefault(role, deque(maxlen=OUTPUTS_KEPT)).append(output_tokens)
        self._all.append(output_tokens)

    def expected(self, role: str | None, max_tokens: int) -> int:
        """The :data:`OUTPUT_PERCENTILE` of the replies of ``role`` (of every role while it
        has none), at most ``max_tokens``; ``max_tokens`` before any reply."""
        seen = self._by_role.get(role or "") or self._all
        if not seen:
            return max_tokens
        return min(max_tokens, nearest_rank(seen, OUTPUT_PERCENTILE))


class Budget:
    """Thread-safe usage accounting and budget enforcement for one session."""

    def __init__(self, caps: Caps, cost: CostFunction) -> None:
        self._caps = caps
        self._cost = cost
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._usage = {role: Usage() for role in ROLES}
        self._started = dict.fromkeys(ROLES, 0)
        self._reused = dict.fromkeys(ROLES, 0)
        self._cap_reached: str | None = None
        self._unknown_models: set[str] = set()
        # Thread id -> the reservation of the request that thread has in flight.
        self._holds: dict[int, _Hold] = {}
        self._outputs = Outputs()
        self._estimates = Estimates()
        # Admitted agents (a verifier from when its subagent was admitted) -> expected cost.
        self._committed: dict[AgentKey, Amount] = {}
        self._running: set[AgentKey] = set()  # admitted and not finished
        self._spent: dict[AgentKey, Amount] = {}  # what each fan-out agent spent so far
        self._covered: dict[int, bool] = {}  # concern index -> ended in verified coverage

    # -- agents ---------------------------------------------------------------------------

    def start_agent(self, role: str) -> bool:
        """Count a new agent of ``role``; False (and nothing counted) when a cap is reached."""
        with self._lock:
            reason = self._cap_reason() or self._agent_cap_reason(1)
            if reason is not None:
                self._cap_reached = self._cap_reached or reason
                return False
            self._started[role] += 1
            return True

    def admit(
        self,
        role: str,
        index: int,
        model: str,
        *,
        verify_after: bool,
        cancel: threading.Event | None = None,
    ) -> bool:
        """Start the fan-out agent ``(role, index)`` when what it is expected to cost (plus,
        with ``verify_after``, a verifier for its findings, committed now) fits in what is
        left; while it does not fit but admitted agents may still leave room, wait. False
        (nothing counted) when it cannot fit, or on ``cancel``. A verifier committed with
        its subagent is admitted while the caps are not reached."""
        key = (role, index)
        with self._changed:
            while True:
                reason = self._admission_refusal(key, model, verify_after)
                if reason is None:
                    break
                if not reason[1] or (cancel is not None and cancel.is_set()):
                    self._cap_reached = self._cap_reached or reason[0]
                    return False
                self._changed.wait(_POLL_SECONDS)
            self._started[role] += 1
            self._running.add(key)
            if key not in self._committed:
                self._committed[key] = self._expected(role, model)
            elif role == "verifier":
                self._estimates.learn_found(True)
            if verify_after:
                verifier = ("verifier", index)
                self._committed[verifier] = self._estimates.expected_verification(model, self._cost)
            return True

    def _admission_refusal(
        self, key: AgentKey, model: str, verify_after: bool
    ) -> tuple[str, bool] | None:
        """Why ``key`` may not start now and whether waiting may change that; None: start."""
        reason = self._cap_reason()
        if reason is not None:
            return reason, False
        if key in self._committed:  # a verifier its subagent's admission paid for
            reason = self._agent_cap_reason(1, exclude=key)
            return None if reason is None else (reason, False)
        agents = 2 if verify_after else 1
        reason = self._agent_cap_reason(1)
        if reason is not None:
            return reason, False
        busy = bool(self._committed)  # agents that may still leave room when they end
        if agents == 2 and self._agent_cap_reason(2) is not None:
            # No verifier would fit after it: wait for one, or run unverified when alone.
            return (self._agent_cap_reason(2) or "", True) if busy else None
        need = self._expected(key[0], model)
        if verify_after:
            # Its share of verification, and one whole verifier kept free for whichever
            # finding comes next: a finding left unverified wastes what found it.
            need = need + self._estimates.expected_verification(model, self._cost)
            need = need + self._expected("verifier", model)
        if self._fits(self._total_amount() + self._outstanding() + need):
            return None
        if busy:
            return self._cap_words(), True
        if not self._estimates.measured(key[0]):
            return None  # nothing to go by yet but the prior: try one
        return self._cap_words(), False

    def _expected(self, role: str, model: str) -> Amount:
        return self._estimates.expected(role, model, self._cost)

    def calibrate(self, role: str, expected: Amount) -> None:
        """Before any agent ended, admit agents of ``role`` expecting ``expected`` of each
        (the review's estimate, when the cap is above its high end) instead of the prior."""
        with self._changed:
            self._estimates.calibrate(role, expected)
            self._changed.notify_all()

    def finished(self, role: str, index: int) -> None:
        """The fan-out agent ``(role, index)`` ended: what it spent teaches the estimate."""
        key = (role, index)
        with self._changed:
            self._committed.pop(key, None)
            self._running.discard(key)
            spent = self._spent.get(key)
            if spent is not None and spent != NO_AMOUNT:
                self._estimates.learn(role, spent)
            self._changed.notify_all()

    def will_verify(self, index: int, model: str) -> None:
        """Concern ``index``'s subagent reported findings: its verifier will run, so what is
        committed for it is a whole verifier's expected cost from now on, no longer that
        times the share of subagents that needed one."""
        key = ("verifier", index)
        with self._changed:
            if key in self._committed:
                self._committed[key] = self._expected("verifier", model)

    def withdraw(self, role: str, index: int) -> None:
        """``(role, index)`` will not run (its subagent found nothing to verify)."""
        with self._changed:
            if self._committed.pop((role, index), None) is not None and role == "verifier":
                self._estimates.learn_found(False)
            self._changed.notify_all()

    def reused(self, role: str) -> None:
        """Count an agent whose result came from the journal (no request made)."""
        with self._lock:
            self._reused[role] += 1

    # -- requests -------------------------------------------------------------------------

    def reserve(
        self,
        agent: AgentKey | None,
        model: str,
        input_tokens: int,
        max_tokens: int,
        cancel: threading.Event | None = None,
    ) -> str | None:
        """Wait until one request of the calling thread may be sent, and hold what it may
        cost until :meth:`record` (or :meth:`release`) from the same thread: its expected
        output while far from every cap, else ``max_tokens`` (see the module). Returns
        None, or the cap that refuses it (nothing held)."""
        with self._changed:
            while True:
                reason = self._usage_cap_reason()
                if reason is not None:
                    self._cap_reached = self._cap_reached or reason
                    return reason
                reserved = self._reserved()
                if reserved == NO_AMOUNT or self._fits(
                    self._total_amount() + reserved, strict=True
                ):
                    break
                if cancel is not None and cancel.is_set():
                    return "interrupted"
                self._changed.wait(_POLL_SECONDS)
            role = agent[0] if agent is not None else None
            output = self._outputs.expected(role, max_tokens)
            amount = self._amount(model, input_tokens, output)
            if output < max_tokens and not self._fits(
                self._total_amount() + reserved + amount, share=FAR_SHARE
            ):
                amount = self._amount(model, input_tokens, max_tokens)  # near a cap
            self._holds[threading.get_ident()] = _Hold(amount, agent)
            return None

    def reserve_hedge(
        self, agent: AgentKey | None, model: str, input_tokens: int, max_tokens: int
    ) -> bool:
        """Hold what a second copy of a request may cost, from the calling thread, when the
        spend and the reservations with it stay within :data:`FAR_SHARE` of every cap;
        False (nothing held) nearer a cap: no hedge there (``orch_review.engine.api.hedging``)."""
        with self._changed:
            if self._usage_cap_reason() is not None:
                return False
            role = agent[0] if agent is not None else None
            amount = self._amount(model, input_tokens, self._outputs.expected(role, max_tokens))
            if not self._fits(self._total_amount() + self._reserved() + amount, share=FAR_SHARE):
                return False
            self._holds[threading.get_ident()] = _Hold(amount, agent)
            return True

    def charge_unused(
        self,
        agent: AgentKey | None,
        role: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cache_write_tokens: int,
        cache_read_tokens: int,
        requests: int,
    ) -> None:
        """Count a copy of a request whose answer was not the reply (a hedge, or what it
        hedged): what it used, or for one cancelled unread, its input. It holds nothing:
        the reservation it went under is the answered copy's; its output teaches nothing."""
        usage, known = self._priced(
            model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, requests
        )
        with self._changed:
            self._add(role, model, usage, known, agent)
            self._changed.notify_all()

    def _priced(
        self,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cache_write_tokens: int,
        cache_read_tokens: int,
        requests: int,
    ) -> tuple[Usage, bool]:
        """The usage of ``requests`` requests with these tokens, priced; and whether the
        model's price is known."""
        cost, known = self._cost(
            model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens
        )
        usage = Usage(
            input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost, requests
        )
        return usage, known

    def _add(
        self, role: str, model: str, usage: Usage, known: bool, agent: AgentKey | None
    ) -> None:
        """Count ``usage`` for ``role`` and, when given, ``agent`` (the lock held)."""
        self._usage[role] = self._usage[role] + usage
        if not known:
            self._unknown_models.add(model)
        if agent is not None:
            spent = self._spent.get(agent, NO_AMOUNT)
            self._spent[agent] = spent + Amount(usage.cost_usd, usage.total_tokens)

    def _amount(self, model: str, input_tokens: int, output_tokens: int) -> Amount:
        cost, _ = self._cost(model, input_tokens, output_tokens, 0, 0)
        return Amount(cost, input_tokens + output_tokens)

    def release(self) -> None:
        """Drop the calling thread's reservation: its request got no response."""
        with self._changed:
            if self._holds.pop(threading.get_ident(), None) is not None:
                self._changed.notify_all()

    def record(
        self,
        role: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cache_write_tokens: int,
        cache_read_tokens: int,
    ) -> Usage:
        """Add one request's usage in place of the calling thread's reservation; returns that
        request's :class:`Usage`."""
        usage, known = self._priced(
            model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, 1
        )
        with self._changed:
            self._outputs.learn(role, output_tokens)
            hold = self._holds.pop(threading.get_ident(), None)
            self._add(role, model, usage, known, hold.agent if hold is not None else None)
            if hold is not None:
                self._changed.notify_all()
        return usage

    # -- concerns -------------------------------------------------------------------------

    def concern_ended(self, index: int, covered: bool) -> None:
        """Concern ``index`` ended, in verified coverage or not (for the verified share)."""
        with self._lock:
            self._covered[index] = covered

    # -- caps -----------------------------------------------------------------------------

    def _total_amount(self) -> Amount:
        total = Usage()
        for usage in self._usage.values():
            total = total + usage
        return Amount(total.cost_usd, total.total_tokens)

    def _reserved(self) -> Amount:
        reserved = NO_AMOUNT
        for hold in self._holds.values():
            reserved = reserved + hold.amount
        return reserved

    def _outstanding(self) -> Amount:
        """What admitted agents are still expected to spend beyond what they have."""
        rest = NO_AMOUNT
        for key, expected in self._committed.items():
            rest = rest + (expected - self._spent.get(key, NO_AMOUNT))
        return rest

    def _fits(self, amount: Amount, *, strict: bool = False, share: float = 1.0) -> bool:
        """Whether ``amount`` is within ``share`` of every cap."""
        caps = self._caps
        dollars = None if caps.max_cost_usd is None else caps.max_cost_usd * share
        tokens = None if caps.max_total_tokens is None else int(caps.max_total_tokens * share)
        return fits(amount, dollars, tokens, strict=strict)

    def _cap_words(self) -> str:
        caps = self._caps
        if caps.max_cost_usd is not None:
            return f"cost cap reached ({usd(caps.max_cost_usd, exact=True)})"
        return f"token cap reached ({counted(caps.max_total_tokens or 0, 'token')})"

    def _agent_cap_reason(self, agents: int, exclude: AgentKey | None = None) -> str | None:
        """Why ``agents`` more may not start: the agents started and the verifiers committed
        (but for ``exclude``) leave no room under ``max_agents``."""
        cap = self._caps.max_agents
        if cap is None:
            return None
        waiting = sum(
            1
            for key in self._committed
            if key[0] == "verifier" and key != exclude and key not in self._running
        )
        if sum(self._started.values()) + waiting + agents > cap:
            return f"agent cap reached ({counted(cap, 'agent')})"
        return None

    def _cap_reason(self) -> str | None:
        caps = self._caps
        if caps.max_agents is not None and sum(self._started.values()) >= caps.max_agents:
            return f"agent cap reached ({counted(caps.max_agents, 'agent')})"
        return self._usage_cap_reason()

    def _usage_cap_reason(self) -> str | None:
        """The token or cost cap the spend has reached, if any."""
        caps = self._caps
        total = self._total_amount()
        if caps.max_total_tokens is not None and total.tokens >= caps.max_total_tokens:
            return f"token cap reached ({counted(caps.max_total_tokens, 'token')})"
        if caps.max_cost_usd is not None and total.usd >= caps.max_cost_usd:
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
            reached = self._usage_cap_reason()  # a spend at the cap says so, whoever saw it
            if reached is not None:
                self._cap_reached = self._cap_reached or reached
            verified = sum(
                (amount for (_, index), amount in self._spent.items() if self._covered.get(index)),
                NO_AMOUNT,
            )
            # Provers run only when asked for: a report without one does not list them.
            idle = {"prover"} if not (self._started["prover"] or self._reused["prover"]) else set()
            return UsageReport(
                by_role={r: replace(u) for r, u in self._usage.items() if r not in idle},
                agents_started={r: n for r, n in self._started.items() if r not in idle},
                agents_from_journal={r: n for r, n in self._reused.items() if r not in idle},
                cap_reached=self._cap_reached,
                unknown_price_models=tuple(sorted(self._unknown_models)),
                verified_cost_usd=verified.usd,
                verified_tokens=verified.tokens,
            )
