"""Folding a streamed response into its final message, as the fake (and the API) stream it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from orch_review.engine.api.stream import (
    IncompleteStream,
    StreamErrorEvent,
    StreamLimits,
    StreamTimedOut,
    read_events,
    read_message,
    sse_events,
)
from tests.fakes.wire import message_json, sse_event, stream_events


def _lines(*events: bytes) -> list[str]:
    return b"".join(events).decode().splitlines()


def _event(name: str, data: dict[str, Any]) -> bytes:
    return sse_event(name, data)


def test_sse_events_join_data_lines_and_skip_comments() -> None:
    lines = [": keep-alive", "event: a", "data: 1", "data: 2", "", "data: 3", ""]
    assert list(sse_events(lines)) == [("a", "1\n2"), ("message", "3")]


def test_text_and_tool_use_round_trip_through_the_wire_format() -> None:
    content = [
        {"type": "text", "text": "Looking at the code first."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls -la"}},
    ]
    usage = {
        "input_tokens": 10,
        "output_tokens": 42,
        "cache_creation_input_tokens": 5,
        "cache_read_input_tokens": 100,
    }
    message = message_json("msg_1", "m", content, "tool_use", usage)

    final = read_message(_lines(*stream_events(message)))

    assert final["content"] == content
    assert final["stop_reason"] == "tool_use"
    assert final["usage"] == usage


def test_thinking_signature_and_empty_tool_input() -> None:
    events = [
        _event("message_start", {"type": "message_start", "message": {"usage": {}}}),
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "hm"},
            },
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "sig"},
            },
        ),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "t", "name": "x", "input": {}},
            },
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": ""},
            },
        ),
        _event("content_block_stop", {"type": "content_block_stop", "index": 1}),
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 7},
            },
        ),
        _event("message_stop", {"type": "message_stop"}),
    ]

    final = read_message(_lines(*events))

    assert final["content"] == [
        {"type": "thinking", "thinking": "hm", "signature": "sig"},
        {"type": "tool_use", "id": "t", "name": "x", "input": {}},
    ]
    assert final["usage"] == {"output_tokens": 7}


def test_error_event_raises_with_the_body() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    start = _event("message_start", {"type": "message_start", "message": {"usage": {}}})

    with pytest.raises(StreamErrorEvent) as caught:
        read_message(_lines(start, _event("error", body)))

    assert caught.value.body == body


@pytest.mark.parametrize("cut", [0, 1, 3])
def test_stream_without_message_stop_is_incomplete(cut: int) -> None:
    message = message_json(
        "msg_1", "m", [{"type": "text", "text": "hi"}], "end_turn", {"output_tokens": 1}
    )
    events = list(stream_events(message))[:cut]

    with pytest.raises(IncompleteStream):
        read_message(_lines(*events))


def test_unknown_events_and_deltas_are_ignored() -> None:
    message = message_json(
        "msg_1", "m", [{"type": "text", "text": "hi"}], "end_turn", {"output_tokens": 1}
    )
    events = list(stream_events(message))
    extra = _event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "new_delta"}},
    )
    events.insert(-3, extra)
    events.insert(1, _event("brand_new", {"type": "brand_new", "x": json.dumps([1])}))

    assert read_message(_lines(*events))["content"] == [{"type": "text", "text": "hi"}]


def test_garbled_event_is_an_incomplete_stream() -> None:
    start = _event("message_start", {"type": "message_start", "message": {"usage": {}}})
    garbled = b"event: content_block_delta\ndata: {not json\n\n"

    with pytest.raises(IncompleteStream, match="malformed"):
        read_message(_lines(start, garbled))


def test_delta_for_a_block_never_started_is_an_incomplete_stream() -> None:
    start = _event("message_start", {"type": "message_start", "message": {"usage": {}}})
    delta = _event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}},
    )

    with pytest.raises(IncompleteStream, match="malformed"):
        read_message(_lines(start, delta))


def _tool_call_stream(stop_reason: str, *, stop_block: bool = True) -> list[str]:
    """A text block, then a tool call whose input the stream leaves half written."""
    content = [
        {"type": "text", "text": "Running it."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls " * 20}},
    ]
    content[1]["cut_off"] = True
    usage = {"input_tokens": 1, "output_tokens": 9}
    events = list(stream_events(message_json("msg_1", "m", content, stop_reason, usage)))
    if not stop_block:
        events = [e for e in events if b'"index": 1}' not in e or b"content_block_stop" not in e]
    return _lines(*events)


@pytest.mark.parametrize("stop_block", [True, False])
def test_tool_input_cut_off_at_max_tokens_is_an_outcome(stop_block: bool) -> None:
    final = read_message(_tool_call_stream("max_tokens", stop_block=stop_block))

    assert final["stop_reason"] == "max_tokens"
    assert final["content"] == [
        {"type": "text", "text": "Running it."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}, "incomplete": True},
    ]


def test_unreadable_tool_input_without_max_tokens_is_a_garbled_stream() -> None:
    with pytest.raises(IncompleteStream, match="tool input"):
        read_message(_tool_call_stream("tool_use"))


def _decoded(events: list[bytes]) -> list[dict[str, Any]]:
    """The events as the SDK hands them over once it has decoded them (Bedrock)."""
    return [json.loads(data) for _, data in sse_events(_lines(*events))]


def test_decoded_events_fold_into_the_same_message_as_sse_lines() -> None:
    content = [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
    ]
    usage = {"input_tokens": 7, "output_tokens": 9}
    events = list(stream_events(message_json("msg_1", "m", content, "tool_use", usage)))

    assert read_events(_decoded(events)) == read_message(_lines(*events))
    assert read_events(_decoded(events))["content"] == content


@pytest.mark.parametrize("cut", [0, 1, 3])
def test_decoded_events_without_message_stop_are_incomplete(cut: int) -> None:
    message = message_json(
        "msg_1", "m", [{"type": "text", "text": "hi"}], "end_turn", {"output_tokens": 1}
    )
    events = list(stream_events(message))[:cut]

    with pytest.raises(IncompleteStream):
        read_events(_decoded(events))


def test_a_garbled_decoded_event_is_an_incomplete_stream() -> None:
    start = {"type": "message_start", "message": {"id": "m", "content": [], "usage": {}}}
    with pytest.raises(IncompleteStream, match="malformed content_block_delta"):
        read_events([start, {"type": "content_block_delta", "index": 0}])


class _Ticks:
    """A clock that advances ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _answer() -> list[bytes]:
    usage = {"input_tokens": 1, "output_tokens": 1}
    return list(
        stream_events(message_json("m", "x", [{"type": "text", "text": "hi"}], "end_turn", usage))
    )


