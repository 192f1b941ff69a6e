"""Printing a report on stdout in the format a command was asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from orch_review.findings.report import Report


def print_report_as(
    report: Report, output_format: str, *, quiet: bool = False, verbose: bool = False
) -> None:
    """The terminal report for people, or the machine format asked for."""
    if output_format == "text":
        from orch_review.cli.consoles import console
        from orch_review.reporters.terminal import print_report

        print_report(report, console(), quiet=quiet, verbose=verbose)
        return
    from orch_review.reporters import registry

    click.echo(registry()[output_format](report), nl=False)
