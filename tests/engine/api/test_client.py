"""The Messages API client against the fake API: how long it waits between attempts.

The wait is injected: the client's ``sleep`` records what it was asked to wait, so these
tests check the retry policy exactly without ever sleeping.
"""

from __future__ import annotations

import socket

import pytest

from orch_review.engine.api.client import ModelClient, Reply
from orch_review.errors import (
    ApiUnavailable,
    ApiUnusable,
    AuthenticationFailed,
    ConfigError,
    OrchReviewError,
    RequestRejected,
)
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.messages_api import Reply as FakeReply

FIRST_WAIT, LONGEST_WAIT = 1.0, 30.0
KEY = "sk-ant-test-key-0123"


def _client(
    api: FakeMessagesAPI | str,
    waits: list[float],
    max_retries: int = 3,
    request_timeout: float = 120,
) -> ModelClient:
    base_url = api if isinstance(api, str) else api.base_url
    return ModelClient(
        {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": KEY},
        max_retries=max_retries,
        request_timeout=request_timeout,
        max_output_tokens=1000,
        effort="high",
        backoff=(FIRST_WAIT, LONGEST_WAIT),
        sleep=waits.append,
    )


def _ask(client: ModelClient, close: bool = True) -> Reply:
    try:
        return client.complete(
            model="claude-test",
            system="system",
            tools=[],
            messages=[{"role": "user", "content": "Review this change."}],
        )
    finally:
        if close:
            client.close()


def closed_port_url() -> str:
    """The URL of a port on 127.0.0.1 nothing listens on: a connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def answering(fake_api: FakeMessagesAPI) -> FakeMessagesAPI:
    fake_api.policy = lambda request: FakeReply.text("looks fine")
    return fake_api


@pytest.mark.parametrize(("status", "retry_after"), [(429, 7), (529, 2.5), (503, 0)])
def test_waits_what_retry_after_says_and_never_less_than_the_backoff(
    answering: FakeMessagesAPI, status: int, retry_after: float
) -> None:
    answering.add_fault("status", status=status, retry_after=retry_after, times=2)
    waits: list[float] = []

    reply = _ask(_client(answering, waits))

    assert reply.text == "looks fine"
    # wait_exponential_jitter: first * 2**(n-1), plus up to one second of jitter.
    for n, wait in enumerate(waits):
        least = max(retry_after, FIRST_WAIT * 2**n)
        assert least <= wait <= max(retry_after, FIRST_WAIT * 2**n + 1)
    assert len(waits) == 2
    assert [r.fault for r in answering.message_requests] == ["status", "status", None]


def test_a_retry_after_longer_than_the_longest_wait_is_cut_to_it(
    answering: FakeMessagesAPI,
) -> None:
    answering.add_fault("status", status=429, retry_after=3600)
    waits: list[float] = []

    _ask(_client(answering, waits))

    assert waits == [LONGEST_WAIT]


def test_without_retry_after_the_wait_doubles_with_jitter(answering: FakeMessagesAPI) -> None:
    answering.add_fault("status", status=529, times=3)
    waits: list[float] = []

    _ask(_client(answering, waits))

    # wait_exponential_jitter: first * 2**(n-1), plus up to one second of jitter.
    assert len(waits) == 3
    for n, wait in enumerate(waits):
        assert FIRST_WAIT * 2**n <= wait <= FIRST_WAIT * 2**n + 1


def test_a_cut_stream_is_retried_after_a_backoff_wait(answering: FakeMessagesAPI) -> None:
    answering.add_fault("drop_stream")
    waits: list[float] = []

    reply = _ask(_client(answering, waits))

    assert reply.text == "looks fine"
    assert len(waits) == 1 and FIRST_WAIT <= waits[0] <= FIRST_WAIT + 1


def test_gives_up_after_the_retries_without_a_last_wait(answering: FakeMessagesAPI) -> None:
    answering.add_fault("status", status=529, retry_after=4, times=None)
    waits: list[float] = []

    with pytest.raises(ApiUnavailable, match="after 3 attempts"):
        _ask(_client(answering, waits, max_retries=2))

    assert waits == [4, 4]
    assert len(answering.message_requests) == 3


def test_a_request_the_api_rejects_is_not_retried(answering: FakeMessagesAPI) -> None:
    answering.add_fault("status", status=400, retry_after=1)
    waits: list[float] = []

    with pytest.raises(RequestRejected):
        _ask(_client(answering, waits))

    assert waits == []
    assert len(answering.message_requests) == 1


def test_a_failure_is_told_in_the_apis_words_not_the_sdks_repr(
    answering: FakeMessagesAPI,
) -> None:
    answering.add_fault("status", status=529, retry_after=0, times=None)

    with pytest.raises(ApiUnavailable) as raised:
        _ask(_client(answering, [], max_retries=0))

    message = str(raised.value)
    assert message.startswith("The API kept failing after 1 attempt: HTTP 529 overloaded_error")
    assert "{" not in message and "Error code" not in message


def test_an_error_event_in_the_stream_is_named_so(answering: FakeMessagesAPI) -> None:
    answering.add_fault("error_event", times=None)

    with pytest.raises(ApiUnavailable, match="an error event in the stream overloaded_error"):
        _ask(_client(answering, [], max_retries=1))


CREDIT_TOO_LOW = (
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing "
    "to upgrade or purchase credits."
)


def test_a_rejected_request_is_told_in_the_apis_words(answering: FakeMessagesAPI) -> None:
    answering.add_fault("status", status=400, message="prompt is too long: 210000 tokens > 200000")

    with pytest.raises(RequestRejected) as raised:
        _ask(_client(answering, []))

    assert str(raised.value) == (
        "The API rejected a request: HTTP 400 invalid_request_error: "
        "prompt is too long: 210000 tokens > 200000"
    )


@pytest.mark.slow
def test_a_refused_connection_is_not_retried_and_names_the_endpoint() -> None:
    url = closed_port_url()
    waits: list[float] = []

    with pytest.raises(ApiUnusable) as raised:
        _ask(_client(url, waits, max_retries=4))

    assert waits == []  # no backoff: not a second attempt
    assert str(raised.value).startswith(f"Cannot reach the API at {url} (connection refused)")
    assert "ANTHROPIC_BASE_URL" in str(raised.value)


@pytest.mark.parametrize(
    ("status", "error_type", "message", "error", "said"),
    [
        (401, None, None, AuthenticationFailed, "rejected the credentials (401)"),
        (403, None, None, AuthenticationFailed, "HTTP 403 permission_error"),
        (404, None, "model: claude-test", ConfigError, "does not know model `claude-test`"),
        (400, None, CREDIT_TOO_LOW, ApiUnusable, f"invalid_request_error: {CREDIT_TOO_LOW}"),
    ],
)
def test_after_an_answer_no_request_can_survive_none_is_sent(
    answering: FakeMessagesAPI,
    status: int,
    error_type: str | None,
    message: str | None,
    error: type[OrchReviewError],
    said: str,
) -> None:
    answering.add_fault("status", status=status, error_type=error_type, message=message)
    client = _client(answering, [])
    try:
        with pytest.raises(error) as first:
            _ask(client, close=False)
        with pytest.raises(error) as second:  # the fault is used up: the API would answer
            _ask(client, close=False)
    finally:
        client.close()

    assert said in str(first.value) and f"The API at {answering.base_url} " in str(first.value)
    assert str(second.value) == str(first.value)
    assert KEY not in str(first.value)
    assert len(answering.message_requests) == 1


def test_a_stream_of_nothing_but_pings_times_out_and_is_retried(
    answering: FakeMessagesAPI,
) -> None:
    answering.add_fault("pings", delay=0.1)
    waits: list[float] = []

    reply = _ask(_client(answering, waits, request_timeout=1))

    assert reply.text == "looks fine"
    assert [r.fault for r in answering.message_requests] == ["pings", None]
    assert len(waits) == 1  # one backoff: the stalled attempt was abandoned, then retried


def test_a_stream_that_only_pings_fails_as_a_timeout_after_the_retries(
    answering: FakeMessagesAPI,
) -> None:
    answering.add_fault("pings", delay=0.1, times=None)

    with pytest.raises(ApiUnavailable, match="no content for 1 s"):
        _ask(_client(answering, [], max_retries=1, request_timeout=1))

    assert [r.fault for r in answering.message_requests] == ["pings", "pings"]
