"""A review estimated above `confirm-above-usd` asks first, in a terminal only; no request
reaches the API before the answer, and "no" starts nothing."""

from __future__ import annotations

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.ptys import run_cli_on_pty
from tests.scripted import planted_script

pytestmark = pytest.mark.slow

CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "TF_BUILD", "JENKINS_URL")
QUESTION = b"Continue? [y/N]"
# Far below what the planted review is estimated to cost, so it asks.
LOW = ("--all", "--no-progress", "--confirm-above-usd", "0.0001")


def _terminal_env(api_env: dict[str, str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in api_env.items() if k not in CI_VARIABLES}
    return {**env, "TERM": "xterm-256color", **extra}


def test_no_on_a_terminal_starts_nothing(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    code, output = run_cli_on_pty(
        repo, _terminal_env(api_env), 100, *LOW, answer=(QUESTION, b"n\n")
    )

    assert code == 2, output[-2000:]
    assert "Estimated $" in output and "confirm-above-usd ($0.0001" in output, output
    assert "calibrated on " in output and "budget for the high end" in output, output
    assert "review not started" in output and "--yes" in output
    assert fake_api.requests == []


def test_yes_on_a_terminal_runs_the_review(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    code, output = run_cli_on_pty(
        repo, _terminal_env(api_env), 100, *LOW, answer=(QUESTION, b"y\n")
    )

    assert code == 1, output[-2000:]
    assert output.count("Continue? [y/N]") == 1
    assert fake_api.message_requests


@pytest.mark.parametrize(
    ("extra", "args"),
    [({"CI": "true"}, ()), ({"GITHUB_ACTIONS": "true"}, ()), ({}, ("--yes",))],
    ids=["CI", "github-actions", "yes-flag"],
)
def test_ci_and_yes_never_ask_even_on_a_terminal(
    extra: dict[str, str],
    args: tuple[str, ...],
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    code, output = run_cli_on_pty(repo, _terminal_env(api_env, **extra), 100, *LOW, *args)

    assert code == 1, output[-2000:]
    assert "Continue?" not in output
    assert fake_api.message_requests


def test_off_a_terminal_it_never_asks(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    env = {k: v for k, v in api_env.items() if k not in CI_VARIABLES}

    done = run_cli(repo, env, *LOW)

    assert done.returncode == 1, done.stderr[-2000:]
    assert "Continue?" not in done.stderr + done.stdout
    assert fake_api.message_requests
