"""`run_cli`'s fork server gives each run what a new `python -P -m orch_review` would have:
the run's directory, environment, arguments and streams, and its exit status."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git
from tests.helpers import ORCH_REVIEW, cli_env, cli_launcher, popen_cli, run_cli

pytestmark = pytest.mark.slow


def _spawned(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ORCH_REVIEW, *args], cwd=cwd, env=cli_env(env), capture_output=True, text=True,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_a_forked_run_ends_and_prints_as_a_spawned_one(tmp_path: Path) -> None:
    env = dict(os.environ)
    for args in (("--version",), ("--no-such-option",), ("config", "--help")):
        forked, spawned = run_cli(tmp_path, env, *args), _spawned(tmp_path, env, *args)
        assert (forked.returncode, forked.stdout, forked.stderr) == (
            spawned.returncode,
            spawned.stdout,
            spawned.stderr,
        ), args
    assert run_cli(tmp_path, env, "--no-such-option").returncode == 2


def test_each_run_has_its_own_directory_and_environment(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for repo in (first, second):
        repo.mkdir()
        git(repo, "init", "-q")
    (first / ".orch-review.toml").write_text("max-agents = 9\n")
    env = {**os.environ, "ORCH_REVIEW_MAX_SUBTASKS": "7"}

    one = run_cli(first, env, "config")
    other = run_cli(second, dict(os.environ), "config")

    assert "max-agents = 9" in one.stdout and "max-subtasks = 7" in one.stdout, one.stdout
    assert "max-agents = 9" not in other.stdout and "max-subtasks = 7" not in other.stdout


def test_a_background_run_has_pipes_an_exit_status_and_takes_signals(tmp_path: Path) -> None:
    env = dict(os.environ)
    proc = popen_cli(tmp_path, env, "--version")
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (0, _spawned(tmp_path, env, "--version").stdout, "")

    # A signal goes to the forked child (which may have ended already), not to the server.
    killed = popen_cli(tmp_path, env, "--no-such-option")
    killed.send_signal(signal.SIGKILL)
    killed.wait(60)
    assert killed.returncode in (-signal.SIGKILL, 2)
    assert run_cli(tmp_path, env, "--version").returncode == 0  # the server lives on


def test_a_launcher_runs_orch_review_for_a_program_the_test_starts(tmp_path: Path) -> None:
    env = cli_env(dict(os.environ))
    launcher = cli_launcher(tmp_path / "bin", env)
    done = subprocess.run(
        ["sh", "-c", f'"{launcher}" --no-such-option'], cwd=tmp_path, env=env,
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip
    spawned = _spawned(tmp_path, env, "--no-such-option")
    assert (done.returncode, done.stdout, done.stderr) == (2, spawned.stdout, spawned.stderr)

    # `mcp` serves until its stdin closes: the launcher's SIGTERM reaches it, and ends it.
    git(tmp_path, "init", "-q")
    serving = subprocess.Popen(
        [str(launcher), "mcp"], cwd=tmp_path, env=env, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            serving.wait(2)  # not an assertion on time: it must still be serving
        serving.send_signal(signal.SIGTERM)
        serving.communicate(timeout=60)
    finally:
        serving.kill()
    assert serving.returncode != 0
