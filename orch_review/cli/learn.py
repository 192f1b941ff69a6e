"""``orch-review learn``: record a finding the team dismissed, for every later review."""

from __future__ import annotations

from pathlib import Path

import click

from orch_review.cli.exits import handle_errors
from orch_review.errors import ExitCode


@click.command("learn", short_help="Record a dismissed finding in .orch-review/learnings.toml.")
@click.option(
    "--fingerprint",
    metavar="FP",
    help="The finding's fingerprint (the JSON report's `fingerprint`, e.g. 0f3c...:1): "
    "suppressed in every review from then on.",
)
@click.option(
    "--glob",
    metavar="GLOB",
    help="Files (a gitignore-style glob) the lesson is about: guidance for the agents.",
)
@click.option("--category", metavar="NAME", help="The category dismissed (e.g. security).")
@click.option("--reason", required=True, help="Why the team dismissed it (shown to the agents).")
@click.option(
    "--who",
    metavar="NAME",
    help="Who decided (default: `git config user.name` <user.email>).",
)
@click.option(
    "--report",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The JSON report with the finding: its place and claim are written beside the "
    "learning as comments, so whoever reviews the file knows what it silences.",
)
@handle_errors
def learn_command(
    fingerprint: str | None,
    glob: str | None,
    category: str | None,
    reason: str,
    who: str | None,
    report: Path | None,
) -> ExitCode:
    """Add a learning to .orch-review/learnings.toml in this repository.

    Give exactly one of --fingerprint (one finding: it is no longer reported, and the
    agents are told why) or --glob (files: the agents are told the lesson). The entry is
    appended; other entries and comments are kept. Commit the file: reviews of a pull
    request read it from the base branch.

    \b
    Examples:
      orch-review learn --fingerprint 0f3c...:1 --report orch-review.json
                        --reason "the input is a constant"
      orch-review learn --glob "tests/**" --category security
                        --reason "test fixtures hold fake secrets"
    """
    from orch_review import core

    path = core.learn(
        Path.cwd(),
        fingerprint=fingerprint,
        glob=glob,
        category=category,
        reason=reason,
        who=who,
        report=report,
    )
    click.echo(f"Added a learning to {path}: commit it so every review knows.", err=True)
    return ExitCode.CLEAN
