"""Wire format of the Messages API: error bodies, SSE events, messages, usage and the prompt cache.

Token counts are simulated as ceil(characters / 4) of canonical JSON, which is deterministic and
close enough to real counts for measuring what prompt caching saves.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any

ERROR_TYPES = {
    400: ("invalid_request_error", "Invalid request"),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use this resource"),
    404: ("not_found_error", "Not found"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes"),
    429: ("rate_limit_error", "Number of request tokens has exceeded your rate limit"),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}
STATUS_BY_ERROR_TYPE = {error_type: status for status, (error_type, _) in ERROR_TYPES.items()}

MESSAGE_ROLES = frozenset({"user", "assistant", "system"})
#: How many blocks before a cache breakpoint the API looks back for an earlier cached prefix.
CACHE_LOOKBACK_BLOCKS = 20


def canonical_json(value: Any) -> str:
    """Sorted-keys, compact JSON: equal values give byte-identical text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def token_count(value: Any) -> int:
    """Simulated tokens of a JSON value: ceil(len(canonical JSON) / 4)."""
    return math.ceil(len(canonical_json(value)) / 4)


def error_body(
    status: int, error_type: str | None = None, message: str | None = None
) -> dict[str, Any]:
    """The API's error JSON, with the usual type and message for the status."""
    default_type, default_message = ERROR_TYPES.get(status, ("api_error", f"HTTP {status}"))
    error = {"type": error_type or default_type, "message": message or default_message}
    return {"type": "error", "error": error}


def json_text(value: Any) -> str:
    """``value`` as the API writes JSON: UTF-8 text, and a lone surrogate (which no UTF-8
    can hold, and which a model's output can carry) as a ``\\udXXX`` escape."""
    return _LONE_SURROGATE.sub(
        lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False)
    )


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def sse_event(event: str, data: Mapping[str, Any]) -> bytes:
    """One server-sent event: an `event:` line, a `data:` line and a blank line."""
    return f"event: {event}\ndata: {json_text(data)}\n\n".encode()


