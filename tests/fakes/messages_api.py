"""Fake Anthropic Messages API: a real HTTP server on 127.0.0.1 driven by a Python policy.

A policy is a scripted "model": a function from `ModelRequest` to `Reply`. The server speaks the
real wire format (SSE with chunked transfer encoding, JSON messages, error bodies, usage with a
simulated prompt cache), records every request and injects faults::

    with FakeMessagesAPI(lambda req: Reply.text("hello")) as api:
        client = anthropic.Anthropic(base_url=api.base_url, api_key="k")
        api.add_fault("status", status=529)  # the next request gets 529 overloaded_error

When the policy (or the fake itself) raises, the request gets 500 `api_error` and the failure is
appended to `policy_errors`; the `fake_api` fixture fails the test at teardown if any are left,
so a broken script cannot pass as "the engine handled an API error".
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

from tests.fakes.compat_servers import CompatServer
from tests.fakes.http_server import Exchange, LocalHTTPServer
from tests.fakes.model_io import ModelRequest, Reply
from tests.fakes.provider_wire import (
    ProviderCall,
    bedrock_error,
    provider_call,
    sigv4_access_key,
)
from tests.fakes.wire import (
    STATUS_BY_ERROR_TYPE,
    PromptCache,
    error_body,
    message_json,
    prompt_blocks,
    sse_event,
    stream_events,
    token_count,
    validate_messages_body,
)

__all__ = ["FakeMessagesAPI", "Fault", "ModelRequest", "PolicyFailure", "RecordedRequest", "Reply"]

Policy = Callable[[ModelRequest], Reply]
Matcher = Callable[[ModelRequest], bool]

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
FAULT_KINDS = frozenset(
    {"status", "drop_stream", "error_event", "hang", "latency", "pings", "held"}
)
DEFAULT_HANG_SECONDS = 30.0
DEFAULT_PING_SECONDS = 0.2
SSE = "text/event-stream; charset=utf-8"


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received; `fault` names the injected fault kind it got, if any."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes
    received_at: float
    fault: str | None = None
    #: "anthropic", or the cloud provider whose wire format the request came in (see
    #: tests/fakes/provider_wire.py); `path` and `body` are then the Claude API's equivalent,
    #: `wire_path` and `raw` what was sent.
    provider: str = "anthropic"
    wire_path: str = ""

    def model_request(self) -> ModelRequest:
        """The policy's view of this request."""
        return ModelRequest(self.body, self.headers)


@dataclass
class Fault:
    """A scheduled fault; see `FakeMessagesAPI.add_fault`. `hits` counts requests it answered."""

    kind: str
    times: int | None = 1
    match: Matcher | None = None
    status: int | None = None
    retry_after: float | None = None
    delay: float | None = None
    error_type: str | None = None
    message: str | None = None
    hits: int = 0
    #: "held" requests waiting for `release()` right now.
    held: int = 0
    released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        """Let the requests a "held" fault holds (and later ones) be answered."""
        self.released.set()

    @property
    def exhausted(self) -> bool:
        """Whether the fault has answered all the requests it was meant to."""
        return self.times is not None and self.hits >= self.times


@dataclass(frozen=True)
class PolicyFailure:
    """An exception raised by the policy (or inside the fake) while serving a request."""

    exception: BaseException
    traceback: str

    def __str__(self) -> str:
        return self.traceback


