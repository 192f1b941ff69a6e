"""Servers that speak the Messages API in front of open models, for the fake Messages API.

Each :class:`CompatServer` does to a request what that server's converter does, as read in
its source, before the scripted model sees it; refuses what it refuses, with its status and
error body; and answers without what it does not send (Anthropic's ``request-id`` header,
cache usage fields, a token-counting route)::

    fake_api.server = OLLAMA

What each one follows:

- Ollama (ollama/ollama, ``anthropic/anthropic.go`` and ``middleware/anthropic.go``):
  ``convertTool`` turns every tool into a function whose parameters are its
  ``input_schema``, none for ``bash_20250124``; ``MessageParam`` keeps any role, so a
  ``system`` entry reaches the chat template in place; ``tool_choice`` is parsed and never
  used; ``output_config.effort`` becomes the ``think`` level; ``Usage`` has input and output
  tokens only; no count_tokens route is registered (gin answers 404 ``404 page not found``
  as text).
- vLLM (vllm-project/vllm, ``vllm/entrypoints/anthropic/protocol.py``): ``AnthropicTool``
  requires ``input_schema``; up to 0.22 ``AnthropicMessage.role`` is ``Literal["user",
  "assistant"]``; from 0.23 ``inline_system.py`` folds a ``system`` entry into the user turn
  before it (its text joined with a blank line). FastAPI's validation errors come back as
  400 in the OpenAI error shape. ``tool_choice`` becomes a named function choice (obeyed);
  ``effort`` is validated and not used; ``AnthropicUsage``'s cache fields are None.
- llama.cpp (ggml-org/llama.cpp, ``server_chat_convert_anthropic_to_oai``): a tool's
  ``parameters`` are its ``input_schema`` or ``{}``; ``tool_choice`` ``tool`` or ``any``
  becomes ``"required"`` (the name is lost); ``output_config`` is not read; messages pass
  through with their role, and a strict chat template raises "System message must be at
  the beginning", answered 500 ``server_error``.
- LiteLLM in front of Anthropic's API passes the request on and the answer's headers back,
  each prefixed ``llm_provider-`` (``process_response_headers``).
- LiteLLM before an OpenAI-compatible backend (BerriAI/litellm,
  ``llms/anthropic/experimental_pass_through/adapters/transformation.py``): tools are
  translated to OpenAI functions from ``input_schema``, and a tool without one is refused
  (400); a ``system`` entry inside ``messages`` reaches the model as an "Operator note" in
  the user turn; a named ``tool_choice`` becomes OpenAI's named function choice.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tests.fakes.model_io import ModelRequest, Reply

NO_PARAMETERS = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class Refusal:
    """An error answer: status, content type and body bytes."""

    status: int
    body: Any  # JSON, or text when `text` is set
    text: bool = False


@dataclass(frozen=True)
class CompatServer:
    """One server's behaviour; see the module docstring."""

    name: str
    refuse: Callable[[Mapping[str, Any]], Refusal | None]
    view: Callable[[dict[str, Any]], dict[str, Any]]
    usage_keys: frozenset[str]
    count_tokens: bool = True
    null_usage_keys: frozenset[str] = frozenset()  # sent as null (vLLM's unset fields)
    #: The header a backend's request id reaches the client under, if any.
    request_id_header: str | None = None
    #: Whether a named tool_choice constrains the answer to that tool (vLLM's guided
    #: decoding of a named function; the fake gives the call no arguments of its own).
    forces: bool = False

    def seen(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The request as the model behind the server receives it."""
        return self.view(copy.deepcopy(dict(body)))

    def shape(self, request: ModelRequest, reply: Reply) -> Reply:
        """``reply`` as the server lets it out: a call to a tool the model was given without
        parameters carries none (a model that follows the schema it was given)."""
        bare = {
            str(t.get("name"))
            for t in request.tools
            if not (t.get("input_schema") or {}).get("properties")
        }
        blocks = [
            {**b, "input": {}} if b.get("type") == "tool_use" and b.get("name") in bare else b
            for b in reply.blocks
        ]
        choice = request.body.get("tool_choice")
        if self.forces and isinstance(choice, dict) and choice.get("type") == "tool":
            name = choice.get("name")
            calls = [b for b in blocks if b.get("type") == "tool_use" and b.get("name") == name]
            return Reply(calls[:1] or [{"type": "tool_use", "name": name, "input": {}}])
        return Reply(blocks, reply.stop_reason)

    def usage(self, usage: Mapping[str, int]) -> dict[str, Any]:
        """The usage fields the server sends."""
        sent: dict[str, Any] = {k: v for k, v in usage.items() if k in self.usage_keys}
        return sent | dict.fromkeys(self.null_usage_keys)


def _tools_as_functions(body: dict[str, Any]) -> dict[str, Any]:
    """Every tool as a function: its schema, or no parameters (Ollama, llama.cpp)."""
    body["tools"] = [
        {
            "name": tool.get("name"),
            "description": tool.get("description", ""),
            "input_schema": tool.get("input_schema") or NO_PARAMETERS,
        }
        for tool in body.get("tools") or ()
    ]
    return body


def _fold(body: dict[str, Any], prefix: str = "", joiner: str = "\n\n") -> dict[str, Any]:
    """Each ``system`` entry's text appended to the user turn before it."""
    out: list[dict[str, Any]] = []
    for message in body.get("messages") or ():
        if message.get("role") != "system":
            out.append(message)
            continue
        text = prefix + _text(message.get("content"))
        if out and out[-1].get("role") == "user":
            content = out[-1]["content"]
            if isinstance(content, str):
                folded: Any = content + joiner + text
            elif content and content[-1].get("type") == "text":
                folded = [
                    *content[:-1],
                    {**content[-1], "text": content[-1]["text"] + joiner + text},
                ]
            else:
                folded = [*content, {"type": "text", "text": text}]
            out[-1] = {**out[-1], "content": folded}
        else:
            out.append({"role": "user", "content": text})
    body["messages"] = out
    return body


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in content or () if b.get("type") == "text")


