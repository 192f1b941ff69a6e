"""``orch-review plan``: what a review would cover, with no API call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import scope_options

if TYPE_CHECKING:
    from orch_review.core import PreparedReview

# Rows of each table `plan` prints for people: a 100,000-file audit is for --json.
PLAN_ROWS = 1000


@click.command(short_help="Show what a review would cover, with no API call.")
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (every file).")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=PLAN_ROWS,
    show_default=True,
    metavar="N",
    help="List at most N files to review, and N skipped ones (0: all).",
)
@click.option(
    "--count-tokens",
    is_flag=True,
    help="Count the prompt's tokens with the API (needs a key) instead of estimating.",
)
@handle_errors
def plan(
    paths: tuple[str, ...],
    staged: bool,
    base: str | None,
    head: str | None,
    review_all: bool,
    exclude: tuple[str, ...],
    as_json: bool,
    limit: int,
    count_tokens: bool,
) -> None:
    """Show what a review would cover, without calling the API.

    Prints the scope, the files to review with their changed lines, the skipped files with
    the reason for each, and an estimate of the first prompt's size. Takes the same scope
    flags as the review.
    """
    from rich.console import Console

    from orch_review import core
    from orch_review.cli.plan_view import print_plan
    from orch_review.engine.prompts import MAIN_SYSTEM
    from orch_review.scope.plan import plan_data

    options = core.ReviewOptions(
        staged=staged, base=base, head=head, all_files=review_all, paths=paths, exclude=exclude
    )
    prepared = core.prepare(Path.cwd(), options, core.take_environment(), cwd=Path.cwd())
    counted = _count_tokens(prepared) if count_tokens else None
    data = plan_data(prepared.scope, MAIN_SYSTEM, counted)
    if as_json:
        # Compact: the C encoder is an order of magnitude faster on a 100,000-file plan.
        click.echo(json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
    else:
        print_plan(data, Console(), limit=limit or None)


def _count_tokens(prepared: PreparedReview) -> int:
    from orch_review.engine.opening import new_client
    from orch_review.engine.prompts import MAIN_SYSTEM
    from orch_review.scope.prescout import task_text

    client = new_client(prepared.config, prepared.env)
    try:
        return client.count_tokens(
            model=prepared.config.model,
            system=MAIN_SYSTEM,
            messages=[{"role": "user", "content": task_text(prepared.scope)}],
        )
    finally:
        client.close()
