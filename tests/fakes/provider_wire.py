"""The cloud providers' wire formats, for the fake Messages API.

Each provider carries the same Messages request differently, as its documentation says:

- Amazon Bedrock (InvokeModel): ``POST /model/{model}/invoke-with-response-stream``, the
  model in the URL, no ``model`` or ``stream`` in the body but an ``anthropic_version``, a
  SigV4 ``Authorization`` header (or a Bedrock API key as a Bearer token); the response is an
  AWS event stream (``application/vnd.amazon.eventstream``) whose ``chunk`` events carry each
  Messages stream event base64-encoded in ``{"bytes": ...}``.
- Google Vertex AI: ``POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/
  {model}:streamRawPredict``, the model in the URL, ``anthropic_version`` in the body, an
  OAuth access token as Bearer; the response is the usual SSE.
- Microsoft Foundry: ``POST /anthropic/v1/messages`` with ``x-api-key`` (or a Microsoft
  Entra ID token as Bearer); SSE.

All three take the effort level as the Claude API does, ``output_config.effort`` with no
beta header (Anthropic's effort documentation lists it as generally available on each), and
reject what the Claude API rejects there: an unknown level or an unknown ``output_config`` key.

:func:`provider_call` recognises such a request and gives back the request as the Claude API
would have received it, so the same scripted models answer every provider.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
EVENT_STREAM = "application/vnd.amazon.eventstream"

_BEDROCK = re.compile(r"^/model/(?P<model>[^/]+)/(?P<op>invoke|invoke-with-response-stream)$")
_VERTEX = re.compile(
    r"^/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/"
    r"models/(?P<model>[^/:]+):(?P<op>rawPredict|streamRawPredict)$"
)
_FOUNDRY = re.compile(r"^/anthropic(?P<route>/v1/messages(?:/count_tokens)?)$")
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
_OUTPUT_CONFIG_KEYS = frozenset({"effort", "format"})

# Bedrock's names for the error types of the Claude API, in exception frames and headers.
BEDROCK_EXCEPTIONS = {
    "overloaded_error": "serviceUnavailableException",
    "rate_limit_error": "throttlingException",
    "api_error": "internalServerException",
    "invalid_request_error": "validationException",
}


@dataclass(frozen=True)
class ProviderCall:
    """One provider request, read back into the Claude API's terms."""

    provider: str
    route: str  # MESSAGES_PATH or COUNT_TOKENS_PATH
    body: dict[str, Any]  # with `model` and `stream` as the Claude API carries them
    problem: str | None = None  # why the provider would reject the request (400)
    details: Mapping[str, str] | None = None  # e.g. Vertex's project and region

    @property
    def encode(self) -> Callable[[bytes], bytes]:
        """Turns one SSE event of the Claude API into what this provider streams."""
        return sse_to_bedrock_frame if self.provider == "bedrock" else _same

    @property
    def content_type(self) -> str:
        """The streamed response's content type."""
        return EVENT_STREAM if self.provider == "bedrock" else "text/event-stream; charset=utf-8"


def provider_call(path: str, body: dict[str, Any] | None) -> ProviderCall | None:
    """The provider request at ``path``, or None for a Claude API path."""
    body = dict(body or {})
    if match := _BEDROCK.match(path):
        problem = _url_model_problem(body, "Bedrock") or output_config_problem(body)
        streamed = match["op"] == "invoke-with-response-stream"
        body = {**body, "model": unquote(match["model"]), "stream": streamed}
        return ProviderCall("bedrock", MESSAGES_PATH, body, problem)
    if match := _VERTEX.match(path):
        details = {"project": match["project"], "region": match["region"]}
        if match["model"] == "count-tokens":
            return ProviderCall("vertex", COUNT_TOKENS_PATH, body, None, details)
        problem = _url_model_problem(body, "Vertex AI") or output_config_problem(body)
        if problem is None and (body.get("stream") is True) != (match["op"] == "streamRawPredict"):
            problem = "stream must be true for streamRawPredict and absent for rawPredict"
        body = {**body, "model": unquote(match["model"])}
        return ProviderCall("vertex", MESSAGES_PATH, body, problem, details)
    if match := _FOUNDRY.match(path):
        return ProviderCall("foundry", match["route"], body, output_config_problem(body))
    return None


def _url_model_problem(body: Mapping[str, Any], name: str) -> str | None:
    if "model" in body:
        return f"{name} takes the model in the URL: `model` is not allowed in the body"
    if not isinstance(body.get("anthropic_version"), str):
        return f"{name} requires `anthropic_version` in the body"
    if name == "Bedrock" and "stream" in body:
        return "Bedrock streams by path: `stream` is not allowed in the body"
    return None


def output_config_problem(body: Mapping[str, Any]) -> str | None:
    """Why ``output_config`` would be refused (400), or None."""
    if "output_config" not in body:
        return None
    config = body["output_config"]
    if not isinstance(config, dict):
        return "output_config: Input should be a valid dictionary"
    if unknown := sorted(set(config) - _OUTPUT_CONFIG_KEYS):
        return f"output_config.{unknown[0]}: Extra inputs are not permitted"
    if "effort" in config and config["effort"] not in EFFORT_LEVELS:
        levels = ", ".join(f"'{level}'" for level in EFFORT_LEVELS)
        return f"output_config.effort: Input should be {levels}"
    return None


def _same(event: bytes) -> bytes:
    return event


def event_stream_frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One message of the AWS event-stream encoding (string headers only)."""
    encoded = b"".join(
        bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value
        for name, value in ((n, v.encode()) for n, v in headers.items())
    )
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def sse_to_bedrock_frame(event: bytes) -> bytes:
    """The Bedrock frame carrying one SSE event: a `chunk`, or an exception for `error`."""
    data = json.loads(
        "".join(
            line.removeprefix("data:").strip()
            for line in event.decode().splitlines()
            if line.startswith("data:")
        )
    )
    if data.get("type") == "error":
        error = data.get("error") or {}
        kind = BEDROCK_EXCEPTIONS.get(error.get("type"), "internalServerException")
        return bedrock_exception_frame(kind, str(error.get("message", "")))
    chunk = {"bytes": base64.b64encode(json.dumps(data).encode()).decode()}
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return event_stream_frame(headers, json.dumps(chunk).encode())


def bedrock_exception_frame(kind: str, message: str) -> bytes:
    """An exception frame of Bedrock's response stream (e.g. ``throttlingException``)."""
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return event_stream_frame(headers, json.dumps({"message": message}).encode())


def bedrock_error(error_type: str, message: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Body and headers of a Bedrock HTTP error (``{"message"}`` and ``x-amzn-ErrorType``)."""
    kind = BEDROCK_EXCEPTIONS.get(error_type, "internalServerException")
    name = kind[0].upper() + kind[1:]
    return {"message": message}, {"x-amzn-errortype": f"{name}:http://internal.amazon.com/"}


def sigv4_access_key(authorization: str) -> str | None:
    """The access key id of a SigV4 ``Authorization`` header, or None if it is not one."""
    match = re.match(r"AWS4-HMAC-SHA256 Credential=([^/]+)/", authorization)
    return match[1] if match else None
