"""API faults during a review: what is retried, what is isolated, what the user is told."""

from __future__ import annotations

import re

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import is_sweep, planted_script, sweep_files


def _division_subagent(request: ModelRequest) -> bool:
    return request.role == "subagent" and "division" in request.first_user_text


def _calc_subagent(request: ModelRequest) -> bool:
    """Any subagent about calc.py: the scripted concern, or the engine's sweep of it."""
    return request.role == "subagent" and "calc.py" in request.first_user_text


def _injection_subagent(request: ModelRequest) -> bool:
    return request.role == "subagent" and "injection" in request.first_user_text


def test_429_and_529_are_retried(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("status", status=429, retry_after=0, match=_injection_subagent)
    fake_api.add_fault("status", status=529, retry_after=0, match=_injection_subagent)

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    faulted = [r.fault for r in fake_api.message_requests if r.fault]
    assert faulted == ["status", "status"]


def test_stream_cut_off_mid_response_is_retried(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("drop_stream", match=_injection_subagent)

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    injection = [r for r in fake_api.message_requests if _injection_subagent(r.model_request())]
    assert [r.fault for r in injection] == ["drop_stream", None, None]


def test_error_event_inside_a_200_stream_is_retried(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("error_event", match=lambda r: r.role == "verifier")

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    assert [r.fault for r in fake_api.requests_for("verifier")].count("error_event") == 1


def test_hanging_request_times_out_and_is_retried(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("hang", delay=60, match=_injection_subagent)

    # Every request of the review gets this timeout: a few seconds, so that the others finish
    # within it on a loaded machine, while the hanging one (60 s) clearly does not.
    result = run_cli(repo, {**api_env, "ORCH_REVIEW_REQUEST_TIMEOUT": "5"}, "--all")

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    injection = [r for r in fake_api.message_requests if _injection_subagent(r.model_request())]
    assert injection[0].fault == "hang"


def test_a_stream_that_sends_only_pings_is_abandoned_at_the_request_timeout(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    # Alive to the HTTP layer (a ping every 0.1 s resets its read timeout), stalled for good.
    stall = fake_api.add_fault("pings", delay=0.1, match=_injection_subagent)

    result = run_cli(repo, api_env, "--all", "--request-timeout", "1", timeout=300)

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    assert stall.hits == 1
    injection = [r for r in fake_api.message_requests if _injection_subagent(r.model_request())]
    assert injection[0].fault == "pings"
    assert injection[1].body == injection[0].body  # the same request, sent again
    assert "no content for 1 s" in result.stderr  # the retry says why


def test_failing_subagent_is_isolated_and_the_review_is_incomplete(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("status", status=500, times=None, match=_calc_subagent)

    result = run_cli(repo, {**api_env, "ORCH_REVIEW_MAX_RETRIES": "1"}, "--all")

    assert result.returncode == 3, result.stderr
    assert "app.py:6" in result.stdout  # the other concern finished and was verified
    not_covered = [ln for ln in result.stdout.splitlines() if ln.startswith("NOT COVERED ")]
    assert any("concern [3] failed" in ln and "calc.py" in ln for ln in not_covered)
    assert "Check calc.py for division by zero" in result.stdout
    assert "INCOMPLETE: 2 of 3 files not covered (README.md, calc.py)" in result.stdout
    division = [r for r in fake_api.message_requests if _division_subagent(r.model_request())]
    assert len(division) == 2  # one attempt and one retry, then given up
    calc = [r for r in fake_api.message_requests if _calc_subagent(r.model_request())]
    assert len(calc) == 4  # and the same for the engine's sweep of calc.py


def test_a_failed_concern_whose_file_the_sweep_covers_is_complete(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("status", status=500, times=None, match=_division_subagent)

    result = run_cli(repo, {**api_env, "ORCH_REVIEW_MAX_RETRIES": "0"}, "--all")

    assert result.returncode == 1, result.stderr  # every file covered: findings decide
    assert "3 of 3 files covered." in result.stdout
    assert "UNFINISHED [2] Check calc.py for division by zero" in result.stdout
    assert "Their files were covered all the same" in result.stdout


def test_failed_concern_is_retried_on_the_next_run(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("status", status=500, times=None, match=_calc_subagent)
    env = {**api_env, "ORCH_REVIEW_MAX_RETRIES": "0"}
    assert run_cli(repo, env, "--all").returncode == 3
    fake_api.reset()
    fake_api.policy = planted_script()

    result = run_cli(repo, env, "--all")

    assert result.returncode == 1, result.stderr
    assert {r.model_request().role for r in fake_api.message_requests} == {
        "main",
        "subagent",
        "verifier",
    }
    tasks = {r.model_request().first_user_text for r in fake_api.requests_for("subagent")}
    # The failed concern runs again and the sweep covers what is left: README.md.
    assert sorted(sweep_files(t) if is_sweep(t) else ["division"] for t in tasks) == [
        ["README.md"],
        ["division"],
    ]


def test_a_subagent_that_never_reports_is_told_failed_once(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    script = planted_script()

    def policy(request: ModelRequest) -> Reply:
        if _division_subagent(request):  # looks around forever, never reports
            return Reply.tool_use("bash", {"command": f"echo look {request.assistant_turns}"})
        return script(request)

    fake_api.policy = policy
    env = {**api_env, "ORCH_REVIEW_SUBAGENT_MAX_TURNS": "3"}

    result = run_cli(repo, env, "--all")

    failed = [line for line in result.stderr.splitlines() if "] failed: " in line]
    assert len(failed) == 1, result.stderr
    assert "division" in failed[0]
    # Totals count it once, whatever else finished first, and never count it again.
    assert re.search(r"subagents: (\d+ done, )?1 failed\b", failed[0]), failed[0]
    assert "2 failed" not in result.stderr
    assert re.search(r"subagents: \d+ done, 1 failed", result.stderr.splitlines()[-1])
