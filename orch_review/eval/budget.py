"""Money across an evaluation's cases: the estimate of them all, said before any request,
and a total cap (``--max-total-cost-usd``) that no case may start beyond.

Each case starts with a share of what is left (what is left over the cases that may run at
once), reserved until it ends; that share is the case's own ``max-cost-usd``, so together
the cases stay within the total, as a review's agents stay within its cap.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from orch_review.errors import GitError, OrchReviewError
from orch_review.eval.cases import Case
from orch_review.findings.usage import CostRange


@dataclass(frozen=True, slots=True)
class CasesEstimate:
    """What the cases are expected to cost together, and how many could be estimated."""

    cost: CostRange
    estimated: int
    cases: int


def estimate_cases(
    cases: Sequence[Case],
    repos: Sequence[Path | GitError],
    settings: Mapping[str, object],
    env: Mapping[str, str],
) -> CasesEstimate:
    """The sum of each case's estimate, as `orch-review plan` makes it (no API call); a case
    whose repository or revisions cannot be read is left out (it will fail on its own)."""
    from orch_review.core import ReviewOptions, estimate, prepare
    from orch_review.scope.resolve import NothingToReview

    low = high = 0.0
    estimated = 0
    for case, repo in zip(cases, repos, strict=True):
        if isinstance(repo, GitError) or case.patch is not None:
            continue  # a patch case is estimated once its commit is made, when it runs
        try:
            prepared = prepare(
                repo, ReviewOptions(base=case.base, head=case.head, settings=settings), env
            )
            cost = estimate(prepared).range
        except NothingToReview:
            estimated += 1
            continue
        except OrchReviewError:
            continue
        low, high, estimated = low + cost.low_usd, high + cost.high_usd, estimated + 1
    return CasesEstimate(CostRange(low, high), estimated, len(cases))


class TotalBudget:
    """The total cap of an evaluation, shared by the cases running at once."""

    def __init__(self, cap: float | None, jobs: int) -> None:
        self.cap = cap
        self._jobs = max(1, jobs)
        self._lock = threading.Lock()
        self.spent = 0.0
        self._reserved: dict[int, float] = {}

    def open(self, index: int) -> float | None:
        """The most case ``index`` may spend (reserved for it until :meth:`close`); None
        without a cap. 0 when nothing is left: the case does not start."""
        if self.cap is None:
            return None
        with self._lock:
            left = self.cap - self.spent - sum(self._reserved.values())
            running = len(self._reserved)
            share = max(left, 0.0) / max(1, self._jobs - running)
            self._reserved[index] = share
            return share

    def close(self, index: int, cost: float) -> None:
        """Case ``index`` ended having spent ``cost``."""
        with self._lock:
            self._reserved.pop(index, None)
            self.spent += cost
