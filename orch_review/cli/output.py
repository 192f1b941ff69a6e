"""Printing a report on stdout in the format a command was asked for."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from orch_review.findings.report import Report


def print_report_as(
    report: Report,
    output_format: str,
    *,
    quiet: bool = False,
    verbose: bool = False,
    files: tuple[Path, Mapping[str, str]] | None = None,
    stdout_taken: bool = False,
) -> None:
    """The terminal report for people, or the machine format asked for; ``files`` (the work
    tree and the environment) make each location a link to its file on a real terminal.
    With ``stdout_taken`` (a report file is ``-``), the terminal report goes to stderr."""
    if output_format == "text":
        from orch_review.cli.consoles import console, shows_links
        from orch_review.reporters.terminal import print_report

        stdout = console(stderr=stdout_taken)
        root = files[0] if files is not None and shows_links(stdout, files[1]) else None
        print_report(report, stdout, quiet=quiet, verbose=verbose, link_root=root)
        return
    from orch_review.reporters import registry

    click.echo(registry()[output_format](report), nl=False)


def check_stdout(files: list[tuple[str, Path]], output_format: str) -> bool:
    """True when a report file is ``-`` (standard output); a UsageError when ``--format``
    also asks for stdout."""
    from orch_review.errors import UsageError
    from orch_review.reporters.files import to_stdout

    taken = to_stdout(files)
    if taken and output_format != "text":
        name = next(name for name, path in files if str(path) == "-")
        raise UsageError(
            f"--{name} - and --format {output_format} would both print on stdout: write the "
            f"{name} report to a file, or drop --format."
        )
    return taken
