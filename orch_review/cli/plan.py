"""``orch-review plan``: what a review would cover, with no API call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import config_option, scope_options, warn

if TYPE_CHECKING:
    from orch_review.core import PreparedReview

# Rows of each table `plan` prints for people: a 100,000-file audit is for --json.
PLAN_ROWS = 1000


@click.command(short_help="Show what a review would cover, with no API call.")
@scope_options
@click.option(
    "--json",
    "json_file",
    type=click.Path(dir_okay=False, path_type=Path),
    is_flag=False,
    flag_value="-",
    help="Write the plan as JSON (every file) to this file instead of the table (- for "
    "stdout; `--json` last on the line with no file also means stdout).",
)
@config_option
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
    json_file: Path | None,
    config_file: Path | None,
    limit: int,
    count_tokens: bool,
) -> None:
    """Show what a review would cover, without calling the API.

    Prints the scope, the files to review with their changed lines, the skipped files with
    the reason for each, an estimate of the first prompt's size, and the estimated cost of
    the review (a range, per role, with the figures it rests on). Takes the same scope flags
    and configuration as the review.
    """
    from orch_review import core
    from orch_review.cli.consoles import console
    from orch_review.cli.plan_view import print_plan
    from orch_review.engine.agents.prompts import MAIN_SYSTEM
    from orch_review.engine.plan import plan_data
    from orch_review.reporters.files import STDOUT, check_writable_path, write_text

    options = core.ReviewOptions(
        staged=staged,
        base=base,
        head=head,
        all_files=review_all,
        paths=paths,
        exclude=exclude,
        config_file=config_file,
    )
    to_file = json_file is not None and json_file != STDOUT
    if to_file:
        assert json_file is not None
        check_writable_path(json_file, "the plan")  # before --count-tokens pays for a request
    env = core.take_environment()
    prepared = core.prepare(Path.cwd(), options, env, cwd=Path.cwd(), warn=warn)
    counted = _count_tokens(prepared) if count_tokens else None
    data = plan_data(prepared.scope, MAIN_SYSTEM, counted, core.estimate(prepared))
    if json_file is None:
        # People read paths from where they ran orch-review; the JSON keeps them as git has them.
        print_plan(
            _seen_from(data, core.cwd_prefix(prepared, Path.cwd())), console(), limit=limit or None
        )
        return
    from orch_review.quoting import dumps

    # Compact: the C encoder is an order of magnitude faster on a 100,000-file plan.
    text = dumps(data, sort_keys=True, separators=(",", ":")) + "\n"
    if not to_file:
        click.echo(text, nl=False)
        return
    assert json_file is not None
    written = write_text(json_file, text, "the plan")
    core.remember_reports(prepared.repo, [(json_file, written)])
    click.echo(f"plan written to {click.format_filename(json_file)}", err=True)


def _seen_from(data: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The plan's paths relative to ``prefix`` (see :func:`shown_path`)."""
    from orch_review.findings.relative import shown_path

    if not prefix:
        return data

    def moved(entry: dict[str, Any]) -> dict[str, Any]:
        # A name git had to C-quote (not UTF-8) is shown as git has it.
        keys = [
            k for k in ("path", "old_path") if isinstance(entry.get(k), str) and entry[k][:1] != '"'
        ]
        return {**entry, **{k: shown_path(entry[k], prefix) for k in keys}}

    return {
        **data,
        "files": [moved(f) for f in data["files"]],
        "skipped": [moved(s) for s in data["skipped"]],
    }


def _count_tokens(prepared: PreparedReview) -> int:
    from orch_review.engine.agents.prescout import task_text
    from orch_review.engine.agents.prompts import MAIN_SYSTEM
    from orch_review.engine.agents.session_setup import new_client

    client = new_client(prepared.config, prepared.env)
    try:
        return client.count_tokens(
            model=prepared.config.model,
            system=MAIN_SYSTEM,
            messages=[{"role": "user", "content": task_text(prepared.scope)}],
        )
    finally:
        client.close()
