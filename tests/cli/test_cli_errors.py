"""What the user sees when something is wrong: one sentence, the right exit code."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from orch_review import __version__
from orch_review.cli import main
from orch_review.cli.exits import handle_errors
from orch_review.errors import ExitCode
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script


def _env_without_credentials() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


@pytest.mark.slow
def test_help_and_version_need_no_key(tmp_path: Path) -> None:
    env = _env_without_credentials()
    version = run_cli(tmp_path, env, "--version")
    assert version.returncode == 0
    assert __version__ in version.stdout
    helped = run_cli(tmp_path, env, "--help")
    assert helped.returncode == 0
    assert "ANTHROPIC_API_KEY" in helped.stdout
    review_help = run_cli(tmp_path, env, "review", "--help")
    assert "Exit codes" in review_help.stdout and "--fail-on" in review_help.stdout


def test_missing_api_key_is_one_clear_sentence(git_repo: GitRepoFactory) -> None:
    repo = make_planted_repo(git_repo)

    result = run_cli(repo, _env_without_credentials(), "--all")

    assert result.returncode == 2
    assert "set ANTHROPIC_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_rejected_key_is_reported_without_traceback(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.expected_key = "the-real-key"

    result = run_cli(repo, api_env, "--all", "--no-progress")

    assert result.returncode == 2
    assert "rejected the credentials" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(fake_api.message_requests) == 1  # an auth failure is not retried


def test_not_a_git_repository(tmp_path: Path, api_env: dict[str, str]) -> None:
    result = run_cli(tmp_path, api_env, "--all")

    assert result.returncode == 2
    assert "is not inside a git repository" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_config_names_key_and_file(api_env: dict[str, str], git_repo: GitRepoFactory) -> None:
    repo = make_planted_repo(git_repo)
    (repo / ".orch-review.toml").write_text("max-concurrent = 'ten'\n")

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 2
    assert "max-concurrent" in result.stderr and ".orch-review.toml" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_model_is_a_configuration_error(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("status", status=404, error_type="not_found_error")

    result = run_cli(repo, api_env, "--all", "--model", "claude-nonexistent", "--no-progress")

    assert result.returncode == 2
    assert "does not know model `claude-nonexistent`" in result.stderr


def test_base_url_without_key_is_enough(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    env = {k: v for k, v in api_env.items() if k != "ANTHROPIC_API_KEY"}

    result = run_cli(repo, env, "--all")

    assert result.returncode == 1, result.stderr


def test_budget_cap_stops_new_agents_and_marks_the_review_incomplete(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all", "--max-agents", "1", "--max-concurrent", "1")

    assert result.returncode == 3, result.stderr
    assert "agent cap reached (1 agent)" in result.stdout
    assert "NOT COVERED" in result.stdout
    assert len(fake_api.requests_for("subagent")) == 2  # the one agent allowed, two turns


def test_crash_writes_a_log_and_exits_4(tmp_path: Path) -> None:
    import click

    @click.command()
    @handle_errors
    def broken() -> None:
        raise RuntimeError("boom")

    result = CliRunner().invoke(broken, env={"ORCH_REVIEW_CACHE_DIR": str(tmp_path)})

    assert result.exit_code == 4
    assert "unexpected error: RuntimeError: boom" in result.output
    logs = list(tmp_path.glob("crash-*.log"))
    assert len(logs) == 1
    text = logs[0].read_text()
    assert "RuntimeError: boom" in text and f"orch-review {__version__}" in text


def test_usage_error_is_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--all", "--effort", "extreme"])
    assert result.exit_code == 2
    assert "extreme" in result.output


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository to another uid")
@pytest.mark.parametrize("scope", [[], ["--staged"], ["--all"], ["--base", "main"]])
def test_repository_of_another_user_says_how_to_trust_it(
    scope: list[str], api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    for path in [repo, *repo.rglob("*")]:
        os.lchown(path, 12345, 12345)

    for command in (["plan", *scope], scope, ["hook"]):
        result = run_cli(repo, api_env, *command)

        assert result.returncode == 2, (command, result.stderr)
        assert f"git config --global --add safe.directory {repo}" in result.stderr
        assert "Traceback" not in result.stderr and "bug" not in result.stderr


def test_the_docs_list_every_exit_code() -> None:
    table = (Path(__file__).parents[2] / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    table = table.split("# Exit codes", 1)[1].split("\n## ", 1)[0]
    listed = {
        int(line.split("|")[1]) for line in table.splitlines() if line[:3].strip("| ").isdigit()
    }

    assert listed == {int(code) for code in ExitCode}
