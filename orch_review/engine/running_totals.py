"""The review's running totals on every progress event: cost so far and files covered."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from orch_review.engine.agents.sweep import covering
from orch_review.engine.agents.workflow import Workflow
from orch_review.engine.api.budget import Budget
from orch_review.events import AgentEvent, EventSink


class LiveTotals:
    """An event sink that passes each event on to ``sink`` with the budget's cost so far and
    how many of ``total`` files finished concerns cover (or an earlier review, ``reused``).
    ``budget`` and ``workflow`` are set
    once the review has them; until then the figures are left unknown."""

    def __init__(
        self, sink: EventSink, total: int, reused: Callable[[], frozenset[str]] = frozenset
    ) -> None:
        self._sink = sink
        self._total = total
        self.reused = reused
        self.budget: Budget | None = None
        self.workflow: Workflow | None = None

    def __call__(self, event: AgentEvent) -> None:
        cost = self.budget.report().total.cost_usd if self.budget is not None else None
        covered = self._covered()
        self._sink(
            dataclasses.replace(
                event,
                cost_usd=cost,
                files_covered=covered,
                files_total=self._total if covered is not None else None,
            )
        )

    def _covered(self) -> int | None:
        workflow = self.workflow
        if workflow is None:
            return None
        for _ in range(3):  # the workflow's threads may add a concern while this copies
            try:
                outcomes, files_of = list(workflow.outcomes), dict(workflow.files_of)
                answered = frozenset(workflow.answered)
                break
            except RuntimeError:
                continue
        else:
            return None
        covered_by, _ = covering(outcomes, files_of, answered)
        return min(self._total, len(covered_by.keys() | self.reused()))
