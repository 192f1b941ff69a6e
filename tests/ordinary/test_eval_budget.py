"""`eval` and money: the estimate of all the cases first, a total cap no case starts
beyond (flag or setting), and the `confirm-above-usd` question in a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git, write
from tests.eval.scripted import BASE_FILES, BUGGY_FILES, review_policy
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.ptys import run_cli_on_pty

pytestmark = pytest.mark.slow
QUESTION = b"Continue? [y/N]"


def _cases(git_repo: GitRepoFactory, api_env: dict[str, str], tmp_path: Path) -> Path:
    """Two mined cases (a bug and a clean change) of a small history."""
    repo = git_repo(BASE_FILES)
    for message, files in (
        ("Add a total helper", {"extra.py": "def twice(x):\n    return 2 * x\n"}),
        ("Look users up by name", {"app.py": BUGGY_FILES["app.py"]}),
        ("fix: parameterise the user query", {"app.py": BASE_FILES["app.py"]}),
    ):
        write(repo, files)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", message)
    cases = tmp_path / "cases.jsonl"
    mined = run_cli(repo, api_env, "eval", "mine", "--horizon", "1", "-o", str(cases))
    assert mined.returncode == 0, mined.stderr
    return cases


def _env(api_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**api_env, "ORCH_REVIEW_CACHE_DIR": str(tmp_path / "cache")}


def test_the_estimate_comes_first_and_a_spent_total_starts_no_case(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    cases = _cases(git_repo, api_env, tmp_path)
    fake_api.policy = review_policy()

    result = run_cli(
        tmp_path, _env(api_env, tmp_path), "eval", str(cases), "--max-total-cost-usd", "0.001"
    )

    said = result.stderr
    assert result.returncode == 3, said
    first = said.splitlines()[0]
    assert first.startswith("orch-review eval: estimated $") and "for 2 cases" in first
    assert "total cap $0.001" in first
    assert said.count("not run: the total budget") == 2
    assert fake_api.message_requests == []


def test_the_setting_caps_the_total_as_the_flag_does(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    cases = _cases(git_repo, api_env, tmp_path)
    fake_api.policy = review_policy()
    (tmp_path / ".orch-review.toml").write_text("eval-max-total-cost-usd = 0.001\n")

    result = run_cli(tmp_path, _env(api_env, tmp_path), "eval", str(cases))

    assert result.returncode == 3, result.stderr
    assert "not run: the total budget" in result.stderr
    assert fake_api.message_requests == []


def test_within_the_total_every_case_runs(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    cases = _cases(git_repo, api_env, tmp_path)
    fake_api.policy = review_policy()

    result = run_cli(
        tmp_path, _env(api_env, tmp_path), "eval", str(cases), "--max-total-cost-usd", "50"
    )

    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0].startswith("orch-review eval: estimated $")
    assert "not run" not in result.stderr


def test_a_total_cap_that_is_not_positive_is_a_usage_error(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    cases = _cases(git_repo, api_env, tmp_path)

    result = run_cli(tmp_path, api_env, "eval", str(cases), "--max-total-cost-usd", "-1")

    assert result.returncode == 2, result.stderr
    assert fake_api.message_requests == []


def test_an_expensive_eval_asks_first_in_a_terminal(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    cases = _cases(git_repo, api_env, tmp_path)
    fake_api.policy = review_policy()
    env = {k: v for k, v in _env(api_env, tmp_path).items() if k not in ("CI", "GITHUB_ACTIONS")}
    env.update(TERM="xterm-256color", ORCH_REVIEW_CONFIRM_ABOVE_USD="0.0001")

    code, output = run_cli_on_pty(tmp_path, env, 100, "eval", str(cases), answer=(QUESTION, b"n\n"))

    assert code == 2, output[-2000:]
    assert "estimated $" in output and "eval not started" in output
    assert fake_api.message_requests == []
