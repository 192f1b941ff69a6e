"""The completeness critic: what the first wave missed is reviewed in a second wave."""

from __future__ import annotations

import json
import threading
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
    assert "<confirmed_findings>" not in critic_task  # the list of concerns is its input
    data = json.loads(out.read_text())
    concerns = [c["concern"] for c in data["concerns"]]
    assert concerns[:2] == [division.subtask, injection.subtask]
    # The engine's sweep leaves app.py to the critic's concern, which covered it.
    assert sweep_files(concerns[2]) == ["README.md"] and len(concerns) == 3
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


BOUND = 60.0  # seconds; only reached when the critic waits for the first wave


def test_the_critic_starts_while_the_first_wave_still_runs(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    script = planted_script()
    injection, division = script.concerns
    script.subtasks = [division.subtask]
    script.critic_concerns = [injection.subtask]
    critic_asked = threading.Event()
    overlapped: list[bool] = []

    def policy(request: ModelRequest) -> Reply:
        if request.has_tool("report_concerns"):
            critic_asked.set()
        elif (
            request.role == "subagent"
            and division.key in request.first_user_text
            and request.assistant_turns == 1
        ):
            # The first wave's only subagent may not report before the critic has asked.
            overlapped.append(critic_asked.wait(BOUND))
        return script(request)

    fake_api.policy = policy
    out = tmp_path / "r.json"

    result = run_cli(repo, {**api_env, "ORCH_REVIEW_CRITIC": "true"}, "--all", "--json", str(out))

    assert result.returncode == 1, result.stderr
    assert overlapped == [True]
    roles = [
        ("critic" if m.has_tool("report_concerns") else m.role, m.first_user_text)
        for m in (r.model_request() for r in fake_api.message_requests)
    ]
    first_critic = next(n for n, (role, _) in enumerate(roles) if role == "critic")
    first_verifier = next(n for n, (role, _) in enumerate(roles) if role == "verifier")
    assert first_critic < first_verifier  # the critic did not wait for verification either
    # The critic's concern was reviewed and its finding verified, like the first wave's.
    assert any(role == "verifier" and injection.subtask in text for role, text in roles)
    data = json.loads(out.read_text())
    [confirmed] = [f for f in data["findings"] if f["path"] == "app.py"]
    assert confirmed["start_line"] == 6
    assert data["coverage"]["changed_files"]["complete"] is True


def test_a_critic_the_api_keeps_failing_is_recorded_and_the_review_goes_on(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault(
        "status", status=500, times=None, match=lambda r: r.has_tool("report_concerns")
    )
    out = tmp_path / "r.json"
    env = {**api_env, "ORCH_REVIEW_CRITIC": "true", "ORCH_REVIEW_MAX_RETRIES": "0"}

    result = run_cli(repo, env, "--all", "--json", str(out))

    assert result.returncode == 1, result.stderr  # the confirmed injection decides
    data = json.loads(out.read_text())
    assert any(w.startswith("the completeness critic failed:") for w in data["warnings"])
    assert "warning: the completeness critic failed:" in result.stdout
    assert len(data["concerns"]) == 3  # two, and the sweep of README.md


def test_files_left_to_a_critic_concern_that_failed_are_swept(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    script = planted_script()
    injection, division = script.concerns
    script.subtasks = [division.subtask]
    script.critic_concerns = [injection.subtask]

    def policy(request: ModelRequest) -> Reply:
        task = request.first_user_text
        if request.role == "subagent" and injection.subtask in task:
            return Reply.text("Looks fine to me." if request.assistant_turns else "Nothing here.")
        return script(request)

    fake_api.policy = policy
    out = tmp_path / "r.json"

    result = run_cli(repo, {**api_env, "ORCH_REVIEW_CRITIC": "true"}, "--all", "--json", str(out))

    assert result.returncode == 1, result.stderr  # the sweep found and verified the injection
    data = json.loads(out.read_text())
    statuses = [(c["status"], sweep_files(c["concern"])) for c in data["concerns"]]
    assert statuses == [
        ("reviewed", []),  # the first wave
        ("failed", []),  # the critic's concern about app.py
        ("reviewed", ["README.md"]),  # what nothing was about
        ("reviewed", ["app.py"]),  # what the failed concern left
    ]
    assert data["coverage"]["changed_files"]["complete"] is True
    assert any(f["path"] == "app.py" and f["start_line"] == 6 for f in data["findings"])
