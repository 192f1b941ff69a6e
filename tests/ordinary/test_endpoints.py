"""Endpoints a user meets by mistake: no URL, a web page, a body too large, a rate-limit
storm, a server that accepts and never answers. Real local servers, the real SDK; waits are
recorded, not slept."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from orch_review.engine.api.client import ModelClient, Reply
from orch_review.errors import ApiUnavailable, ApiUnusable, ExitCode, RequestRejected
from tests.conftest import GitRepoFactory
from tests.fakes.http_server import Exchange, LocalHTTPServer
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.messages_api import Reply as FakeReply
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script

FIRST_WAIT, LONGEST_WAIT = 1.0, 30.0

PORTAL = (
    b"<!DOCTYPE html><html><head><title>Guest Wi-Fi: sign in</title></head>"
    b"<body><form>Accept the terms to continue</form></body></html>"
)


def _client(
    url: str, waits: list[float], *, max_retries: int = 4, timeout: float = 120
) -> ModelClient:
    return ModelClient(
        {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
        max_retries=max_retries,
        request_timeout=timeout,
        max_output_tokens=1000,
        effort="high",
        backoff=(FIRST_WAIT, LONGEST_WAIT),
        sleep=waits.append,
    )


def _ask(client: ModelClient) -> Reply:
    try:
        return client.complete(
            model="claude-test", system="system", tools=[],
            messages=[{"role": "user", "content": "Review this change."}],
        )  # fmt: skip
    finally:
        client.close()


class _Portal:
    """A captive portal: every request gets 200 and a sign-in page; counts the requests."""

    def __init__(self) -> None:
        self.requests = 0
        self._lock = threading.Lock()
        self.server = LocalHTTPServer(self._answer, name="portal")

    def _answer(self, exchange: Exchange) -> None:
        exchange.read_body()
        with self._lock:
            self.requests += 1
        exchange.begin(200, "text/html; charset=utf-8", {"Content-Length": str(len(PORTAL))})
        exchange.wfile.write(PORTAL)


@pytest.fixture
def portal() -> Iterator[_Portal]:
    serving = _Portal()
    serving.server.start()
    try:
        yield serving
    finally:
        serving.server.stop()


@pytest.mark.parametrize("url", ["not-a-url", "localhost:8080", "ftp://127.0.0.1/"])
def test_a_url_that_is_not_http_is_exit_2_at_once_naming_it(url: str) -> None:
    waits: list[float] = []

    with pytest.raises(ApiUnusable) as raised:
        _ask(_client(url, waits))

    assert raised.value.exit_code == ExitCode.USAGE
    assert waits == []  # not retried
    assert url.rstrip("/") in str(raised.value) and "ANTHROPIC_BASE_URL" in str(raised.value)


@pytest.mark.slow
def test_a_web_page_instead_of_the_api_is_exit_2_after_one_request(portal: _Portal) -> None:
    waits: list[float] = []

    with pytest.raises(ApiUnusable) as raised:
        _ask(_client(portal.server.base_url, waits))

    said = str(raised.value)
    assert raised.value.exit_code == ExitCode.USAGE
    assert portal.requests == 1 and waits == []
    assert portal.server.base_url in said and "text/html" in said
    assert "Guest Wi-Fi: sign in" in said


def test_a_body_too_large_is_not_retried(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda request: FakeReply.text("looks fine")
    fake_api.add_fault("status", status=413, error_type="request_too_large", times=None)
    waits: list[float] = []

    with pytest.raises(RequestRejected, match="413"):
        _ask(_client(fake_api.base_url, waits))

    assert waits == [] and len(fake_api.message_requests) == 1


def _patience(retries: int) -> float:
    """The least the 529 policy waits in all before it gives up (its waits without jitter)."""
    return sum(min(FIRST_WAIT * 2**n, LONGEST_WAIT) for n in range(retries))


@pytest.mark.parametrize("status", [429, 529])
def test_a_short_retry_after_is_honoured_without_giving_up_sooner(
    fake_api: FakeMessagesAPI, status: int
) -> None:
    fake_api.policy = lambda request: FakeReply.text("looks fine")
    fake_api.add_fault("status", status=status, retry_after=1, times=None)
    waits: list[float] = []

    with pytest.raises(ApiUnavailable):
        _ask(_client(fake_api.base_url, waits, max_retries=4))

    assert all(wait >= 1 for wait in waits)  # never sooner than the server asked
    assert sum(waits) >= _patience(4)  # and as patient as without a retry-after


def test_a_long_retry_after_is_waited_in_full(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda request: FakeReply.text("looks fine")
    fake_api.add_fault("status", status=429, retry_after=7, times=2)
    waits: list[float] = []

    reply = _ask(_client(fake_api.base_url, waits))

    assert reply.text == "looks fine" and waits == [7, 7]


def test_an_endpoint_that_never_answers_is_given_up_after_two_timeouts(
    fake_api: FakeMessagesAPI,
) -> None:
    fake_api.policy = lambda request: FakeReply.text("looks fine")
    fake_api.add_fault("hang", delay=60, times=None)
    waits: list[float] = []
    client = _client(fake_api.base_url, waits, max_retries=10, timeout=1)

    with pytest.raises(ApiUnavailable) as raised:
        _ask(client)

    assert len(fake_api.message_requests) == 2
    assert "answered none" in str(raised.value) and fake_api.base_url in str(raised.value)
    assert client.unusable is not None  # no other agent starts against it


# --- the same through the command line: the exit code and what is said ------------------


@pytest.mark.parametrize("url", ["not-a-url", "localhost:8080"])
def test_review_with_a_url_that_is_not_http_is_exit_2(
    api_env: dict[str, str], git_repo: GitRepoFactory, url: str
) -> None:
    repo = make_planted_repo(git_repo)

    result = run_cli(repo, {**api_env, "ANTHROPIC_BASE_URL": url}, "--all", "--no-progress")

    assert result.returncode == 2, result.stderr
    assert url in result.stderr and "ANTHROPIC_BASE_URL" in result.stderr
    assert "this is a bug" not in result.stderr


def test_review_against_a_web_page_is_exit_2_naming_what_came_back(
    portal: _Portal, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    env = {**api_env, "ANTHROPIC_BASE_URL": portal.server.base_url}

    result = run_cli(repo, env, "--all", "--no-progress")

    said = " ".join(result.stderr.split())
    assert result.returncode == 2, result.stderr
    assert portal.server.base_url in said and "text/html" in said and "Guest Wi-Fi" in said
    assert portal.requests == 1  # the main agent's first request, and nothing after it


def test_review_against_an_endpoint_that_never_answers_ends_after_two_timeouts(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("hang", delay=60, times=None)

    result = run_cli(repo, api_env, "--all", "--no-progress", "--request-timeout", "1")

    assert result.returncode == 3, result.stderr
    assert "answered none" in " ".join(result.stderr.split())
    assert len(fake_api.message_requests) == 2  # the main agent's two; no sweep, no critic
