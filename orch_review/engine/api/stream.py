"""Folding a streamed Messages response into the final message, with plain dicts.

The SDK's stream helper builds a pydantic object for every server-sent event and again for
the accumulated message. With ten agents streaming at once that work holds the GIL for most
of each response's processing time; here an event costs one ``json.loads`` and a dict update,
so other agents' threads keep running.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

E = TypeVar("E")

# The SDK's own estimate of the slowest a response is written: an hour for 128,000 tokens.
SECONDS_PER_OUTPUT_TOKEN = 3600 / 128_000


# A JSON string may hold an escaped lone surrogate (``"\\ud800"``), which no UTF-8 can
# encode: a model can write one, and it would crash whatever writes the text out (a report,
# the journal, the terminal). The model never sees one from orch-review (names that are not
# UTF-8 reach it in git's octal quoting), so it stands for nothing: U+FFFD takes its place.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings and keys, at any depth, replaced by
    U+FFFD, so that all of it encodes as UTF-8."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {well_formed(k): well_formed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [well_formed(item) for item in value]
    return value


class StreamErrorEvent(Exception):
    """The server sent an ``error`` event inside a 200 response."""

    def __init__(self, message: str, body: object) -> None:
        super().__init__(message)
        self.message = message
        self.body = body


class IncompleteStream(Exception):
    """The response ended before ``message_stop``, or an event could not be read."""


class StreamTimedOut(Exception):
    """The response went on too long, or too long without content (``ping`` events are no
    content: a server can send them forever)."""


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """How long one response may take: ``idle`` seconds at most between content events,
    ``total`` seconds at most for the whole response."""

    idle: float
    total: float
    clock: Callable[[], float] = field(default=time.monotonic)

    @classmethod
    def for_request(cls, timeout: float, max_tokens: int) -> StreamLimits:
        """``timeout`` between content events, and for the whole response that plus the
        time the slowest model takes to write ``max_tokens``."""
        return cls(timeout, timeout + max_tokens * SECONDS_PER_OUTPUT_TOKEN)


def _bounded(
    events: Iterable[E], limits: StreamLimits | None, is_content: Callable[[E], bool]
) -> Iterator[E]:
    """``events``, raising :class:`StreamTimedOut` once ``limits`` are exceeded."""
    if limits is None:
        yield from events
        return
    started = last = limits.clock()
    for event in events:
        now = limits.clock()
        if now - last > limits.idle:
            raise StreamTimedOut(f"the response stream sent no content for {limits.idle:g} s")
        if now - started > limits.total:
            raise StreamTimedOut(f"the response stream went on for over {limits.total:g} s")
        if is_content(event):
            last = now
        yield event


def sse_events(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(event, data) pairs of a server-sent event stream given line by line."""
    event = ""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:
        yield event or "message", "\n".join(data)


def read_message(lines: Iterable[str], limits: StreamLimits | None = None) -> dict[str, Any]:
    """The final ``Message`` of a streamed response, as the API's JSON would have it.

    Raises :class:`StreamErrorEvent` for an ``error`` event, :class:`IncompleteStream`
    for a stream that is cut short or garbled and :class:`StreamTimedOut` past ``limits``
    (all worth retrying). A tool call the model was still writing when it hit ``max_tokens``
    is not a fault: that block comes back with ``"incomplete": True`` and an empty input, for
    the agent to tell the model.
    """
    builder = _MessageBuilder()
    # Read on past message_stop: only a body read to its end frees the connection for reuse.
    for event, data in _bounded(sse_events(lines), limits, lambda pair: pair[0] != "ping"):
        if event == "ping":
            continue
        try:
            payload = json.loads(data)
        except ValueError:
            payload = None
        if event == "error":
            raise StreamErrorEvent(str(payload if payload is not None else data), payload or data)
        if not isinstance(payload, dict):
            raise IncompleteStream(f"the response stream has a malformed {event} event")
        if payload.get("type") == "error":
            raise StreamErrorEvent(str(payload), payload)
        try:
            builder.add(payload)
        except (KeyError, TypeError, AttributeError, ValueError):
            raise IncompleteStream(f"the response stream has a malformed {event} event") from None
    return builder.final()


def read_events(
    events: Iterable[Mapping[str, Any]], limits: StreamLimits | None = None
) -> dict[str, Any]:
    """The final ``Message`` from stream events the SDK has already decoded (Bedrock's binary
    event stream), folded exactly as :func:`read_message` folds SSE lines.

    Raises :class:`IncompleteStream` for a stream that is cut short or garbled and
    :class:`StreamTimedOut` past ``limits``.
    """
    builder = _MessageBuilder()
    for event in _bounded(events, limits, lambda e: e.get("type") != "ping"):
        try:
            builder.add(dict(event))
        except (KeyError, TypeError, AttributeError, ValueError):
            kind = event.get("type")
            raise IncompleteStream(f"the response stream has a malformed {kind} event") from None
    return builder.final()


class _MessageBuilder:
    """Applies stream events to a message snapshot, as the SDK's accumulator does."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.stopped = False
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._unreadable: set[int] = set()  # tool inputs that are not complete JSON

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.message = dict(event["message"])
            self.message["usage"] = dict(self.message.get("usage") or {})
        elif kind == "content_block_start":
            self._blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            self._delta(event["index"], event["delta"])
        elif kind == "content_block_stop":
            index = event["index"]
            parts = self._json.pop(index, None)
            if parts is not None:
                text = "".join(parts)
                try:
                    self._blocks[index]["input"] = json.loads(text) if text else {}
                except ValueError:
                    self._unreadable.add(index)
        elif kind == "message_delta":
            message = self._started()
            message.update(event.get("delta") or {})
            usage = event.get("usage") or {}
            message["usage"].update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.stopped = True
        # Other event types (new ones included) carry nothing the final message needs.

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self._blocks[index]
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
        elif kind == "input_json_delta":
            self._json.setdefault(index, []).append(delta["partial_json"])
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
        elif kind == "signature_delta":
            block["signature"] = delta["signature"]
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta["citation"])

    def _started(self) -> dict[str, Any]:
        if self.message is None:
            raise IncompleteStream("the response stream has no message_start event")
        return self.message

    def final(self) -> dict[str, Any]:
        message = self._started()
        if not self.stopped:
            raise IncompleteStream("the response stream ended before message_stop")
        unreadable = self._unreadable | set(self._json)  # unparsed, or never stopped
        if unreadable and message.get("stop_reason") != "max_tokens":
            # Only the output limit cuts a tool input short; anything else is a garbled stream.
            raise IncompleteStream("the response stream has a tool input that is not JSON")
        for index in unreadable:
            self._blocks[index] = {**self._blocks[index], "input": {}, "incomplete": True}
        message["content"] = [self._blocks[i] for i in sorted(self._blocks)]
        return dict(well_formed(message))
