"""Money and counts as people read them: true to the amount, the noun agreeing with the count."""

from __future__ import annotations

import pytest

from orch_review.wording import counted, noun_for, plural, unit_noun, usd


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (0, "$0.00"),
        (0.001, "$0.001"),
        (0.0042, "$0.0042"),
        (0.000123, "$0.00012"),
        (0.015, "$0.015"),
        (0.1234, "$0.12"),
        (0.5, "$0.50"),
        (1.2345, "$1.23"),
        (5, "$5.00"),
        (1234.5, "$1,234.50"),
    ],
)
def test_an_estimate_shows_two_significant_digits_and_at_least_the_cents(
    amount: float, shown: str
) -> None:
    assert usd(amount) == shown


@pytest.mark.parametrize("amount", [1e-9, 0.0001, 0.004, 0.009999])
def test_a_non_zero_amount_never_reads_as_zero(amount: float) -> None:
    assert usd(amount) != "$0.00"
    assert usd(amount, exact=True) != "$0.00"
    assert float(usd(amount, exact=True).lstrip("$")) == pytest.approx(amount)


@pytest.mark.parametrize(
    ("amount", "shown"),
    [(0.001, "$0.001"), (0.00125, "$0.00125"), (1.005, "$1.005"), (5, "$5.00"), (0.5, "$0.50")],
)
def test_an_exact_amount_keeps_every_digit_it_was_given(amount: float, shown: str) -> None:
    assert usd(amount, exact=True) == shown


def test_counts_agree_with_their_noun() -> None:
    assert counted(1, "changed file") == "1 changed file"
    assert counted(2, "changed file") == "2 changed files"
    assert counted(0, "agent") == "0 agents"
    assert counted(1, "agent") == "1 agent"
    assert counted(3, "verified patch") == "3 verified patches"
    assert counted(2, "entry") == "2 entries"
    assert counted(1_500, "token") == "1,500 tokens"
    assert counted(2, "person", "people") == "2 people"
    assert plural("class") == "classes"
    assert noun_for(1, "concern") == "concern"
    assert unit_noun(1, "changed files") == "changed file"
    assert unit_noun(3, "files") == "files"
