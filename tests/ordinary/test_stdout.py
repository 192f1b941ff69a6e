"""Standard output that cannot take the report: a full device, a closed descriptor, a pipe
whose reader has gone. Real descriptors, the real program."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import ORCH_REVIEW, _run_env, make_planted_repo, run_cli
from tests.scripted import PLANTED_INJECTION, ReviewScript, planted_script, refute

needs_dev_full = pytest.mark.skipif(
    not Path("/dev/full").is_char_device(), reason="no /dev/full here"
)


def _run_in_shell(
    repo: Path, env: dict[str, str], redirect: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """``orch-review ARGS REDIRECT`` run by bash, as a user types it."""
    command = ["bash", "-c", f'"$@" {redirect}', "bash", *ORCH_REVIEW, *args]
    return subprocess.run(
        command, cwd=repo, env=_run_env(env), stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip


def _run_into_gone_pipe(
    repo: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """``orch-review ARGS | head``, where head has already read its fill and gone: the
    pipe's read end is closed before orch-review writes."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [*ORCH_REVIEW, *args], cwd=repo, env=_run_env(env), stdout=write,
            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)


@needs_dev_full
def test_a_review_printed_on_a_full_device_is_exit_2_and_kept(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    env = {**api_env, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    fake_api.policy = planted_script()

    result = _run_in_shell(repo, env, "> /dev/full", "--all", "--no-progress")

    said = " ".join(result.stderr.split())
    assert result.returncode == 2, result.stderr
    assert "this is a bug" not in said
    assert "standard output" in said and "No space left on device" in said
    assert "`orch-review journal show-report` shows it again" in said
    paid = len(fake_api.message_requests)
    shown = run_cli(repo, env, "journal", "show-report")
    assert shown.returncode == 0 and "app.py" in shown.stdout, shown.stderr
    assert len(fake_api.message_requests) == paid


@pytest.mark.parametrize("command", [("--all",), ("pr", "7"), ("mr", "7")])
def test_a_review_with_stdout_closed_is_exit_2_before_any_request(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory,
    command: tuple[str, ...],
) -> None:  # fmt: skip
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = _run_in_shell(repo, api_env, ">&-", *command, "--no-progress")

    assert result.returncode == 2, result.stderr
    assert "standard output is closed" in result.stderr
    assert "this is a bug" not in result.stderr
    assert fake_api.message_requests == []


@pytest.mark.parametrize("redirect", ["> /dev/full", ">&-"])
@pytest.mark.parametrize("command", [("plan", "--all"), ("config",), ("--version",), ("--help",)])
def test_other_commands_on_an_unwritable_stdout_are_exit_2(
    api_env: dict[str, str], git_repo: GitRepoFactory, redirect: str, command: tuple[str, ...]
) -> None:
    if "full" in redirect and not Path("/dev/full").is_char_device():
        pytest.skip("no /dev/full here")
    repo = make_planted_repo(git_repo)

    result = _run_in_shell(repo, api_env, redirect, *command)

    assert result.returncode == 2, result.stderr
    assert "standard output" in result.stderr
    assert "this is a bug" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("findings", [True, False])
def test_a_reader_that_stops_reading_leaves_the_exit_status_of_the_findings(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, findings: bool
) -> None:
    repo = make_planted_repo(git_repo)
    script = planted_script()
    if not findings:
        injection = dataclasses.replace(PLANTED_INJECTION, verdict=refute)
        script = ReviewScript([injection, *script.concerns[1:]])
    fake_api.policy = script

    result = _run_into_gone_pipe(repo, api_env, "--all", "--no-progress")

    assert result.returncode == (1 if findings else 0), result.stderr
    assert "this is a bug" not in result.stderr and "Traceback" not in result.stderr
    assert "Exception ignored" not in result.stderr


@pytest.mark.parametrize("inside", [".git", ".git/objects"])
def test_running_inside_the_git_directory_says_where_to_run(
    api_env: dict[str, str], git_repo: GitRepoFactory, inside: str
) -> None:
    repo = make_planted_repo(git_repo)

    result = run_cli(repo / inside, api_env, "plan")

    assert result.returncode == 2, result.stderr
    assert f"run orch-review in {repo}" in result.stderr
    assert "this is a bug" not in result.stderr
