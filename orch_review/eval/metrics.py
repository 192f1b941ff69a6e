"""Recall, precision, F1 and false positives per clean change, with confidence intervals.

Proportions (recall, precision, a pattern's catch rate) get a Wilson score interval; F1 and
false positives per clean change, which are not simple proportions, get a percentile
bootstrap over cases with a fixed seed, so the same results always print the same intervals.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054
BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 20261201


@dataclass(frozen=True, slots=True)
class Tally:
    """The counts of one case (or one severity of one case)."""

    expected: int  # issues the case lists
    found: int  # of those, matched by a reported finding
    reported: int  # findings the review reported
    matching: int  # of those, matching an expected issue
    clean: bool  # the case is a clean change (no expected issue at all)

    @property
    def false_positives(self) -> int:
        """Reported findings that match no expected issue."""
        return self.reported - self.matching


Interval = tuple[float, float]


def wilson(successes: int, trials: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval of ``successes / trials`` (None without trials)."""
    if trials == 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap(
    items: Sequence[Tally],
    statistic: Callable[[Sequence[Tally]], float | None],
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Interval | None:
    """A 95% percentile bootstrap interval of ``statistic`` over ``items`` resampled."""
    if not items or statistic(items) is None:
        return None
    rng = random.Random(seed)
    values = []
    for _ in range(samples):
        value = statistic([items[rng.randrange(len(items))] for _ in items])
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    return (values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))])


def _ratio(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else numerator / denominator


def recall_of(tallies: Sequence[Tally]) -> float | None:
    """Expected issues found / expected issues."""
    return _ratio(sum(t.found for t in tallies), sum(t.expected for t in tallies))


def precision_of(tallies: Sequence[Tally]) -> float | None:
    """Reported findings matching an issue / reported findings."""
    return _ratio(sum(t.matching for t in tallies), sum(t.reported for t in tallies))


def f1_of(tallies: Sequence[Tally]) -> float | None:
    """The harmonic mean of recall and precision (0 when both are 0)."""
    recall, precision = recall_of(tallies), precision_of(tallies)
    if recall is None or precision is None:
        return None
    return 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)


def fp_per_clean_of(tallies: Sequence[Tally]) -> float | None:
    """Findings reported on clean changes, per clean change."""
    clean = [t for t in tallies if t.clean]
    return _ratio(sum(t.reported for t in clean), len(clean))


@dataclass(frozen=True, slots=True)
class Metrics:
    """The figures for one group of tallies (all cases, or one severity)."""

    expected: int
    found: int
    reported: int
    matching: int
    clean_changes: int
    recall: float | None
    recall_ci: Interval | None
    precision: float | None
    precision_ci: Interval | None
    f1: float | None
    f1_ci: Interval | None
    false_positives_per_clean_change: float | None
    false_positives_per_clean_change_ci: Interval | None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready figures; intervals as [low, high], unknown values as null."""
        return {
            "expected": self.expected,
            "found": self.found,
            "reported": self.reported,
            "matching": self.matching,
            "clean_changes": self.clean_changes,
            "recall": _round(self.recall),
            "recall_ci": _round_ci(self.recall_ci),
            "precision": _round(self.precision),
            "precision_ci": _round_ci(self.precision_ci),
            "f1": _round(self.f1),
            "f1_ci": _round_ci(self.f1_ci),
            "false_positives_per_clean_change": _round(self.false_positives_per_clean_change),
            "false_positives_per_clean_change_ci": _round_ci(
                self.false_positives_per_clean_change_ci
            ),
        }


def metrics(tallies: Sequence[Tally]) -> Metrics:
    """Figures and 95% intervals for ``tallies`` (one per case)."""
    expected = sum(t.expected for t in tallies)
    found = sum(t.found for t in tallies)
    reported = sum(t.reported for t in tallies)
    matching = sum(t.matching for t in tallies)
    clean = [t for t in tallies if t.clean]
    return Metrics(
        expected=expected,
        found=found,
        reported=reported,
        matching=matching,
        clean_changes=len(clean),
        recall=recall_of(tallies),
        recall_ci=wilson(found, expected),
        precision=precision_of(tallies),
        precision_ci=wilson(matching, reported),
        f1=f1_of(tallies),
        f1_ci=bootstrap(tallies, f1_of),
        false_positives_per_clean_change=fp_per_clean_of(tallies),
        false_positives_per_clean_change_ci=bootstrap(clean, fp_per_clean_of),
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _round_ci(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [round(interval[0], 4), round(interval[1], 4)]
