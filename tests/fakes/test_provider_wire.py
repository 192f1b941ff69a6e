"""The fake's provider wire formats agree with what the real decoders and clients expect."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.fakes.provider_wire import (
    COUNT_TOKENS_PATH,
    MESSAGES_PATH,
    bedrock_exception_frame,
    event_stream_frame,
    provider_call,
    sse_to_bedrock_frame,
)
from tests.fakes.wire import sse_event

eventstream = pytest.importorskip("botocore.eventstream")


def _decode(data: bytes) -> list[Any]:
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(data)
    return list(buffer)


def test_frames_decode_with_botocore_even_when_split_across_reads() -> None:
    frames = event_stream_frame({":event-type": "chunk"}, b'{"a":1}') * 2
    buffer = eventstream.EventStreamBuffer()
    messages = []
    for i in range(0, len(frames), 7):
        buffer.add_data(frames[i : i + 7])
        messages.extend(buffer)

    assert [m.payload for m in messages] == [b'{"a":1}', b'{"a":1}']
    assert messages[0].headers[":event-type"] == "chunk"


def test_an_sse_event_becomes_a_chunk_carrying_it_base64_encoded() -> None:
    data = {"type": "message_stop"}
    (message,) = _decode(sse_to_bedrock_frame(sse_event("message_stop", data)))

    assert message.headers[":message-type"] == "event"
    chunk = json.loads(message.payload)
    assert json.loads(base64.b64decode(chunk["bytes"])) == data


def test_an_error_event_becomes_an_exception_frame() -> None:
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    (message,) = _decode(sse_to_bedrock_frame(sse_event("error", error)))

    assert message.headers[":message-type"] == "exception"
    assert message.headers[":exception-type"] == "throttlingException"
    assert json.loads(message.payload) == {"message": "slow down"}
    (direct,) = _decode(bedrock_exception_frame("throttlingException", "slow down"))
    assert (direct.headers, direct.payload) == (message.headers, message.payload)


def test_bedrock_requests_carry_the_model_in_the_path_only() -> None:
    body = {"anthropic_version": "v", "max_tokens": 1, "messages": []}
    path = "/model/us.anthropic.claude-opus-4-6-v1/invoke-with-response-stream"

    call = provider_call(path, body)
    wrong = provider_call(path, {**body, "model": "m"})

    assert call is not None and call.problem is None and call.route == MESSAGES_PATH
    assert call.body["model"] == "us.anthropic.claude-opus-4-6-v1"
    assert call.body["stream"] is True
    assert wrong is not None and wrong.problem is not None and "`model`" in wrong.problem


def test_vertex_paths_name_project_region_model_and_method() -> None:
    base = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
    body = {"anthropic_version": "vertex", "max_tokens": 1, "messages": [], "stream": True}

    streamed = provider_call(base + "claude-opus-4-5@20251101:streamRawPredict", body)
    counted = provider_call(base + "count-tokens:rawPredict", {"model": "m", "messages": []})
    unversioned = provider_call(base + "m:streamRawPredict", {**body, "anthropic_version": None})

    assert streamed is not None and streamed.problem is None
    assert streamed.body["model"] == "claude-opus-4-5@20251101"
    assert streamed.details == {"project": "p", "region": "us-east5"}
    assert counted is not None and counted.route == COUNT_TOKENS_PATH
    assert unversioned is not None and "anthropic_version" in str(unversioned.problem)
    assert provider_call("/v1/messages", body) is None


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/model/us.anthropic.claude-opus-4-6-v1/invoke-with-response-stream", {}),
        (
            "/v1/projects/p/locations/global/publishers/anthropic/models/claude-opus-4-6:"
            "streamRawPredict",
            {"stream": True},
        ),
        ("/anthropic/v1/messages", {"model": "claude-opus-4-6", "stream": True}),
    ],
    ids=["bedrock", "vertex", "foundry"],
)
def test_every_provider_takes_effort_and_refuses_what_the_api_refuses(
    path: str, body: dict[str, Any]
) -> None:
    if "model" not in body:
        body = {**body, "anthropic_version": "vertex-2023-10-16"}

    def problem(output_config: object) -> str | None:
        call = provider_call(path, {**body, "output_config": output_config})
        assert call is not None
        return call.problem

    assert all(problem({"effort": level}) is None for level in ("low", "xhigh", "max"))
    assert problem({"effort": "extreme"}) == (
        "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh', 'max'"
    )
    assert problem({"effort": "high", "budget": 3}) == (
        "output_config.budget: Extra inputs are not permitted"
    )
    assert problem("high") == "output_config: Input should be a valid dictionary"