PING = sse_event("ping", {"type": "ping"})


def test_pings_do_not_keep_a_stalled_stream_alive() -> None:
    start, *rest = _answer()
    stalled = _lines(start, *[PING] * 50, *rest)  # 50 s of pings, one a second

    with pytest.raises(StreamTimedOut, match="no content for 10 s"):
        read_message(stalled, StreamLimits(idle=10, total=1000, clock=_Ticks(1.0)))


def test_a_stream_that_keeps_sending_content_is_bounded_as_a_whole() -> None:
    start, *rest = _answer()
    deltas = [
        sse_event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "."},
            },
        )
    ] * 100
    trickle = _lines(start, *rest[:3], *deltas, *rest[3:])  # one delta a second

    with pytest.raises(StreamTimedOut, match="over 30 s"):
        read_message(trickle, StreamLimits(idle=10, total=30, clock=_Ticks(1.0)))


def test_pings_within_the_limits_are_harmless() -> None:
    start, *rest = _answer()
    lines = _lines(start, *[PING] * 5, *rest)

    message = read_message(lines, StreamLimits(idle=10, total=1000, clock=_Ticks(1.0)))

    assert message["content"] == [{"type": "text", "text": "hi"}]


def test_decoded_events_are_bounded_the_same_way() -> None:
    events = [{"type": "message_start", "message": {"content": [], "usage": {}}}]
    events += [{"type": "ping"}] * 20

    with pytest.raises(StreamTimedOut):
        read_events(events, StreamLimits(idle=5, total=1000, clock=_Ticks(1.0)))
