"""The completeness critic: what the first wave missed is reviewed in a second wave."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script


def _critic_requests(api: FakeMessagesAPI) -> int:
    return sum(1 for r in api.message_requests if r.model_request().has_tool("report_concerns"))


def test_critic_adds_the_concern_the_first_wave_missed(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    script = planted_script()
    injection, division = script.concerns
    script.subtasks = [division.subtask]  # the first wave misses the injection
    script.critic_concerns = [injection.subtask]
    fake_api.policy = script
    out = tmp_path / "report.json"

    result = run_cli(repo, {**api_env, "ORCH_REVIEW_CRITIC": "true"}, "--all", "--json", str(out))

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    assert "completeness critic added 1 concern" in result.stdout
    critic_task = next(
        r.model_request().first_user_text
        for r in fake_api.message_requests
        if r.model_request().has_tool("report_concerns")
    )
    assert division.subtask in critic_task and "<reviewed_concerns>" in critic_task
    data = json.loads(out.read_text())
    assert [c["concern"] for c in data["concerns"]] == [division.subtask, injection.subtask]
    assert data["usage"]["by_role"]["critic"]["requests"] == 2

    fake_api.reset()
    fake_api.policy = script
    again = run_cli(repo, {**api_env, "ORCH_REVIEW_CRITIC": "true"}, "--all")
    assert again.returncode == 1 and fake_api.message_requests == []  # all journaled


def test_critic_runs_by_default_for_a_full_audit_only(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    env = {k: v for k, v in api_env.items() if k != "ORCH_REVIEW_CRITIC"}

    run_cli(repo, env, "--all")
    assert _critic_requests(fake_api) == 2

    fake_api.reset()
    fake_api.policy = planted_script()
    run_cli(repo, env, "--all", "--no-critic", "--no-journal")
    assert _critic_requests(fake_api) == 0


def test_critic_proposing_nothing_adds_nothing(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    out = tmp_path / "r.json"

    run_cli(repo, {**api_env, "ORCH_REVIEW_CRITIC": "true"}, "--all", "--json", str(out))

    assert len(json.loads(out.read_text())["concerns"]) == 2
