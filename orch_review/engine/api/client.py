"""The one place that talks to the Messages API.

One SDK client per session (so HTTP connections are reused across agents), streaming
requests, and one retry policy: the SDK's own retries are off and every transient failure is
retried here, bounded, with backoff that honours ``retry-after``. That includes two faults the
SDK does not retry by itself: a stream cut off mid-response (the HTTP layer's protocol error,
not an ``anthropic.APIError``) and an ``error`` event inside a 200 stream.

The SDK sends each request and raises its typed errors for HTTP statuses; the event stream of
a successful response is folded into the final message by :mod:`orch_review.engine.api.stream`,
with plain dicts instead of one pydantic object per event.

Transport faults and model outcomes are told apart here, once: a fault (an HTTP error, a
dropped or garbled stream, an ``error`` event) is retried with the same request; a complete
response is a :class:`Reply`, whatever the model did (ran out of output tokens in the middle
of a tool call, refused, said nothing). Resending the same request after an outcome would
pay again for the same answer, so outcomes go to the agent loop, which changes the
conversation instead.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from orch_review import waiting
from orch_review.engine.api import capabilities, providers
from orch_review.engine.api.endpoint_sender import SERVER_ERROR, SHAPE_STATUSES, AdaptedSender
from orch_review.engine.api.hedging import Abort, AttemptAborted
from orch_review.engine.api.stream import (
    IncompleteStream,
    StreamErrorEvent,
    StreamLimits,
    StreamTimedOut,
    read_events,
    read_message,
)
from orch_review.errors import (
    ApiUnavailable,
    ApiUnusable,
    AuthenticationFailed,
    ConfigError,
    OrchReviewError,
    RequestRejected,
    UsageError,
)
from orch_review.quoting import text_for_json

if TYPE_CHECKING:
    import anthropic

_T = TypeVar("_T")
_log = logging.getLogger("orch_review.client")

CACHE_MARKER = {"type": "ephemeral"}
RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
RETRYABLE_STREAM_ERRORS = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
# Bedrock's names for the same faults, in the exception frames of its event stream.
RETRYABLE_STREAM_ERRORS |= providers.BEDROCK_RETRYABLE_EXCEPTIONS
# Connection failures after which no request to the same endpoint can succeed.
UNREACHABLE_ERRNOS = frozenset({errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH})
UNKNOWN_HOST_ERRORS = frozenset(
    {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}
)


class _SameErrorTwice(Exception):
    """A server that is not Anthropic's gave the same 500 body twice: not a passing fault."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True, slots=True)