class FakeMessagesAPI:
    """The fake server. Settable attributes: `policy`, `expected_key`, `latency`."""

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy: Policy | None = policy
        #: When set, requests whose Bearer token or x-api-key differs get 401.
        self.expected_key: str | None = None
        #: When set, seconds to wait before answering each /v1/messages request.
        self.latency: Callable[[ModelRequest], float] | None = None
        #: When set, the fake behaves as that server in front of an open model (see
        #: tests/fakes/compat_servers.py) instead of as Anthropic's API.
        self.server: CompatServer | None = None
        self.policy_errors: list[PolicyFailure] = []
        self.cache = PromptCache()
        self._requests: list[RecordedRequest] = []
        self._faults: list[Fault] = []
        # Re-entrant: fault matchers run under it and may read `requests`.
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._http = LocalHTTPServer(self._serve, name="fake-messages-api")

    def start(self) -> Self:
        """Listen on a free port of 127.0.0.1 and serve in background threads."""
        self._http.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake hanging requests and close every open connection."""
        self._http.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL` or `Anthropic(base_url=...)`."""
        return self._http.base_url

    # -- faults and records ------------------------------------------------------------------

    def add_fault(
        self,
        kind: str,
        *,
        times: int | None = 1,
        match: Matcher | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        delay: float | None = None,
        error_type: str | None = None,
        message: str | None = None,
    ) -> Fault:
        """Schedule a fault for the next `times` matching /v1/messages requests (None: forever).

        Faults are tried in the order added; the first whose `match` accepts the request answers
        it. Kinds: "status" (HTTP `status`, default 500, with error JSON, `error_type` and
        `message` as given or the status's usual ones, and optional retry-after),
        "drop_stream" (200, part of the stream, then the connection is closed without the
        final chunk), "error_event" (200, message_start, then an SSE `error` event,
        default overloaded_error), "hang" (no answer for `delay` s, default 30, or until stop(),
        then the connection is closed), "latency" (wait `delay` s, then answer normally),
        "pings" (200, message_start, then nothing but a `ping` event every `delay` s, default
        0.2, until the client goes away or stop(): a stalled stream that looks alive), "held"
        (no answer until `fault.release()`, then the policy's answer: replies in flight).
        Faulted requests other than "latency" never reach the policy.
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {sorted(FAULT_KINDS)}")
        if times is not None and times < 1:
            raise ValueError("times must be at least 1, or None for every matching request")
        fault = Fault(kind, times, match, status, retry_after, delay, error_type, message)
        with self._lock:
            self._faults.append(fault)
        return fault

    @property
    def pending_faults(self) -> list[Fault]:
        """Faults not yet used up."""
        with self._lock:
            return list(self._faults)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, faulted ones included."""
        with self._lock:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """Recorded POST /v1/messages requests only."""
        return [r for r in self.requests if r.path == MESSAGES_PATH]

    def requests_for(self, role: str) -> list[RecordedRequest]:
        """Recorded /v1/messages requests from agents of `role` (see `ModelRequest.role`)."""
        return [r for r in self.message_requests if r.model_request().role == role]

    def reset(self) -> None:
        """Forget requests, faults, policy errors and the prompt cache."""
        with self._lock:
            self._requests.clear()
            self._faults.clear()
            self.policy_errors.clear()
        self.cache.clear()

    # -- serving -----------------------------------------------------------------------------

    def _serve(self, handler: Exchange) -> None:
        # Anthropic's API names every response; other servers do not, or under another name.
        header = "request-id" if self.server is None else self.server.request_id_header
        if header is not None:
            handler.response_headers[header] = self._next_id("req")
        try:
            self._respond(handler)
        except OSError:
            handler.close_connection = True  # the client went away; nothing left to answer
        except Exception as exc:
            self._record_failure(exc)
            handler.close_connection = True
            with contextlib.suppress(OSError):  # the response may have started already
                _send_error(handler, 500, message=f"fake Messages API failed: {exc!r}")

    def _respond(self, handler: Exchange) -> None:
        path = wire_path = handler.route
        headers = {k.lower(): v for k, v in handler.headers.items()}
        raw = handler.read_body()
        parsed = _parse_object(raw)
        call = provider_call(path, parsed) if handler.command == "POST" else None
        if call is not None:
            path, parsed = call.route, call.body
        body = parsed or {}
        provider = call.provider if call else "anthropic"

        def record(fault: str | None = None) -> None:
            entry = RecordedRequest(
                path, headers, body, raw, time.monotonic(), fault, provider, wire_path
            )
            with self._lock:
                self._requests.append(entry)

        def fail(status: int, message: str | None = None) -> None:
            record()
            _send_error(handler, status, message=message, call=call)

        if not self._authorized(headers):
            return fail(401)
        if handler.command != "POST" or path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
            return fail(404, f"Not found: {handler.command} {path}")
        if call is not None and call.problem:
            return fail(400, call.problem)
        server = self.server if call is None else None
        if server is not None and path == COUNT_TOKENS_PATH and not server.count_tokens:
            record()
            return handler.send_text(404, "404 page not found")
        problem = validate_messages_body(parsed, count_tokens=path != MESSAGES_PATH)
        if problem:
            return fail(400, problem)
        refusal = server.refuse(body) if server is not None else None
        if refusal is not None:
            record()
            return handler.send_json(refusal.status, refusal.body)

        request = ModelRequest(server.seen(body) if server is not None else body, headers)
        if path == COUNT_TOKENS_PATH:
            record()
            tokens = sum(token_count(value) for value, _ in prompt_blocks(body))
            return handler.send_json(200, {"input_tokens": tokens})

        fault = self._take_fault(request)
        record(fault.kind if fault else None)
        delay = self.latency(request) if self.latency else 0.0
        if fault and fault.kind == "latency":
            delay += fault.delay or 0.0
        if delay > 0 and self._http.stopping.wait(delay):
            return handler.abort()
        if fault and fault.kind == "held":
            return self._hold(handler, fault, request, call)
        if fault and fault.kind != "latency":
            return self._inject(handler, fault, request, call)
        self._answer(handler, request, call)

    def _answer(self, handler: Exchange, request: ModelRequest, call: ProviderCall | None) -> None:
        try:
            if self.policy is None:
                raise RuntimeError("FakeMessagesAPI has no policy")
            reply = self.policy(request)
            if not isinstance(reply, Reply):
                raise TypeError(f"policy must return a Reply, got {reply!r}")
            if self.server is not None and call is None:
                reply = self.server.shape(request, reply)
            content = [self._content_block(block) for block in reply.blocks]
        except Exception as exc:
            self._record_failure(exc)
            return _send_error(handler, 500, message=f"policy raised {exc!r}", call=call)
        usage = self.cache.usage(request.body)
        usage["output_tokens"] = max(1, token_count(content))
        if self.server is not None and call is None:
            usage = self.server.usage(usage)
        message = message_json(
            self._next_id("msg"), request.model, content, reply.effective_stop_reason, usage
        )
        if request.body.get("stream") is not True:
            whole = [{k: v for k, v in b.items() if k != "cut_off"} for b in content]
            return handler.send_json(200, {**message, "content": whole})
        encode = call.encode if call else _same
        handler.start_stream(call.content_type if call else SSE)
        for event in stream_events(message):
            handler.write_chunk(encode(event))
        handler.end_stream()

    def _hold(
        self, handler: Exchange, fault: Fault, request: ModelRequest, call: ProviderCall | None
    ) -> None:
        with self._lock:
            fault.held += 1
        try:
            while not fault.released.wait(0.02):
                if self._http.stopping.is_set():
                    return handler.abort()
        finally:
            with self._lock:
                fault.held -= 1
        self._answer(handler, request, call)

    def _inject(
        self, handler: Exchange, fault: Fault, request: ModelRequest, call: ProviderCall | None
    ) -> None:
        stream = request.body.get("stream") is True
        encode = call.encode if call else _same
        if fault.kind == "status":
            status = fault.status or 500
            return _send_error(
                handler,
                status,
                fault.error_type,
                fault.retry_after,
                message=fault.message,
                call=call,
            )
        if fault.kind == "hang" or (fault.kind == "pings" and not stream):
            self._http.stopping.wait(DEFAULT_HANG_SECONDS if fault.delay is None else fault.delay)
            return handler.abort()
        error_type = fault.error_type or "overloaded_error"
        if fault.kind == "error_event" and not stream:
            status = STATUS_BY_ERROR_TYPE.get(error_type, 529)
            return _send_error(handler, status, error_type, fault.retry_after, call=call)

        usage = self.cache.usage(request.body)
        text = {"type": "text", "text": "This answer is cut short by an injected fault."}
        message = message_json(self._next_id("msg"), request.model, [text], "end_turn", usage)
        if fault.kind == "pings" and stream:
            handler.start_stream(call.content_type if call else SSE)
            handler.write_chunk(encode(next(stream_events(message))))
            interval = DEFAULT_PING_SECONDS if fault.delay is None else fault.delay
            while not self._http.stopping.wait(interval):
                handler.write_chunk(encode(sse_event("ping", {"type": "ping"})))
            return handler.abort()
        if fault.kind == "drop_stream":
            sse = call.content_type if call else SSE
            handler.start_stream(sse if stream else "application/json")
            if stream:  # message_start, ping, content_block_start, first text_delta
                for event in itertools.islice(stream_events(message), 4):
                    handler.write_chunk(encode(event))
            else:
                data = json.dumps(message).encode()
                handler.write_chunk(data[: len(data) // 2])
            return handler.abort()
        handler.start_stream(call.content_type if call else SSE)
        handler.write_chunk(encode(next(stream_events(message))))
        handler.write_chunk(encode(sse_event("error", error_body(529, error_type))))
        handler.end_stream()

    def _content_block(self, block: dict[str, Any]) -> dict[str, Any]:
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            return {"type": "text", "text": block["text"]}
        if block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
            tool_id = self._next_id("toolu")
            out = {"type": "tool_use", "id": tool_id, "name": str(block["name"])}
            return {
                **out,
                "input": block["input"],
                **({"cut_off": True} if block.get("cut_off") else {}),
            }
        raise ValueError(f"unsupported reply block {block!r}")

    def _take_fault(self, request: ModelRequest) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.match is None or fault.match(request):
                    fault.hits += 1
                    if fault.exhausted:
                        self._faults.remove(fault)
                    return fault
        return None

    def _authorized(self, headers: dict[str, str]) -> bool:
        if self.expected_key is None:
            return True
        authorization = headers.get("authorization", "")
        scheme, _, token = authorization.partition(" ")
        bearer = token.strip() if scheme.lower() == "bearer" else None
        signed = sigv4_access_key(authorization)  # Bedrock: the key id of a SigV4 signature
        return self.expected_key in (bearer, headers.get("x-api-key"), signed)

    def _record_failure(self, exc: BaseException) -> None:
        text = "".join(traceback.format_exception(exc))
        with self._lock:
            self.policy_errors.append(PolicyFailure(exc, text))

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_{next(self._ids):04d}"


def _send_error(
    exchange: Exchange,
    status: int,
    error_type: str | None = None,
    retry_after: float | None = None,
    *,
    message: str | None = None,
    call: ProviderCall | None = None,
) -> None:
    headers = {} if retry_after is None else {"retry-after": _seconds(retry_after)}
    body = error_body(status, error_type, message)
    if call is not None and call.provider == "bedrock":
        body, aws_headers = bedrock_error(body["error"]["type"], body["error"]["message"])
        headers |= aws_headers
    exchange.send_json(status, body, headers)


def _same(event: bytes) -> bytes:
    return event


def _parse_object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
