"""The arithmetic of the figures, checked against hand counts and published values."""

from __future__ import annotations

import pytest

from orch_review.eval.metrics import Tally, bootstrap, f1_of, metrics, wilson


def test_wilson_interval_matches_the_published_formula() -> None:
    low, high = wilson(1, 2)  # type: ignore[misc]
    assert (round(low, 4), round(high, 4)) == (0.0945, 0.9055)
    low, high = wilson(0, 10)  # type: ignore[misc]
    assert low == 0.0 and round(high, 4) == 0.2775
    assert wilson(0, 0) is None


def test_figures_from_hand_counts() -> None:
    tallies = [
        Tally(expected=3, found=2, reported=4, matching=2, clean=False),
        Tally(expected=1, found=1, reported=1, matching=1, clean=False),
        Tally(expected=0, found=0, reported=2, matching=0, clean=True),
        Tally(expected=0, found=0, reported=0, matching=0, clean=True),
    ]

    m = metrics(tallies)

    assert m.recall == 3 / 4
    assert m.precision == 3 / 7
    assert m.f1 == pytest.approx(2 * (3 / 4) * (3 / 7) / (3 / 4 + 3 / 7))
    assert m.false_positives_per_clean_change == 1.0  # 2 findings over 2 clean changes
    assert m.clean_changes == 2
    assert m.recall_ci == wilson(3, 4) and m.precision_ci == wilson(3, 7)
    assert m.f1_ci is not None and m.f1_ci[0] <= m.f1 <= m.f1_ci[1]
    fp_ci = m.false_positives_per_clean_change_ci
    assert fp_ci is not None and fp_ci[0] == 0.0 and fp_ci[1] == 2.0


def test_nothing_to_measure_is_none_not_zero() -> None:
    m = metrics([Tally(0, 0, 0, 0, clean=True)])
    assert (m.recall, m.precision, m.f1) == (None, None, None)
    assert m.false_positives_per_clean_change == 0.0
    assert metrics([Tally(2, 0, 0, 0, clean=False)]).false_positives_per_clean_change is None
    assert f1_of([Tally(2, 0, 3, 0, clean=False)]) == 0.0


def test_the_bootstrap_is_reproducible() -> None:
    tallies = [Tally(2, i % 3, 2, i % 2, clean=False) for i in range(9)]
    assert bootstrap(tallies, f1_of) == bootstrap(tallies, f1_of)
    assert bootstrap(tallies, f1_of, seed=1) != bootstrap(tallies, f1_of, seed=2)
