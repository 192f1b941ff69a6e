"""The README's settings table agrees with the code: keys, environment variables and flags."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from orch_review.cli import main
from orch_review.config import settings

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| `([a-z-]+)` \| (.*?) \| (.*?) \| (.*?) \| (.*) \|$")
# Keys that are tables or lists of tables: no environment variable, no flag.
STRUCTURED = {"path-instructions", "prices"}


def _rows() -> dict[str, tuple[str, str]]:
    """key -> (environment cell, flag cell) from the Configuration table."""
    text = README.read_text(encoding="utf-8")
    table = text.split("| key | default | environment | flag | meaning |", 1)[1]
    rows = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        match = ROW.match(line)
        assert match, f"malformed settings row: {line}"
        rows[match.group(1)] = (match.group(3), match.group(4))
    return rows


def _review_options() -> dict[str, click.Option]:
    command = main.commands["review"]
    return {
        opt: param
        for param in command.params
        if isinstance(param, click.Option)
        for opt in (*param.opts, *param.secondary_opts)
    }


def test_every_setting_is_documented_and_every_documented_key_exists() -> None:
    documented = set(_rows())
    keys = {key.kebab for key in settings._KEYS}
    assert documented - STRUCTURED == keys


@pytest.mark.parametrize("key", sorted(k.kebab for k in settings._KEYS))
def test_the_environment_variable_is_the_one_read(key: str) -> None:
    env_cell, _ = _rows()[key]
    expected = next(k.env_var for k in settings._KEYS if k.kebab == key)
    assert env_cell.split()[0] == f"`{expected}`"


@pytest.mark.parametrize("key", sorted(k.kebab for k in settings._KEYS))
def test_a_documented_flag_exists_and_sets_that_key(key: str, tmp_path: Path) -> None:
    _, flag_cell = _rows()[key]
    flags = re.findall(r"`(--[a-z-]+)`", flag_cell)
    options = _review_options()
    for flag in flags:
        assert flag in options, f"README names {flag} for `{key}`, but review has no such flag"
        param = options[flag]
        snake = key.replace("-", "_")
        assert param.name in {snake, f"no_{snake}", f"{snake}_path"} or (
            key == "journal-path" and param.name == "journal_path"
        ), f"{flag} sets {param.name}, not {key}"


def test_flags_that_set_a_setting_are_documented() -> None:
    documented = {
        flag for _, cell in _rows().values() for flag in re.findall(r"`(--[a-z-]+)`", cell)
    }
    keys = {key.name for key in settings._KEYS}
    for flag, param in _review_options().items():
        name = param.name or ""
        if name in keys or name.removeprefix("no_") in keys:
            assert flag in documented, f"{flag} sets `{name}` but the README's table omits it"


def test_request_timeout_flag_is_accepted_and_checked(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["review", "--request-timeout", "abc"])
    assert result.exit_code == 2
    assert "--request-timeout" in result.output
