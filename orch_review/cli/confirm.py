"""Asking before a review that may cost more than `confirm-above-usd`, in a terminal only."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from orch_review.cli.consoles import in_ci
from orch_review.errors import ReviewDeclined
from orch_review.wording import usd

if TYPE_CHECKING:
    from orch_review.core import PreparedReview


def interactive() -> bool:
    """Whether a person can read the question (stderr) and answer it (stdin)."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def confirm_cost(prepared: PreparedReview, *, assume_yes: bool) -> None:
    """Ask, before any request, when the estimate's high end is above `confirm-above-usd`;
    raise :class:`ReviewDeclined` unless the answer is yes. Never asks with ``assume_yes``,
    in CI, or off a terminal."""
    if assume_yes or in_ci(prepared.env) or not interactive():
        return
    from orch_review.core import estimate

    limit = prepared.config.confirm_above_usd
    cost = estimate(prepared).range
    if cost.high_usd <= limit:
        return
    basis = f" ({cost.calibrated_on})" if cost.calibrated_on else ""
    click.echo(
        f"Estimated {usd(cost.low_usd)}-{usd(cost.high_usd)} for this review{basis}, above "
        f"confirm-above-usd ({usd(limit, exact=True)}; `orch-review plan` shows the estimate). "
        "Continue? [y/N] ",
        err=True,
        nl=False,
    )
    answer = sys.stdin.readline()  # "" at the end of input: no
    if answer.strip().lower() not in {"y", "yes"}:
        raise ReviewDeclined(
            "review not started: answer y to start it, or pass --yes, or raise "
            "confirm-above-usd (or narrow the scope; `orch-review plan` shows the estimate)."
        )
