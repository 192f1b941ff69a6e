"""git and bash missing from PATH (slim and Alpine images): exit 2 naming what to install,
before any request to the API."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script


def _path_with(tmp_path: Path, *programs: str) -> str:
    """A PATH of one directory holding only ``programs`` (and python)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in (*programs, "python3"):
        found = shutil.which(program) if program != "python3" else sys.executable
        assert found is not None, program
        os.symlink(found, bin_dir / program)
    return str(bin_dir)


@pytest.mark.slow
@pytest.mark.parametrize("command", [(), ("plan",), ("--staged",)])
def test_without_git_exit_2_says_to_install_it(
    command: tuple[str, ...],
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    repo = make_planted_repo(git_repo)
    (repo / "app.py").write_text("changed = True\n")
    fake_api.policy = planted_script()
    env = {**api_env, "PATH": _path_with(tmp_path, "bash")}

    result = run_cli(repo, env, *command)

    assert result.returncode == 2, result.stderr
    assert "git is not installed or not on PATH" in result.stderr
    assert "apt-get install git" in result.stderr and "apk add git" in result.stderr
    assert "Traceback" not in result.stderr and "bug" not in result.stderr
    assert fake_api.requests == []


@pytest.mark.slow
def test_without_bash_exit_2_before_any_request(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    env = {**api_env, "PATH": _path_with(tmp_path, "git")}

    result = run_cli(repo, env, "--all", "--sandbox", "off")

    assert result.returncode == 2, result.stdout + result.stderr
    assert "bash is not installed or not on PATH" in result.stderr
    assert "apk add bash" in result.stderr
    assert "Traceback" not in result.stderr and "bug" not in result.stderr
    assert fake_api.requests == []
    # `plan` needs no shell.
    assert run_cli(repo, env, "plan", "--all").returncode == 0