def split_chunks(text: str, pieces: int) -> list[str]:
    """Split text into at most `pieces` consecutive non-empty parts."""
    size = max(1, math.ceil(len(text) / pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def message_json(
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str | None,
    usage: dict[str, int],
) -> dict[str, Any]:
    """A complete `Message` object."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def block_start(block: dict[str, Any]) -> dict[str, Any]:
    """A content block as `content_block_start` announces it, before any delta."""
    if block["type"] == "tool_use":
        return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
    return {"type": "text", "text": ""}


def block_deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    """The `delta` payloads that stream a block's content in a few chunks."""
    if block["type"] == "tool_use":
        partial = json_text(block["input"])
        if block.get("cut_off"):  # the output limit struck halfway through the input
            partial = partial[: len(partial) // 2]
        return [{"type": "input_json_delta", "partial_json": p} for p in split_chunks(partial, 4)]
    return [{"type": "text_delta", "text": p} for p in split_chunks(block["text"], 3)]


def stream_events(message: dict[str, Any]) -> Iterator[bytes]:
    """The full SSE stream that delivers `message`."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield sse_event("message_start", {"type": "message_start", "message": start})
    yield sse_event("ping", {"type": "ping"})
    for index, block in enumerate(message["content"]):
        start_data = {"type": "content_block_start", "index": index}
        yield sse_event("content_block_start", {**start_data, "content_block": block_start(block)})
        for delta in block_deltas(block):
            data = {"type": "content_block_delta", "index": index, "delta": delta}
            yield sse_event("content_block_delta", data)
        yield sse_event("content_block_stop", {"type": "content_block_stop", "index": index})
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield sse_event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": delta,
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield sse_event("message_stop", {"type": "message_stop"})


def prompt_blocks(body: Mapping[str, Any]) -> list[tuple[Any, bool]]:
    """The prompt as cacheable blocks in API order (tools, system, messages).

    Each entry is `(canonical value without cache_control, carries cache_control)`; a string
    system prompt or message content counts as one text block.
    """
    blocks: list[tuple[Any, bool]] = []

    def add(section: Any, block: Any) -> None:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        marked = isinstance(block, dict) and "cache_control" in block
        if isinstance(block, dict):
            block = {k: v for k, v in block.items() if k != "cache_control"}
        blocks.append(([section, block], marked))

    for tool in _as_list(body.get("tools")):
        add("tools", tool)
    for block in _as_list(body.get("system")):
        add("system", block)
    for i, message in enumerate(_as_list(body.get("messages"))):
        content = message.get("content") if isinstance(message, dict) else None
        role = message.get("role") if isinstance(message, dict) else None
        for block in _as_list(content):
            add(["messages", i, role], block)
    return blocks


def _as_list(value: Any) -> list[Any]:
    if value is None or value == "":
        return []
    return value if isinstance(value, list) else [value]


class PromptCache:
    """Simulated prompt cache, keyed by model and the canonical prefix up to a breakpoint.

    Like the real API, a request reads the longest previously written prefix found at most
    `CACHE_LOOKBACK_BLOCKS` blocks before one of its breakpoints, writes the rest up to its last
    breakpoint, and pays full price for what follows. Prefixes under `min_tokens` are not cached.
    """

    def __init__(self, min_tokens: int = 0) -> None:
        self.min_tokens = min_tokens
        self._written: set[str] = set()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every cached prefix."""
        with self._lock:
            self._written.clear()

    def usage(self, body: Mapping[str, Any]) -> dict[str, int]:
        """Input usage of a request, recording the prefixes it writes."""
        blocks = prompt_blocks(body)
        cumulative = [0]
        keys = [""]
        hasher = hashlib.sha256(canonical_json(body.get("model")).encode())
        for value, _ in blocks:
            text = canonical_json(value)
            cumulative.append(cumulative[-1] + math.ceil(len(text) / 4))
            hasher.update(text.encode() + b"\x1e")
            keys.append(hasher.copy().hexdigest())
        breakpoints = [
            i + 1
            for i, (_, marked) in enumerate(blocks)
            if marked and cumulative[i + 1] >= max(self.min_tokens, 1)
        ]
        if not breakpoints:
            return _usage(input_tokens=cumulative[-1])
        last = breakpoints[-1]
        with self._lock:
            hit = max(
                (
                    j
                    for b in breakpoints
                    for j in range(b, max(b - CACHE_LOOKBACK_BLOCKS, 0), -1)
                    if keys[j] in self._written
                ),
                default=0,
            )
            self._written.update(keys[b] for b in breakpoints)
        return _usage(
            input_tokens=cumulative[-1] - cumulative[last],
            cache_creation=cumulative[last] - cumulative[hit],
            cache_read=cumulative[hit],
        )


def _usage(input_tokens: int, cache_creation: int = 0, cache_read: int = 0) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_creation,
        "cache_read_input_tokens": cache_read,
        "output_tokens": 0,
    }


def validate_messages_body(body: Any, *, count_tokens: bool = False) -> str | None:
    """The API's 400 message for a malformed request body, or None if it is acceptable.

    Checks the rules an agent loop most easily breaks: required fields, non-empty content (an
    empty final assistant message is allowed), and that every tool_use is answered by a
    tool_result first in the very next message, and every tool_result answers one. Like the
    real API it accepts consecutive turns of one role (it would merge them) and, as this
    project relies on, mid-conversation system messages.
    """
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    max_tokens = body.get("max_tokens")
    if not count_tokens and (not isinstance(max_tokens, int) or max_tokens < 1):
        return "max_tokens: Field required (a positive integer)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: Field required (a non-empty list)"
    pending: set[str] = set()  # tool_use ids the next message must answer
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in MESSAGE_ROLES:
            return f"messages.{i}: role must be 'user', 'assistant' or 'system'"
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        final_assistant = i == len(messages) - 1 and message["role"] == "assistant"
        if not isinstance(blocks, list) or (not blocks and not final_assistant):
            return (
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        if not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks):
            return f"messages.{i}.content: each content block must be an object with a type"
        if any(b["type"] == "text" and not str(b.get("text", "")).strip() for b in blocks):
            return f"messages.{i}: text content blocks must contain non-whitespace text"
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if pending and (message["role"] != "user" or not pending <= set(results)):
            missing = ", ".join(sorted(pending - set(results)))
            return (
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {missing}. Each `tool_use` block must have a corresponding `tool_result` "
                "block in the next message."
            )
        if unexpected := [r for r in results if r not in pending]:
            return (
                f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{unexpected[0]}. Each `tool_result` block must have a corresponding `tool_use` "
                "block in the previous message."
            )
        if any(b.get("type") == "tool_result" for b in blocks[len(results) :]):
            return f"messages.{i}: tool_result blocks must come first in the content array"
        is_assistant = message["role"] == "assistant"
        pending = (
            {str(b.get("id")) for b in blocks if b["type"] == "tool_use"} if is_assistant else set()
        )
    if pending:
        return (
            f"messages: `tool_use` ids were found without `tool_result` blocks: {sorted(pending)}"
        )
    return None
