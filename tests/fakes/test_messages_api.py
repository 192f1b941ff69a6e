"""The fake Messages API, exercised through the real anthropic SDK over real HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import Message, MessageParam, TextBlock, TextBlockParam, ToolParam, Usage

from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.fakes.wire import PromptCache

MODEL = "claude-test-1"
USER: list[MessageParam] = [{"role": "user", "content": "Review this change."}]
FINDINGS_TOOL: ToolParam = {
    "name": "report_findings",
    "description": "Report what you found.",
    "input_schema": {"type": "object", "properties": {"findings": {"type": "array"}}},
}


def text_of(message: Message) -> str:
    """The text of a message's text blocks."""
    return "".join(block.text for block in message.content if isinstance(block, TextBlock))


@pytest.fixture
def client(fake_api: FakeMessagesAPI) -> Iterator[anthropic.Anthropic]:
    """An SDK client aimed at the fake, without retries."""
    with anthropic.Anthropic(base_url=fake_api.base_url, api_key="k", max_retries=0) as sdk:
        yield sdk


def test_streamed_text_reply(fake_api: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    fake_api.policy = lambda request: Reply.text(
        "Nothing is wrong with this change, as far as I see."
    )

    with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
        message = stream.get_final_message()

    assert [block.type for block in message.content] == ["text"]
    assert text_of(message) == "Nothing is wrong with this change, as far as I see."
    assert message.stop_reason == "end_turn"
    assert message.model == MODEL
    assert message.usage.input_tokens > 0
    assert message.usage.output_tokens >= 1
    assert message.usage.cache_creation_input_tokens == 0
    assert message.usage.cache_read_input_tokens == 0
    [recorded] = fake_api.message_requests
    assert recorded.body["stream"] is True
    assert recorded.headers["authorization"] == "Bearer k"


def test_sse_wire_format(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda request: Reply.tool_use("report_findings", {"findings": []}, "Done.")
    body = {"model": MODEL, "max_tokens": 10, "messages": USER, "stream": True}

    response = httpx2.post(f"{fake_api.base_url}/v1/messages", json=body)

    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["transfer-encoding"] == "chunked"
    assert response.headers["request-id"].startswith("req_")
    events = [part.splitlines() for part in response.text.split("\n\n") if part]
    assert all(e[0].startswith("event: ") and e[1].startswith("data: ") for e in events)
    names = [e[0].removeprefix("event: ") for e in events]
    payloads = [json.loads(e[1].removeprefix("data: ")) for e in events]
    assert names == [p["type"] for p in payloads]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    start = payloads[0]["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    assert set(start["usage"]) >= {
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    }
    blocks = [p for p in payloads if p["type"] == "content_block_start"]
    assert [(b["index"], b["content_block"]["type"]) for b in blocks] == [
        (0, "text"),
        (1, "tool_use"),
    ]
    assert blocks[1]["content_block"]["input"] == {}
    partial = [p["delta"]["partial_json"] for p in payloads if p.get("index") == 1 and "delta" in p]
    assert len(partial) > 1 and json.loads("".join(partial)) == {"findings": []}
    assert payloads[-2]["delta"]["stop_reason"] == "tool_use"
    assert payloads[-2]["usage"]["output_tokens"] >= 1


def test_streamed_tool_use_reply(fake_api: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    finding = {"claim": "off by one", "evidence": "src/a.py:12", "severity": "high"}
    fake_api.policy = lambda request: Reply.tool_uses(
        [("report_findings", {"findings": [finding]}), ("report_findings", {"findings": []})],
        text="Reporting.",
    )

    with client.messages.stream(
        model=MODEL, max_tokens=100, messages=USER, tools=[FINDINGS_TOOL]
    ) as stream:
        message = stream.get_final_message()

    assert message.stop_reason == "tool_use"
    text, first, second = message.content
    assert text.type == "text" and text.text == "Reporting."
    assert first.type == "tool_use" and second.type == "tool_use"
    assert first.name == "report_findings"
    assert first.input == {"findings": [finding]}
    assert first.id.startswith("toolu_") and second.id.startswith("toolu_")
    assert first.id != second.id


def test_non_streamed_create(fake_api: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    fake_api.policy = lambda request: Reply([{"type": "text", "text": "cut"}], "max_tokens")

    message = client.messages.create(model=MODEL, max_tokens=5, messages=USER)

    assert text_of(message) == "cut"
    assert message.stop_reason == "max_tokens"
    assert message.id.startswith("msg_")
    assert "stream" not in fake_api.message_requests[0].body


def test_mid_conversation_system_message_and_effort(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    seen: list[ModelRequest] = []

    def policy(request: ModelRequest) -> Reply:
        seen.append(request)
        return Reply.text("ok")

    fake_api.policy = policy
    client.messages.create(
        model=MODEL,
        max_tokens=10,
        system="You review code.",
        messages=[*USER, {"role": "system", "content": "Orchestration mode is on."}],
        output_config={"effort": "xhigh"},
    )

    [request] = seen
    assert request.system_text == "You review code."
    assert request.system_messages == ["Orchestration mode is on."]
    assert request.first_user_text == "Review this change."
    assert fake_api.message_requests[0].body["output_config"] == {"effort": "xhigh"}


def test_prompt_cache_usage(fake_api: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    fake_api.policy = lambda request: Reply.text("ok")
    system: list[TextBlockParam] = [
        {"type": "text", "text": "S" * 400, "cache_control": {"type": "ephemeral"}}
    ]

    def ask(question: str) -> Usage:
        messages: list[MessageParam] = [{"role": "user", "content": question}]
        return client.messages.create(
            model=MODEL, max_tokens=10, system=system, messages=messages
        ).usage

    first, second = ask("first question"), ask("second question")

    assert first.cache_creation_input_tokens and first.cache_creation_input_tokens > 100
    assert first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    assert second.input_tokens > 0


def test_prompt_cache_reads_the_earlier_prefix_when_the_breakpoint_moves() -> None:
    cache = PromptCache()
    marker = {"cache_control": {"type": "ephemeral"}}
    turn1 = [{"role": "user", "content": [{"type": "text", "text": "a" * 80, **marker}]}]
    turn2 = [
        {"role": "user", "content": [{"type": "text", "text": "a" * 80}]},
        {"role": "assistant", "content": "b" * 80},
        {"role": "user", "content": [{"type": "text", "text": "c" * 80, **marker}]},
    ]

    first = cache.usage({"model": MODEL, "messages": turn1})
    second = cache.usage({"model": MODEL, "messages": turn2})
    other_model = cache.usage({"model": "other", "messages": turn2})

    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"] > 0
    assert second["cache_creation_input_tokens"] > 0
    assert other_model["cache_read_input_tokens"] == 0


def test_count_tokens_matches_uncached_input(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake_api.policy = lambda request: Reply.text("ok")

    counted = client.messages.count_tokens(model=MODEL, messages=USER, tools=[FINDINGS_TOOL])
    usage = client.messages.create(
        model=MODEL, max_tokens=10, messages=USER, tools=[FINDINGS_TOOL]
    ).usage

    assert counted.input_tokens == usage.input_tokens > 0
    assert [r.path for r in fake_api.requests] == ["/v1/messages/count_tokens", "/v1/messages"]


def test_rate_limit_with_retry_after_is_retried(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda request: Reply.text("ok")
    fake_api.add_fault("status", status=429, retry_after=0.01)

    with anthropic.Anthropic(base_url=fake_api.base_url, api_key="k", max_retries=2) as sdk:
        message = sdk.messages.create(model=MODEL, max_tokens=10, messages=USER)

    assert text_of(message) == "ok"
    requests = fake_api.message_requests
    assert [r.fault for r in requests] == ["status", None]
    assert [r.headers["x-stainless-retry-count"] for r in requests] == ["0", "1"]
    assert fake_api.pending_faults == []


def test_overloaded_status(fake_api: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    fake_api.add_fault("status", status=529)

    with pytest.raises(anthropic.OverloadedError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=USER)

    assert caught.value.status_code == 529
    assert caught.value.type == "overloaded_error"
    assert caught.value.request_id is not None and caught.value.request_id.startswith("req_")


def test_dropped_stream_raises_httpx2_protocol_error(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake_api.add_fault("drop_stream")

    with (
        pytest.raises(httpx2.RemoteProtocolError) as caught,
        client.messages.stream(model=MODEL, max_tokens=10, messages=USER) as stream,
    ):
        stream.get_final_message()

    assert type(caught.value).__module__ == "httpx2"
    assert type(caught.value).__name__ == "RemoteProtocolError"
    assert "incomplete chunked read" in str(caught.value)


def test_dropped_non_streamed_response_is_a_connection_error(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake_api.add_fault("drop_stream")

    with pytest.raises(anthropic.APIConnectionError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=USER)

    assert isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)


def test_error_event_raises_status_error(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake_api.add_fault("error_event")

    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        client.messages.stream(model=MODEL, max_tokens=10, messages=USER) as stream,
    ):
        stream.get_final_message()

    # The HTTP status was 200, so the SDK cannot pick OverloadedError: branch on `.type`.
    assert type(caught.value) is anthropic.APIStatusError
    assert caught.value.status_code == 200
    assert caught.value.type == "overloaded_error"


def test_hang_times_out(fake_api: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    fake_api.add_fault("hang")

    with pytest.raises(anthropic.APITimeoutError):
        client.messages.create(model=MODEL, max_tokens=10, messages=USER, timeout=0.5)

    assert [r.fault for r in fake_api.message_requests] == ["hang"]


def test_a_hanging_request_does_not_block_others(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake_api.policy = lambda request: Reply.text("fast")
    hanging = threading.Event()

    def is_slow(request: ModelRequest) -> bool:
        if request.first_user_text != "slow":
            return False
        hanging.set()
        return True

    fake_api.add_fault("hang", match=is_slow)
    errors: list[BaseException] = []

    def ask_slow() -> None:
        try:
            client.messages.create(
                model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "slow"}]
            )
        except anthropic.APIConnectionError as exc:
            errors.append(exc)

    slow = threading.Thread(target=ask_slow)
    slow.start()
    assert hanging.wait(60)  # an upper bound: the request arrives at once
    fast = client.messages.create(model=MODEL, max_tokens=10, messages=USER)
    fake_api.stop()  # releases the hanging request
    slow.join(60)

    assert text_of(fast) == "fast"
    assert not slow.is_alive()
    assert len(errors) == 1


def test_latency_fault_answers_normally(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake_api.policy = lambda request: Reply.text("late")
    fake_api.add_fault("latency", delay=0.01)

    message = client.messages.create(model=MODEL, max_tokens=10, messages=USER)

    assert text_of(message) == "late"
    assert [r.fault for r in fake_api.message_requests] == ["latency"]


def test_faults_match_by_role_and_repeat(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake_api.policy = lambda request: Reply.text("ok")
    fake_api.add_fault("status", status=500, times=None, match=lambda r: r.role == "verifier")
    verdicts_tool: ToolParam = {**FINDINGS_TOOL, "name": "report_verdicts"}

    client.messages.create(model=MODEL, max_tokens=10, messages=USER, tools=[FINDINGS_TOOL])
    for _ in range(2):
        with pytest.raises(anthropic.InternalServerError):
            client.messages.create(model=MODEL, max_tokens=10, messages=USER, tools=[verdicts_tool])

    assert [r.fault for r in fake_api.requests_for("verifier")] == ["status", "status"]
    assert [r.fault for r in fake_api.requests_for("subagent")] == [None]


def test_wrong_api_key_is_rejected(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda request: Reply.text("ok")
    fake_api.expected_key = "right-key"

    with (
        anthropic.Anthropic(base_url=fake_api.base_url, api_key="wrong", max_retries=0) as sdk,
        pytest.raises(anthropic.AuthenticationError) as caught,
    ):
        sdk.messages.create(model=MODEL, max_tokens=10, messages=USER)
    with anthropic.Anthropic(base_url=fake_api.base_url, api_key="right-key") as sdk:
        sdk.messages.create(model=MODEL, max_tokens=10, messages=USER)

    assert caught.value.type == "authentication_error"


def test_policy_exception_is_a_500_and_is_recorded(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    def broken(request: ModelRequest) -> Reply:
        raise KeyError("boom")

    fake_api.policy = broken

    with pytest.raises(anthropic.InternalServerError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=USER)

    assert caught.value.type == "api_error"
    [failure] = fake_api.policy_errors
    assert isinstance(failure.exception, KeyError)
    assert "boom" in failure.traceback and "in broken" in failure.traceback
    fake_api.policy_errors.clear()  # expected here; otherwise the fixture fails the test


def test_unanswered_tool_use_is_a_bad_request(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    messages: list[Any] = [
        *USER,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}],
        },
        {"role": "user", "content": "go on"},
    ]

    with pytest.raises(anthropic.BadRequestError, match="toolu_1"):
        client.messages.create(model=MODEL, max_tokens=10, messages=messages)


_TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}
_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (
            [*USER, {"role": "assistant", "content": []}, {"role": "user", "content": "go on"}],
            "messages.1: all messages must have non-empty content except for the optional "
            "final assistant message",
        ),
        ([{"role": "user", "content": []}], "messages.0: all messages must have non-empty"),
        (
            [*USER, {"role": "assistant", "content": "ok"}, {"role": "user", "content": [_RESULT]}],
            "unexpected `tool_use_id` found in `tool_result` blocks: toolu_1",
        ),
        ([*USER, {"role": "assistant", "content": [_TOOL_USE]}], "without `tool_result`"),
    ],
)
def test_conversations_the_real_api_rejects_are_rejected(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic, messages: list[Any], message: str
) -> None:
    fake_api.policy = lambda request: Reply.text("unreachable")

    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model=MODEL, max_tokens=10, messages=messages)

    assert raised.value.status_code == 400
    body = raised.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert message in body["error"]["message"]


@pytest.mark.parametrize(
    "messages",
    [
        [*USER, {"role": "assistant", "content": []}],  # the optional final assistant message
        [*USER, {"role": "user", "content": "and more"}],  # merged by the real API
        [
            *USER,
            {"role": "assistant", "content": [_TOOL_USE]},
            {"role": "user", "content": [_RESULT, {"type": "text", "text": "note"}]},
            {"role": "system", "content": "orchestration mode is on"},
        ],
    ],
)
def test_conversations_the_real_api_accepts_are_answered(
    fake_api: FakeMessagesAPI, client: anthropic.Anthropic, messages: list[Any]
) -> None:
    fake_api.policy = lambda request: Reply.text("fine")

    message = client.messages.create(model=MODEL, max_tokens=10, messages=messages)

    assert text_of(message) == "fine"


def test_cut_off_tool_call_streams_half_its_input(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda request: Reply.cut_off("bash", {"command": "ls -la " * 10})
    response = httpx2.post(
        f"{fake_api.base_url}/v1/messages",
        json={"model": MODEL, "max_tokens": 10, "messages": USER, "stream": True},
    )
    events = [json.loads(line[6:]) for line in response.text.splitlines() if line[:6] == "data: "]
    partial = "".join(
        e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"
    )
    assert partial and partial in json.dumps({"command": "ls -la " * 10})
    with pytest.raises(ValueError):
        json.loads(partial)
    assert [e["type"] for e in events][-3:] == [
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[-2]["delta"]["stop_reason"] == "max_tokens"


def test_unknown_path_is_404(fake_api: FakeMessagesAPI) -> None:
    response = httpx2.get(f"{fake_api.base_url}/v1/models")

    assert response.status_code == 404
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "not_found_error"


def test_model_request_view() -> None:
    body = {
        "model": MODEL,
        "system": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        "tools": [{"name": "Workflow"}, {"type": "bash_20250124", "name": "bash"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "first"}]},
            {"role": "system", "content": "mode on"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash"}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "out",
                        "is_error": True,
                    },
                    {"type": "text", "text": "and then"},
                ],
            },
        ],
    }

    request = ModelRequest(body)

    assert request.role == "main"
    assert request.tool_names == {"Workflow", "bash"}
    assert request.system_text == "one\ntwo"
    assert request.system_messages == ["mode on"]
    assert request.first_user_text == "first"
    assert request.assistant_turns == 1
    assert request.tool_results() == [("t1", "out", True)]
    assert request.tool_result_texts() == ["out"]
    assert ModelRequest({"tools": [{"name": "report_verdicts"}]}).role == "verifier"
    assert ModelRequest({"tools": [{"name": "report_findings"}]}).role == "subagent"
    assert ModelRequest({}).role == "other"
