"""Every command's --help, as the real CLI prints it on 80- and 120-column terminals.

The commands are listed from the click group, so a new command gets its golden files (and
fails until they are written). Golden files are in tests/cli/golden/help/; regenerate with
``UPDATE_GOLDEN=1 pytest tests/cli/test_help_golden.py`` and read the diff as a new user would.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from orch_review.cli import main
from tests.cli.snapshots import GOLDEN, assert_snapshot
from tests.helpers import run_cli

# Every test here starts a shell or an orch-review subprocess.
pytestmark = pytest.mark.slow

WIDTHS = (80, 120)


def _command_paths(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            yield from _command_paths(command.commands[name], (*path, name))


COMMANDS = list(_command_paths(main))


def _command_rows(lines: list[str]) -> list[str]:
    """The rows of the Commands section, where click cuts a summary that is too long."""
    start = lines.index("Commands:") + 1 if "Commands:" in lines else len(lines)
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append(line.rstrip())
    return rows


def _golden_name(path: tuple[str, ...], width: int) -> str:
    return f"help/{'-'.join(('orch-review', *path))}-{width}.txt"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "orch-review")
def test_help_matches_golden_and_fits_the_terminal(
    path: tuple[str, ...], width: int, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCH_REVIEW_"))}
    env.update({"COLUMNS": str(width), "NO_COLOR": "1", "TERM": "dumb"})

    result = run_cli(tmp_path, env, *path, "--help")

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Usage: {' '.join(('orch-review', *path))} ")
    too_wide = [line for line in lines if len(line) > width]
    assert too_wide == [], f"lines wider than {width} columns"
    assert not [row for row in _command_rows(lines) if row.endswith("...")], "a summary was cut"
    assert_snapshot(_golden_name(path, width), result.stdout)


def test_every_golden_help_file_belongs_to_a_command() -> None:
    expected = {_golden_name(path, width) for path in COMMANDS for width in WIDTHS}
    present = {f"help/{file.name}" for file in (GOLDEN / "help").glob("*.txt")}
    assert present <= expected, "golden files of commands that no longer exist"
