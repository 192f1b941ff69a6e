"""The completeness critic: what the first wave missed is reviewed in a second wave."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script, sweep_files


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
    concerns = [c["concern"] for c in data["concerns"]]
    assert concerns[0] == division.subtask and concerns[2] == injection.subtask
    assert sweep_files(concerns[1]) == ["README.md", "app.py"]  # the engine's sweep
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

    assert len(json.loads(out.read_text())["concerns"]) == 3  # two, and the sweep of README.md


def test_a_critic_that_never_reports_is_a_warning_in_every_report(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    from tests.scripted import PLANTED_FILES

    repo = git_repo({**PLANTED_FILES, "REVIEW.md": "Money is always integer cents.\n"})
    script = planted_script()

    def policy(request: ModelRequest) -> Reply:
        if not request.has_tool("report_concerns"):
            return script(request)
        if request.assistant_turns == 0:  # a proposal it refuses: too many concerns
            return Reply.tool_use("report_concerns", {"concerns": [f"c{n}" for n in range(11)]})
        return Reply.text("I have nothing more to add.")

    fake_api.policy = policy
    out, sarif = tmp_path / "r.json", tmp_path / "r.sarif"

    result = run_cli(
        repo,
        {**api_env, "ORCH_REVIEW_CRITIC": "true"},
        "--all",
        "--json",
        str(out),
        "--sarif",
        str(sarif),
    )

    assert result.returncode == 1, result.stderr  # the findings decide, not the critic
    critic = [r for r in fake_api.message_requests if r.model_request().has_tool("report_concerns")]
    assert len(critic) == 4  # refused proposal, reminder, forced final turn; then failed
    assert critic[-1].body["tool_choice"] == {"type": "tool", "name": "report_concerns"}
    assert "Money is always integer cents." in critic[0].model_request().first_user_text
    warning = "the completeness critic failed: ended without calling report_concerns"
    assert f"warning: {warning}" in result.stdout
    assert any(w.startswith(warning) for w in json.loads(out.read_text())["warnings"])
    notes = json.loads(sarif.read_text())["runs"][0]["invocations"][0]
    assert any(
        n["message"]["text"].startswith(warning) for n in notes["toolExecutionNotifications"]
    )
