"""``orch-review merge``: one report from the JSON reports of sharded reviews."""

from __future__ import annotations

from pathlib import Path

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import (
    EXIT_CODES_HELP,
    fail_on_option,
    format_option,
    report_file_options,
)
from orch_review.errors import ExitCode


@click.command(
    "merge", epilog=EXIT_CODES_HELP, short_help="Combine the reports of --shard reviews."
)
@click.argument("reports", nargs=-1, required=True, type=click.Path(path_type=Path))
@fail_on_option("high")  # merging reads no configuration
@report_file_options
@format_option
@handle_errors
def merge_command(
    reports: tuple[Path, ...],
    fail_on: str,
    json_file: Path | None,
    sarif_file: Path | None,
    output_format: str,
) -> ExitCode:
    """Combine the JSON reports of `--shard K/N` reviews into one report.

    Coverage is summed, duplicate findings merged by fingerprint; a shard whose report is
    missing or unreadable makes the result incomplete (exit 3).
    """
    from orch_review import core
    from orch_review.cli.output import check_stdout, print_report_as
    from orch_review.reporters.files import report_files

    stdout_taken = check_stdout(report_files(json_file, sarif_file), output_format)
    env = core.take_environment()
    report = core.merge(reports, json_file=json_file, sarif_file=sarif_file, env=env)
    print_report_as(report, output_format, stdout_taken=stdout_taken)
    return report.exit_code(fail_on)