class Reply:
    """One model response, decoupled from the SDK's types."""

    content: list[dict[str, Any]]
    stop_reason: str | None
    input_tokens: int
    output_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    replayed: bool = False  # served from the journal: no request was made
    cut_off: tuple[str, ...] = ()  # tools whose calls the output limit cut short (not in content)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """The tool_use blocks, in order."""
        return [b for b in self.content if b.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        """All text blocks joined."""
        return "\n".join(b["text"] for b in self.content if b.get("type") == "text").strip()


def _block_to_param(block: Mapping[str, Any]) -> dict[str, Any]:
    """A response content block as it is sent back in the next request."""
    if block.get("type") == "text":
        return {"type": "text", "text": block.get("text", "")}
    if block.get("type") == "tool_use":
        return {
            "type": "tool_use",
            "id": block["id"],
            "name": block["name"],
            "input": block.get("input") or {},
        }
    return {k: v for k, v in block.items() if v is not None}


def _reply(message: Mapping[str, Any]) -> Reply:
    """A complete response as a model outcome; a cut-off tool call is kept out of ``content``
    (it cannot be sent back) and named in ``cut_off``."""
    usage = message.get("usage") or {}
    blocks = list(message.get("content") or ())
    return Reply(
        content=[_block_to_param(b) for b in blocks if not b.get("incomplete")],
        stop_reason=message.get("stop_reason"),
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cache_write_tokens=int(usage.get("cache_creation_input_tokens") or 0),
        cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
        cut_off=tuple(str(b.get("name")) for b in blocks if b.get("incomplete")),
    )


def _with_cache_marker(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``messages`` with the moving cache breakpoint on the last block.

    Only the last message is copied (the others are shared, never mutated), so preparing a
    request costs the same on turn 30 as on turn 1.
    """
    out = list(messages)
    if not out:
        return out
    last = dict(out[-1])
    content = last["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    blocks[-1] = {**blocks[-1], "cache_control": CACHE_MARKER}
    last["content"] = blocks
    out[-1] = last
    return out


def unreachable(exc: BaseException) -> str | None:
    """Why ``exc`` means the endpoint cannot be reached at all (``connection refused``, ``no
    route to host``, a host name that does not exist), or None: a fault worth retrying."""
    import httpx2

    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, httpx2.UnsupportedProtocol | httpx2.InvalidURL):
            return "it is not an http:// or https:// URL"
        if isinstance(cause, socket.gaierror):
            return "its host name is not known" if cause.errno in UNKNOWN_HOST_ERRORS else None
        if isinstance(cause, OSError) and cause.errno in UNREACHABLE_ERRNOS:
            return os.strerror(cause.errno).lower()
        cause = cause.__cause__ or cause.__context__
    return None


class _NotAnApi(Exception):
    """A 200 answer with no event stream in it: a web page (a proxy's, a captive portal's) or
    another service at the configured URL. Every request would get the same."""

    def __init__(self, content_type: str, body: str) -> None:
        super().__init__(f"HTTP 200 {content_type or 'with no content type'}")
        self.content_type = content_type
        self.body = body

    def said(self) -> str:
        """What came back, in a few words: the content type and the page's title or start."""
        title = re.search(r"<title[^>]*>(.*?)</title", self.body, re.IGNORECASE | re.DOTALL)
        text = title.group(1) if title else self.body
        shown = "".join(c if c.isprintable() else " " for c in " ".join(text.split()))[:100]
        return f"{self} ({shown!r})" if shown else str(self)


class _Watched:
    """The lines of a response, with the start of the text kept and whether any line was
    part of an event stream (``event:``, ``data:``, a ``:`` comment)."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = lines
        self.start: list[str] = []
        self.events = False

    def __iter__(self) -> Iterator[str]:
        for line in self._lines:
            if not self.events:
                if line.startswith(("event:", "data:", ":")):
                    self.events = True
                elif len(self.start) < 40:
                    self.start.append(line)
            yield line


def _api_message(exc: anthropic.APIStatusError) -> str:
    """The ``message`` of the API's error JSON, or ""."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    return str(error.get("message") or "") if isinstance(error, dict) else ""


def _out_of_credit(exc: anthropic.APIStatusError) -> bool:
    """A 400 that every request would get: the account has no credit left."""
    return (
        exc.status_code == 400
        and _error_type(exc) == "invalid_request_error"
        and "credit balance" in _api_message(exc).lower()
    )


def _utf8(value: Any) -> Any:
    """``value`` with every string valid UTF-8, as JSON to the API must be: a byte of a file
    name or an output that was not UTF-8 (a lone surrogate) is written in octal (``\\377``),
    the form the prompts show such names in (git's quoting)."""
    if isinstance(value, str):
        return text_for_json(value)
    if isinstance(value, Mapping):
        return {key: _utf8(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_utf8(item) for item in value]
    return value


def _is_transient(exc: BaseException) -> bool:
    import anthropic
    import httpx2

    if isinstance(exc, httpx2.TransportError | anthropic.APIConnectionError):
        # An endpoint that cannot be reached refuses the next attempt just as fast.
        return unreachable(exc) is None
    if isinstance(exc, anthropic.APIStatusError):
        if exc.status_code == 200:  # an `error` event inside a streamed response
            return _error_type(exc) in RETRYABLE_STREAM_ERRORS
        return exc.status_code in RETRYABLE_STATUS
    return False


def _timed_out(exc: BaseException) -> bool:
    """Whether ``exc`` is a connect or read timeout: no answer within the request timeout."""
    import anthropic
    import httpx2

    return isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException)


def describe_error(exc: BaseException) -> str:
    """An API failure in a few words: ``HTTP 529 overloaded_error: Overloaded``, not the
    SDK's ``Error code: 529 - {'type': 'error', ...}``."""
    import anthropic

    if not isinstance(exc, anthropic.APIStatusError):
        return str(exc) or type(exc).__name__
    kind = _error_type(exc) or ""
    message = _api_message(exc)
    where = "an error event in the stream" if exc.status_code == 200 else f"HTTP {exc.status_code}"
    said = ": ".join(part for part in (kind, " ".join(message.split())[:300]) if part)
    return f"{where} {said}" if said else where


def _error_type(exc: anthropic.APIStatusError) -> str | None:
    error_type = exc.type
    if error_type is None:  # an error event in a stream: the SDK reads no type from it
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        error_type = error.get("type") if isinstance(error, dict) else None
    return str(error_type) if error_type is not None else None


def endpoint(url: object) -> str:
    """A base URL as it may be shown: without user name, password, query or fragment."""
    import httpx2

    try:
        shown = httpx2.URL(str(url)).copy_with(userinfo=b"", query=None, fragment=None)
    except (TypeError, ValueError, httpx2.InvalidURL):
        return "the configured endpoint"
    return str(shown).rstrip("/")


class _Backoff:
    """Exponential backoff with jitter, or the server's ``retry-after`` when it gives one."""

    def __init__(self, initial: float, maximum: float) -> None:
        self._exponential = wait_exponential_jitter(multiplier=initial, max=maximum)
        self._maximum = maximum

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        response = getattr(exc, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        ours = float(self._exponential(state))
        if header:
            # Never sooner than the server asks, never less patient than without its say.
            try:
                return min(max(float(header), ours), self._maximum)
            except ValueError:
                pass
        return ours


class Completer(Protocol):
    """Anything that answers a Messages request like :meth:`ModelClient.complete`."""

    def complete(
        self,
        *,
        model: str,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        tool_choice: Mapping[str, Any] | None = None,
    ) -> Reply:
        """Return the model's reply to one request."""
        ...


class ModelClient:
    """Streams Messages API requests with effort, cache breakpoints and retries."""

    def __init__(
        self,
        env: Mapping[str, str],
        *,
        max_retries: int,
        request_timeout: float,
        max_output_tokens: int,
        effort: str,
        backoff: tuple[float, float] = (1.0, 30.0),
        sleep: Callable[[float], None] = time.sleep,
        provider: str = "anthropic",
    ) -> None:
        """``backoff`` is the first and the longest wait between attempts, in seconds;
        ``sleep`` waits that long (tests pass one that records instead)."""
        self._setup = providers.sdk_setup(provider, env, timeout=request_timeout)
        # Importing the SDK and building its HTTP client (TLS context and all) takes tens of
        # milliseconds even when imported, seconds when not: it happens on a thread of its
        # own, while the caller prepares the review; the first request waits for it.
        self._sdk_ready: Future[Any] = Future()
        threading.Thread(target=self._build_sdk, name="orch-review-sdk", daemon=True).start()
        self._attempts = max_retries + 1
        self._backoff = _Backoff(*backoff)
        self._sleep = sleep
        self._max_output_tokens = max_output_tokens
        self._effort = effort
        self._server = capabilities.endpoint_for(provider, self._setup.options.get("base_url"), env)
        self._adapted = AdaptedSender(self._server, self._stream, lambda: self._sdk, effort=effort)
        # The SDK's timeout bounds each read, and `ping` events reset it: a stream that
        # sends only pings would never end. These bound the response itself.
        self._limits = StreamLimits.for_request(request_timeout, max_output_tokens)
        self._fatal_lock = threading.Lock()
        self._fatal: OrchReviewError | None = None
        self._in_flight = 0
        self._request_timeout = request_timeout
        self._answers = 0  # responses the endpoint began, to anyone: it is alive
        # The Abort of the request the calling thread is sending, if it may be cancelled.
        self._aborts = threading.local()
        #: Set when the review is interrupted: no request is sent any more (a retry neither),
        #: while those in flight still land.
        self.cancel = threading.Event()

    def _build_sdk(self) -> None:
        try:
            self._sdk_ready.set_result(providers.build_sdk(self._setup))
        except BaseException as exc:  # raised again by the first request
            self._sdk_ready.set_exception(exc)

    @property
    def _sdk(self) -> Any:  # anthropic.Anthropic or one of its cloud counterparts
        return waiting.result(self._sdk_ready)

    def complete(
        self,
        *,
        model: str,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        tool_choice: Mapping[str, Any] | None = None,
        abort: Abort | None = None,
    ) -> Reply:
        """Send one streamed request (retried on transient faults) and return the reply.
        ``abort``, fired from another thread, cancels it (:class:`AttemptAborted`): before
        it is sent, or by closing its response (at once, or when its response begins)."""

        kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": self._max_output_tokens,
            "system": [{"type": "text", "text": system, "cache_control": CACHE_MARKER}],
            "tools": list(tools),
            "messages": _with_cache_marker(messages),
            "output_config": {"effort": self._effort},
            "stream": True,
        }
        if tool_choice is not None:
            kwargs["tool_choice"] = dict(tool_choice)
        kwargs = _utf8(kwargs)
        self._aborts.current = abort
        try:
            return _reply(self._with_retries(model, partial(self._adapted.send, model, kwargs)))
        finally:
            self._aborts.current = None

    @property
    def unusable(self) -> OrchReviewError | None:
        """The first answer after which no request can succeed (unreachable endpoint,
        rejected credentials, unknown model, no credit), or None. Once there is one, no
        request is sent any more: each raises it again at once."""
        with self._fatal_lock:
            return self._fatal

    @property
    def in_flight(self) -> int:
        """How many requests are being sent or answered right now."""
        with self._fatal_lock:
            return self._in_flight

    def check_usable(self) -> None:
        """Raise :attr:`unusable`, if any."""
        fatal = self.unusable
        if fatal is not None:
            raise type(fatal)(str(fatal))

    def _stop_all(self, error: OrchReviewError) -> OrchReviewError:
        """Record ``error`` as the answer every later request gets; returns the first one."""
        with self._fatal_lock:
            if self._fatal is None:
                self._fatal = error
            return error

    def _endpoint(self) -> str:
        try:
            return endpoint(self._sdk.base_url)
        except Exception:  # the SDK could not be built: that error is raised, not this one
            return "the configured endpoint"

    def _answered(self) -> None:
        with self._fatal_lock:
            self._answers += 1

    def _dead_after(self, answers: int, timeouts: int) -> None:
        """Stop every request when this one timed out twice and the endpoint began no answer
        to anyone meanwhile: it accepts connections and answers none, and each further
        attempt, here or in an agent not yet started, would hold the review as long again."""
        with self._fatal_lock:
            alive = self._answers != answers
        if timeouts >= 2 and not alive:
            raise self._stop_all(
                ApiUnavailable(
                    f"The API at {self._endpoint()} answered none of the last requests within "
                    f"the request timeout ({self._request_timeout:g} s): no agent is started "
                    "against it any more. Check that the server is up, or raise "
                    "--request-timeout if it is only slow."
                )
            )

    def _with_retries(self, model: str, request: Callable[[], _T]) -> _T:
        """``request()``, retried on transient faults, its failures mapped to our errors."""
        self.check_usable()
        seen: list[str] = []
        with self._fatal_lock:
            answers = self._answers
        timeouts = 0
        try:
            for attempt in self._retrying():
                with attempt:
                    try:
                        result = self._attempt(partial(self._not_same_twice, seen, request))
                    except Exception as exc:
                        if _timed_out(exc):
                            timeouts += 1
                            self._dead_after(answers, timeouts)
                        raise
        except Exception as exc:
            ours = self._our_error(exc, model)
            if ours is None:
                raise
            raise ours from exc
        return result

    def _retrying(self) -> Retrying:
        """The retry policy: transient faults only, with backoff, each retry logged."""
        return Retrying(
            stop=stop_after_attempt(self._attempts),
            wait=self._backoff,
            sleep=self._sleep,
            retry=retry_if_exception(_is_transient),
            reraise=True,
            before_sleep=lambda s: _log.warning(
                "request failed (%s), retrying (attempt %d of %d)",
                s.outcome.exception() if s.outcome else "?",
                s.attempt_number + 1,
                self._attempts,
            ),
        )

    def _attempt(self, request: Callable[[], _T]) -> _T:
        """One try of ``request()``, counted in flight while it runs; none once the client
        is unusable or the review was interrupted."""
        self.check_usable()  # another agent's answer may have ended every request
        if self.cancel.is_set():
            raise ApiUnavailable("The review was interrupted: no request is sent.")
        abort = self._abort()
        if abort is not None and abort.fired:
            raise AttemptAborted
        with self._fatal_lock:
            self._in_flight += 1
        try:
            return request()
        except Exception as exc:
            import anthropic

            if abort is not None and abort.fired:  # its response was closed under it
                raise AttemptAborted from None
            if isinstance(exc, anthropic.APIStatusError) and exc.status_code != 200:
                self._answered()  # an HTTP error is an answer: the endpoint is alive
            raise
        finally:
            with self._fatal_lock:
                self._in_flight -= 1

    def _abort(self) -> Abort | None:
        return getattr(self._aborts, "current", None)

    def _not_same_twice(self, seen: list[str], request: Callable[[], _T]) -> _T:
        """``request()``; a 500 body a server that is not Anthropic's already gave for this
        request is a template or validation error, not worth another attempt."""
        import anthropic

        try:
            return request()
        except anthropic.APIStatusError as exc:
            if exc.status_code != SERVER_ERROR or not self._not_anthropic(exc):
                raise
            body = f"{exc.status_code} {exc.body!r}"
            if body in seen:
                raise _SameErrorTwice(exc) from exc
            seen.append(body)
            raise

    def _not_anthropic(self, exc: anthropic.APIStatusError) -> bool:
        """Whether ``exc`` came from a server that is not Anthropic's API."""
        if self._server.accepts_everything:
            return False
        return not capabilities.from_anthropic(exc.response.headers)

    def _refused_shape(self, error: Exception, server_error: str) -> OrchReviewError:
        """The error that stops the review when the server refuses what every request
        carries."""
        return self._stop_all(
            ApiUnusable(
                f"The server at {self._endpoint()} {server_error}. It lacks "
                f"{capabilities.feature_named(describe_error(error))}, which every request "
                "needs, so the review stops here: see docs/providers.md for what each "
                "server supports."
            )
        )

    def _our_error(self, exc: Exception, model: str) -> Exception | None:
        """The orch-review error a request's final failure stands for (None: raise it as it
        is). Failures no other request can get past stop every request."""
        import anthropic

        if isinstance(exc, _SameErrorTwice):
            said = f"gave the same error twice ({describe_error(exc.error)})"
            return self._refused_shape(exc.error, said)
        if (
            isinstance(exc, anthropic.APIStatusError)
            and exc.status_code in SHAPE_STATUSES
            and self._not_anthropic(exc)
        ):
            return self._refused_shape(exc, f"refused a request ({describe_error(exc)})")
        if isinstance(exc, anthropic.AuthenticationError):
            return self._stop_all(
                AuthenticationFailed(
                    f"The API at {self._endpoint()} rejected the credentials (401): check "
                    f"{providers.CREDENTIALS[self._setup.provider]}."
                )
            )
        if isinstance(exc, anthropic.PermissionDeniedError):
            return self._stop_all(
                AuthenticationFailed(
                    f"The API at {self._endpoint()} does not let these credentials use model "
                    f"`{model}` ({describe_error(exc)}): check the key's permissions and the "
                    "`model` setting."
                )
            )
        if isinstance(exc, anthropic.NotFoundError):
            return self._stop_all(
                ConfigError(
                    f"The API at {self._endpoint()} does not know model `{model}` "
                    f"({describe_error(exc)}): set `model` (or `subagent-model`) in your "
                    "configuration or with --model."
                )
            )
        if isinstance(exc, anthropic.BadRequestError):
            if _out_of_credit(exc):
                return self._stop_all(
                    ApiUnusable(
                        f"The API at {self._endpoint()} serves no request for this account "
                        f"({describe_error(exc)}): add credit to the account the key belongs "
                        "to, or use another key."
                    )
                )
            return RequestRejected(f"The API rejected a request: {describe_error(exc)}")
        if isinstance(exc, _NotAnApi):
            setting = providers.ENDPOINT_SETTING[self._setup.provider]
            return self._stop_all(
                ApiUnusable(
                    f"The server at {self._endpoint()} is not the Messages API: it answered "
                    f"{exc.said()}. Check {setting}; a proxy or a network sign-in page may be "
                    "in the way."
                )
            )
        if isinstance(exc, anthropic.APIStatusError) and exc.status_code == 413:
            return RequestRejected(
                f"The API refused a request as too large ({describe_error(exc)}): review "
                "fewer files at once (paths, --shard) or lower the size limits."
            )
        why = unreachable(exc)
        if why is not None:
            setting = providers.ENDPOINT_SETTING[self._setup.provider]
            return self._stop_all(
                ApiUnusable(
                    f"Cannot reach the API at {self._endpoint()} ({why}): check {setting} "
                    "and that the server there is up and reachable from this machine."
                )
            )
        if _is_transient(exc) or isinstance(exc, anthropic.APIError):
            tries = f"{self._attempts} attempt{'' if self._attempts == 1 else 's'}"
            return ApiUnavailable(f"The API kept failing after {tries}: {describe_error(exc)}")
        return None

    def _stream(
        self,
        kwargs: Mapping[str, Any],
        check: Callable[[Mapping[str, str]], None] | None = None,
    ) -> dict[str, Any]:
        """One streamed request, read to its final message; raises on any fault. ``check``
        sees the response's headers before its body is read, and may refuse it."""
        import anthropic
        import httpx2

        if self._setup.event_stream:  # binary frames the SDK decodes; an error frame raises
            with self._sdk.messages.create(**kwargs) as events:
                self._answered()
                self._attach(events.close)
                try:
                    return read_events((event.to_dict() for event in events), self._limits)
                except IncompleteStream as exc:
                    raise httpx2.RemoteProtocolError(str(exc)) from None
                except StreamTimedOut as exc:
                    raise httpx2.ReadTimeout(str(exc)) from None
        with self._sdk.messages.with_streaming_response.create(**kwargs) as response:
            self._answered()
            self._attach(response.close)
            if check is not None:
                check(response.headers)
            lines = _Watched(response.iter_lines())
            try:
                return read_message(lines, self._limits)
            except StreamErrorEvent as exc:
                # What the SDK raises for an `error` event: a status error with status 200.
                raise anthropic.APIStatusError(
                    exc.message, response=response.http_response, body=exc.body
                ) from None
            except IncompleteStream as exc:
                body = "\n".join(lines.start)
                if not lines.events and body.strip():
                    content_type = response.http_response.headers.get("content-type", "")
                    raise _NotAnApi(content_type.split(";")[0].strip(), body) from None
                raise httpx2.RemoteProtocolError(str(exc)) from None
            except StreamTimedOut as exc:
                raise httpx2.ReadTimeout(str(exc)) from None

    def _attach(self, close: Callable[[], object]) -> None:
        """The response of the calling thread's request began: ``close`` cancels it."""
        abort = self._abort()
        if abort is not None:
            abort.attach(close)

    def count_tokens(
        self, *, model: str, system: str, messages: Sequence[Mapping[str, Any]]
    ) -> int:
        """Ask the API how many input tokens a prompt has (retried and mapped to our errors
        like :meth:`complete`)."""
        if not self._setup.counts_tokens:
            raise UsageError(f"{self._setup.provider} does not count tokens: omit --count-tokens.")
        no_route = UsageError(
            f"The server at {self._endpoint()} has no token-counting route (POST "
            "/v1/messages/count_tokens): omit --count-tokens; the estimate from the local "
            "count still works."
        )
        caps = self._server.known(model)
        if caps is not None and not caps.count_tokens:
            raise no_route

        def count() -> int:
            import anthropic

            try:
                result = self._sdk.messages.count_tokens(
                    model=model,
                    system=text_for_json(system),
                    messages=_utf8(list(messages)),
                )
            except anthropic.NotFoundError as exc:
                if capabilities.route_missing(exc):
                    raise no_route from None
                raise
            return int(result.input_tokens)

        return self._with_retries(model, count)

    def close(self) -> None:
        """Close the HTTP connections."""
        if self._sdk_ready.exception() is None:
            self._sdk.close()
