"""When no request to the API can succeed, the first such answer ends the review: exit 2,
one sentence naming the endpoint, and no further request from any agent."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.conftest import GitRepoFactory
from tests.engine.api.test_client import CREDIT_TOO_LOW, closed_port_url
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import is_sweep, planted_script

pytestmark = pytest.mark.slow


def test_an_unreachable_endpoint_fails_at_once_with_exit_2_naming_it(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    url = closed_port_url()
    env = {**api_env, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-secret-0123"}

    started = time.monotonic()
    result = run_cli(repo, env, "--all", "--no-progress", timeout=120)
    print(f"failed after {time.monotonic() - started:.1f} s")

    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("orch-review: sandbox: ")  # said first, as every review does
    lines = _past_the_sandbox_line(result.stderr)
    assert lines == [
        f"orch-review: Cannot reach the API at {url} (connection refused): check "
        "ANTHROPIC_BASE_URL and that the server there is up and reachable from this machine."
    ]
    assert "sk-ant-secret-0123" not in result.stderr
    assert "retrying" not in result.stderr  # not one retry, in the main agent or a sweep


def _past_the_sandbox_line(stderr: str) -> list[str]:
    """The lines of ``stderr`` after the one that says which sandbox agents work in."""
    return [
        line for line in stderr.strip().splitlines() if not line.startswith("orch-review: sandbox:")
    ]


def _subagent(request: ModelRequest) -> bool:
    return request.role == "subagent" and not is_sweep(request.first_user_text)


def _sweep(request: ModelRequest) -> bool:
    return request.role == "subagent" and is_sweep(request.first_user_text)


def _verifier(request: ModelRequest) -> bool:
    return request.role == "verifier"


def _critic(request: ModelRequest) -> bool:
    return request.has_tool("report_concerns")


def _main(request: ModelRequest) -> bool:
    return request.role == "main"


@pytest.mark.parametrize(
    ("phase", "match", "status", "message", "said"),
    [
        ("main", _main, 401, None, "rejected the credentials (401)"),
        ("subagent", _subagent, 400, CREDIT_TOO_LOW, CREDIT_TOO_LOW),
        ("verifier", _verifier, 403, None, "HTTP 403 permission_error"),
        ("sweep", _sweep, 404, "model: claude-x", "does not know model"),
        ("critic", _critic, 400, CREDIT_TOO_LOW, CREDIT_TOO_LOW),
    ],
)
def test_the_first_answer_no_request_survives_stops_every_phase(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    phase: str,
    match: Callable[[ModelRequest], bool],
    status: int,
    message: str | None,
    said: str,
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fault = fake_api.add_fault("status", status=status, message=message, match=match, times=None)
    env = {**api_env, "ORCH_REVIEW_CRITIC": "true" if phase == "critic" else "false"}

    # One request in flight at a time: after the fatal answer, any request would be a new one.
    result = run_cli(repo, env, "--all", "--no-progress", "--max-concurrent", "1")

    assert result.returncode == 2, result.stderr
    assert said in result.stderr and f"The API at {fake_api.base_url} " in result.stderr
    assert len(_past_the_sandbox_line(result.stderr)) == 1, result.stderr
    assert "test-key" not in result.stderr and "Traceback" not in result.stderr
    assert fault.hits == 1
    assert fake_api.message_requests[-1].fault == "status"  # nothing was sent after it
