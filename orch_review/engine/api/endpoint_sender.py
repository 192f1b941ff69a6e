"""Requests sent in the form their endpoint accepts (see :mod:`.capabilities`).

The first request to an endpoint of unknown kind goes out as to Anthropic's API. Anthropic's
API answers it; the answer of any other server (or its refusal) is closed unread, the
server is probed once, and the request is sent again, adapted. A forced turn the server
cannot force is asked by instruction, checked, and asked once more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from orch_review.engine.api import capabilities
from orch_review.engine.api.capabilities import Capabilities, Endpoint

_log = logging.getLogger("orch_review.client")

# Answers that may mean "not this request's shape": a server that is not Anthropic's is
# probed once after one of them. A template or validation error is a 500 (llama.cpp, vLLM);
# 502, 503 and 504 are a proxy's or a loading server's, and retried as ever.
SHAPE_STATUSES = frozenset({400, 422})
SERVER_ERROR = 500

Stream = Callable[[Mapping[str, Any], Callable[[Mapping[str, str]], None] | None], dict[str, Any]]


class _NotAnthropic(Exception):
    """The first answer of an endpoint has no ``request-id``: it is not Anthropic's API."""


class AdaptedSender:
    """Sends requests to one endpoint in the form it accepts, learning it on first contact."""

    def __init__(
        self, server: Endpoint, stream: Stream, sdk: Callable[[], Any], *, effort: str
    ) -> None:
        """``stream(kwargs, check)`` sends one streamed request (``check`` sees the
        response's headers first); ``sdk()`` is the SDK client, for the probes."""
        self.server = server
        self._stream = stream
        self._sdk = sdk
        self._effort = effort

    def send(self, model: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """One request, read to its final message; raises on any fault."""
        caps = self.server.known(model)
        if caps is None:
            with self.server.lock:  # one first contact; the others wait for its answer
                caps = self.server.known(model)
                if caps is None:
                    message, caps = self._first_contact(model, kwargs)
                    if message is not None:
                        return message
        if caps == capabilities.FULL:
            return self._stream(kwargs, None)
        if self.server.to_announce(model):
            _log.warning(
                "orch-review: the server at %s is not Anthropic's API; for `%s`: %s.",
                self.server.url,
                model,
                "; ".join(caps.adaptations),
            )
        request = capabilities.adapt(kwargs, caps)
        message = self._stream(request, None)
        choice = kwargs.get("tool_choice")
        if caps.forced_tool_choice or not isinstance(choice, Mapping) or "name" not in choice:
            return message
        if capabilities.forced_reply_ok(message.get("content") or (), choice, request["tools"]):
            return message
        again = {
            **request,
            "messages": capabilities.retry_note(request["messages"], choice["name"]),
        }
        retried = self._stream(again, None)
        retried["usage"] = _usage_sum(message.get("usage"), retried.get("usage"))
        return retried

    def _first_contact(
        self, model: str, kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, Capabilities]:
        """The first request, sent as is: Anthropic's API answers it; any other server is
        probed, and None says the request is to be sent again, adapted."""
        import anthropic

        try:
            return self._stream(kwargs, self._check_server), capabilities.FULL
        except _NotAnthropic:
            pass  # the stream was closed unread
        except anthropic.APIStatusError as exc:
            if capabilities.from_anthropic(exc.response.headers):
                self.server.is_anthropic()
                raise
            if exc.status_code not in SHAPE_STATUSES and exc.status_code != SERVER_ERROR:
                raise
        caps = capabilities.probe_endpoint(self._sdk(), model, effort=self._effort)
        self.server.learnt(model, caps)
        return None, caps

    def _check_server(self, headers: Mapping[str, str]) -> None:
        if capabilities.from_anthropic(headers):
            self.server.is_anthropic()
            return
        if "text/event-stream" not in headers.get("content-type", "").lower():
            return  # no event stream at all (a web page): reading it says what came back
        raise _NotAnthropic


def _usage_sum(*usages: Any) -> dict[str, int]:
    """The usage of several responses, added up field by field."""
    total: dict[str, int] = {}
    for usage in usages:
        for key, value in (usage or {}).items():
            if isinstance(value, int):
                total[key] = total.get(key, 0) + value
    return total
