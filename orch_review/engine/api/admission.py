"""What an agent of the fan-out is expected to cost, for admitting it under a cap.

The model is deliberately simple (``docs/caps.md``): the expected cost of an agent of a role
is the running mean of what the agents of that role that ended have spent (of the other
fan-out role while none has; before any agent ended, what the review's estimate expects of
an agent of that role at its high end, when the cap is at least that high end; else a prior
of :data:`PRIOR_INPUT_TOKENS` input and :data:`PRIOR_OUTPUT_TOKENS` output tokens at the
agent model's price: a few turns of a typical subagent). Verifying a concern is expected to cost
a verifier's mean times the share of subagents whose findings needed a verifier.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# The prior: one observation of an agent of a few turns.
PRIOR_INPUT_TOKENS = 40_000
PRIOR_OUTPUT_TOKENS = 4_000

# cost(model, input, output, cache_write, cache_read) -> (usd, price_known)
CostFunction = Callable[[str, int, int, int, int], tuple[float, bool]]


@dataclass(frozen=True, slots=True)
class Amount:
    """Money and tokens, the two things a cap can be on."""

    usd: float = 0.0
    tokens: int = 0

    def __add__(self, other: Amount) -> Amount:
        return Amount(self.usd + other.usd, self.tokens + other.tokens)

    def __sub__(self, other: Amount) -> Amount:
        """The difference, never below zero in either part (what is still to come)."""
        return Amount(max(0.0, self.usd - other.usd), max(0, self.tokens - other.tokens))


NO_AMOUNT = Amount()


def fits(amount: Amount, max_usd: float | None, max_tokens: int | None, *, strict: bool) -> bool:
    """True when ``amount`` is within both caps (below them with ``strict``)."""
    if max_usd is not None and (amount.usd >= max_usd if strict else amount.usd > max_usd):
        return False
    return max_tokens is None or (
        amount.tokens < max_tokens if strict else amount.tokens <= max_tokens
    )


@dataclass(slots=True)
class _Mean:
    count: int = 0
    total: Amount = field(default_factory=Amount)


class Estimates:
    """Running means of what agents of each role spent, and how often a subagent's findings
    needed a verifier (not thread-safe: the budget locks)."""

    def __init__(self) -> None:
        self._means: dict[str, _Mean] = {}
        self._calibrated: dict[str, Amount] = {}  # role -> the estimate's, before any ended
        self._verified = 0  # subagents whose findings went to a verifier
        self._ended = 0  # subagents that ended, with or without findings

    def learn(self, role: str, spent: Amount) -> None:
        """An agent of ``role`` ended having spent ``spent``."""
        mean = self._means.setdefault(role, _Mean())
        mean.count += 1
        mean.total = mean.total + spent

    def calibrate(self, role: str, expected: Amount) -> None:
        """Before any agent ended, expect ``expected`` of an agent of ``role``."""
        self._calibrated[role] = expected

    def learn_found(self, found: bool) -> None:
        """A subagent ended; ``found``: its findings go to a verifier."""
        self._ended += 1
        self._verified += int(found)

    def measured(self, role: str) -> bool:
        """True once an agent of ``role`` has ended."""
        mean = self._means.get(role)
        return mean is not None and mean.count > 0

    def expected(self, role: str, model: str, cost: CostFunction) -> Amount:
        """What the next agent of ``role`` on ``model`` is expected to spend: the mean of
        its role once one ended, else of the other fan-out role, else the calibrated
        expectation, else the prior."""
        for name in (role, "verifier" if role == "subagent" else "subagent"):
            mean = self._means.get(name)
            if mean is not None and mean.count:
                return Amount(mean.total.usd / mean.count, mean.total.tokens // mean.count)
        if role in self._calibrated:
            return self._calibrated[role]
        usd, _ = cost(model, PRIOR_INPUT_TOKENS, PRIOR_OUTPUT_TOKENS, 0, 0)
        return Amount(usd, PRIOR_INPUT_TOKENS + PRIOR_OUTPUT_TOKENS)

    def expected_verification(self, model: str, cost: CostFunction) -> Amount:
        """What verifying a subagent's findings is expected to add: a verifier's expected
        cost times the share of subagents whose findings needed one (with one prior
        subagent that did)."""
        share = (self._verified + 1) / (self._ended + 1)
        verifier = self.expected("verifier", model, cost)
        return Amount(verifier.usd * share, int(verifier.tokens * share))