def _without(*keys: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def drop(body: dict[str, Any]) -> dict[str, Any]:
        for key in keys:
            body.pop(key, None)
        return body

    return drop


def _tool_choice_required(body: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp: ``tool`` and ``any`` both become "required": some tool, any of them."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("tool", "any"):
        body["tool_choice"] = {"type": "any"}
    return body


def _chain(*steps: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def run(body: dict[str, Any]) -> dict[str, Any]:
        for step in steps:
            body = step(body)
        return body

    return run


def _schemaless(body: Mapping[str, Any]) -> int | None:
    return next((i for i, t in enumerate(body.get("tools") or ()) if "input_schema" not in t), None)


def _system_turn(body: Mapping[str, Any]) -> int | None:
    return next(
        (i for i, m in enumerate(body.get("messages") or ()) if m.get("role") == "system"), None
    )


def _openai_error(message: str, status: int = 400) -> dict[str, Any]:
    return {"error": {"message": message, "type": "BadRequestError", "param": None, "code": status}}


def _vllm_refusal(*, system_allowed: bool) -> Callable[[Mapping[str, Any]], Refusal | None]:
    def refuse(body: Mapping[str, Any]) -> Refusal | None:
        problems = []
        tool = _schemaless(body)
        if tool is not None:
            problems.append(
                f"{{'type': 'missing', 'loc': ('body', 'tools', {tool}, 'input_schema'), "
                "'msg': 'Field required'}"
            )
        turn = _system_turn(body)
        if turn is not None and not system_allowed:
            problems.append(
                f"{{'type': 'literal_error', 'loc': ('body', 'messages', {turn}, 'role'), "
                "'msg': \"Input should be 'user' or 'assistant'\"}"
            )
        return Refusal(400, _openai_error(f"[{', '.join(problems)}]")) if problems else None

    return refuse


def _llama_refusal(*, strict: bool) -> Callable[[Mapping[str, Any]], Refusal | None]:
    def refuse(body: Mapping[str, Any]) -> Refusal | None:
        if strict and _system_turn(body) is not None:
            message = (
                "Error while rendering the chat template: System message must be at the beginning."
            )
            return Refusal(
                500, {"error": {"code": 500, "message": message, "type": "server_error"}}
            )
        return None

    return refuse


def _litellm_refusal(body: Mapping[str, Any]) -> Refusal | None:
    tool = _schemaless(body)
    if tool is None:
        return None
    message = (
        "litellm.BadRequestError: tools.{0}: Anthropic-defined tool type "
        f"'{body['tools'][tool].get('type')}' cannot be sent to an OpenAI-compatible model: "
        "it has no input_schema"
    ).format(tool)
    return Refusal(400, {"error": {"message": message, "type": None, "param": None, "code": "400"}})


def _nothing(_: Mapping[str, Any]) -> Refusal | None:
    return None


_BASE_USAGE = frozenset({"input_tokens", "output_tokens"})

OLLAMA = CompatServer(
    "ollama",
    _nothing,
    _chain(_tools_as_functions, _without("tool_choice")),
    _BASE_USAGE,
    count_tokens=False,
)
_CACHE_USAGE = frozenset({"cache_creation_input_tokens", "cache_read_input_tokens"})
VLLM_0_22 = CompatServer(
    "vllm-0.22",
    _vllm_refusal(system_allowed=False),
    _without("output_config"),
    _BASE_USAGE,
    null_usage_keys=_CACHE_USAGE,
    forces=True,
)
VLLM = CompatServer(
    "vllm",
    _vllm_refusal(system_allowed=True),
    _chain(_fold, _without("output_config")),
    _BASE_USAGE,
    null_usage_keys=_CACHE_USAGE,
    forces=True,
)
LLAMA_CPP = CompatServer(
    "llama.cpp",
    _llama_refusal(strict=False),
    _chain(_tools_as_functions, _tool_choice_required, _without("output_config")),
    _BASE_USAGE,
)
LLAMA_CPP_STRICT = CompatServer(
    "llama.cpp-strict",
    _llama_refusal(strict=True),
    _chain(_tools_as_functions, _tool_choice_required, _without("output_config")),
    _BASE_USAGE,
)
LITELLM = CompatServer(
    "litellm",
    _litellm_refusal,
    _chain(lambda body: _fold(body, "Operator note: ", "\n"), _without("output_config")),
    _BASE_USAGE | {"cache_read_input_tokens"},
    forces=True,  # a named function choice, obeyed by a vLLM backend
)
#: LiteLLM's pass-through to Anthropic's API: the request goes on as it is, and the answer's
#: headers come back prefixed ``llm_provider-`` (``process_response_headers``).
LITELLM_TO_ANTHROPIC = CompatServer(
    "litellm-anthropic",
    _nothing,
    lambda body: body,
    _BASE_USAGE | {"cache_creation_input_tokens", "cache_read_input_tokens"},
    request_id_header="llm_provider-request-id",
)
ALL = (OLLAMA, VLLM_0_22, VLLM, LLAMA_CPP, LLAMA_CPP_STRICT, LITELLM)
