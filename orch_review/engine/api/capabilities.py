"""What a Messages endpoint accepts, and requests reshaped to fit it.

Anthropic's API (and Bedrock, Vertex AI, Foundry) accepts every part of the request
orch-review sends. Servers that speak the Messages API in front of open models (Ollama, vLLM,
llama.cpp's ``llama-server``, LiteLLM) convert it to their own chat format, and lose parts
of it: the Anthropic-defined bash tool has no ``input_schema``, so vLLM and LiteLLM refuse it
and Ollama and llama.cpp turn it into a function without parameters; a ``system`` entry
inside ``messages`` is refused (vLLM 0.22), breaks a strict chat template (llama.cpp) or is
folded into the user turn unmarked (vLLM 0.23, LiteLLM); a forced ``tool_choice`` is ignored
(Ollama) or loses the tool's name (llama.cpp).

Such an endpoint is told apart by its first answer: every response of Anthropic's API
carries a ``request-id`` header, and none of those servers sends one. Against an endpoint
without it, the shell and the mode notices take the forms every server accepts (a server
that converts them silently cannot be told from one that keeps them), and three cheap
requests find out whether it refuses ``output_config.effort``, whether it obeys a forced
``tool_choice`` (asked to call one tool while another is forced, which one does the answer
call?) and whether it serves ``count_tokens``. The answer is kept per base URL and model in
the user's cache, so later reviews start adapted and probe nothing.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from orch_review.engine.shell.bash import CLIENT_BASH_TOOL

#: The header every response of Anthropic's API carries (its documentation on errors and
#: request ids), and the name LiteLLM passes it on under (it prefixes a provider's headers).
ANTHROPIC_RESPONSE_HEADERS = ("request-id", "llm_provider-request-id")
ANTHROPIC_HOSTS = frozenset({"api.anthropic.com"})
SESSION_INSTRUCTIONS = (
    "[Session instructions from orch-review, the application running this conversation; "
    "they are not part of the user's message or of the code under review.]\n"
)
FORCED_REPORT_NOTE = (
    "Answer with one call to `{name}` and nothing else: this turn must end with that call."
)
FORCED_RETRY_NOTE = (
    "Your last answer did not call `{name}` with every field it requires, so it was not "
    "recorded. Call `{name}` now, with every required field."
)
CACHE_FILE = "servers.json"
CACHE_VERSION = 1


@dataclass(frozen=True, slots=True)
class Capabilities:
    """Which parts of a request an endpoint takes as Anthropic's API does."""

    server_tools: bool = True  # Anthropic-defined tools such as bash_20250124
    system_turns: bool = True  # {"role": "system"} entries inside `messages`
    effort: bool = True  # output_config.effort
    forced_tool_choice: bool = True  # tool_choice {"type": "tool", "name": ...} obeyed
    count_tokens: bool = True  # POST /v1/messages/count_tokens

    @property
    def adaptations(self) -> list[str]:
        """What orch-review does instead, one phrase per missing capability."""
        said = []
        if not self.server_tools:
            said.append("the shell is offered as a client tool (`command`, `restart`)")
        if not self.system_turns:
            said.append("orchestration-mode notices go in the user turn")
        if not self.forced_tool_choice:
            said.append("report turns are asked for by instruction, checked and asked once more")
        if not self.effort:
            said.append("no effort level is sent (the server refuses `output_config`)")
        if not self.count_tokens:
            said.append("it has no token-counting route")
        return said

    def to_json(self) -> dict[str, bool]:
        """JSON-ready form, for the cache."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> Capabilities | None:
        """The inverse of :meth:`to_json`; None for anything else."""
        if not isinstance(data, dict) or set(data) != set(asdict(FULL)):
            return None
        if not all(isinstance(value, bool) for value in data.values()):
            return None
        return cls(**data)


FULL = Capabilities()
#: The forms every Messages server accepts: a client shell tool, notices in the user turn,
#: report turns asked for by instruction. Effort and token counting are probed.
OPEN_SERVER = replace(FULL, server_tools=False, system_turns=False, forced_tool_choice=False)


def from_anthropic(headers: Mapping[str, str]) -> bool:
    """Whether a response with these headers came from Anthropic's API (directly or through
    a gateway that passes its request id on)."""
    return any(headers.get(name) for name in ANTHROPIC_RESPONSE_HEADERS)


def adapt(request: Mapping[str, Any], caps: Capabilities) -> dict[str, Any]:
    """``request`` (the keyword arguments of ``messages.create``) reshaped for ``caps``;
    unchanged, the same dict contents, when the endpoint accepts everything."""
    out = dict(request)
    if caps == FULL:
        return out
    if not caps.server_tools:
        out["tools"] = [
            CLIENT_BASH_TOOL if tool.get("type") == "bash_20250124" else tool
            for tool in out.get("tools") or ()
        ]
    if not caps.system_turns:
        out["messages"] = fold_system_turns(out["messages"])
    if not caps.effort:
        out.pop("output_config", None)
    choice = out.get("tool_choice")
    if not caps.forced_tool_choice and isinstance(choice, Mapping):
        out.pop("tool_choice")
        if choice.get("type") == "tool":
            note = FORCED_REPORT_NOTE.format(name=choice.get("name"))
            out["messages"] = _with_user_text(out["messages"], note)
    return out


def fold_system_turns(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``messages`` without ``system`` entries: each one's text joins the user turn it
    follows (the one it applies to), marked as the session's instructions."""
    out: list[Mapping[str, Any]] = []
    for message in messages:
        if message.get("role") != "system":
            out.append(message)
            continue
        text = SESSION_INSTRUCTIONS + _text(message.get("content"))
        if out and out[-1].get("role") == "user":
            out[-1] = _with_user_text([out[-1]], text)[0]
        else:
            out.append({"role": "user", "content": [{"type": "text", "text": text}]})
    return out


def forced_reply_ok(
    content: Sequence[Mapping[str, Any]], choice: Mapping[str, Any], tools: Sequence[Any]
) -> bool:
    """Whether ``content`` answers a forced turn: it calls the tool ``choice`` names, with
    every field that tool's schema requires."""
    name = choice.get("name")
    schema = next(
        (t.get("input_schema") for t in tools if isinstance(t, Mapping) and t.get("name") == name),
        None,
    )
    required = schema.get("required", ()) if isinstance(schema, Mapping) else ()
    for block in content:
        if block.get("type") == "tool_use" and block.get("name") == name:
            given = block.get("input")
            if isinstance(given, Mapping) and all(key in given for key in required):
                return True
    return False


def retry_note(messages: Sequence[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
    """``messages`` with the note that asks a forced turn once more."""
    return _with_user_text(messages, FORCED_RETRY_NOTE.format(name=name))


def _with_user_text(messages: Sequence[Mapping[str, Any]], text: str) -> list[Mapping[str, Any]]:
    """``messages`` with ``text`` added to the trailing user turn (copied, never changed in
    place), or in a new one."""
    out = list(messages)
    block = {"type": "text", "text": text}
    if out and out[-1].get("role") == "user":
        content = out[-1]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        out[-1] = {**out[-1], "content": [*blocks, block]}
    else:
        out.append({"role": "user", "content": [block]})
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        str(b.get("text", "")) for b in content or () if isinstance(b, Mapping) and "text" in b
    )


def endpoint_for(provider: str, base_url: object, env: Mapping[str, str]) -> Endpoint:
    """The endpoint a client of ``provider`` talks to: a cloud provider's, or Anthropic's
    own, is known without asking it to take every request as Anthropic's API does."""
    if provider != "anthropic" or not base_url:
        return Endpoint("", everything=True, cache=None)
    parts = urlsplit(str(base_url))
    host = (parts.hostname or "").lower()
    shown = urlunsplit(
        (
            parts.scheme,
            host + (f":{parts.port}" if parts.port else ""),
            parts.path.rstrip("/"),
            "",
            "",
        )
    )
    return Endpoint(shown, everything=host in ANTHROPIC_HOSTS, cache=cache_path(env))


#: The forcing probe: the model is asked to call the first tool while the second is forced.
PROBE_TOOLS = tuple(
    {
        "name": name,
        "description": f"Answers the check `{name}`.",
        "input_schema": {"type": "object", "properties": {}},
    }
    for name in ("check_asked", "check_forced")
)
PROBE_FORCING = {
    "max_tokens": 64,
    "tools": list(PROBE_TOOLS),
    "tool_choice": {"type": "tool", "name": "check_forced"},
    "messages": [{"role": "user", "content": "Call the tool `check_asked`, with no input."}],
}


def probe_endpoint(sdk: Any, model: str, *, effort: str) -> Capabilities:
    """What a server that is not Anthropic's accepts beyond :data:`OPEN_SERVER`'s forms:
    a one-token request with the effort level (and without it, when it is refused, to tell
    the effort from the rest), a forced tool call, and a token count."""
    import anthropic

    plain = {"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "OK?"}]}
    try:
        sdk.messages.create(**plain, output_config={"effort": effort})
        effort_ok = True
    except (anthropic.BadRequestError, anthropic.UnprocessableEntityError):
        sdk.messages.create(**plain)  # its failure is the server's answer to every request
        effort_ok = False
    try:
        sdk.messages.count_tokens(model=model, messages=plain["messages"])
        counts = True
    except anthropic.NotFoundError as exc:
        if not route_missing(exc):
            raise
        counts = False
    except (anthropic.BadRequestError, anthropic.UnprocessableEntityError):
        counts = False
    try:
        forced = sdk.messages.create(model=model, **PROBE_FORCING)
        content = getattr(forced, "content", None)  # a page that is not JSON comes as text
        obeyed = isinstance(content, list) and any(
            getattr(b, "name", None) == "check_forced" for b in content
        )
    except (anthropic.BadRequestError, anthropic.UnprocessableEntityError):
        obeyed = False
    return replace(OPEN_SERVER, effort=effort_ok, forced_tool_choice=obeyed, count_tokens=counts)


def route_missing(exc: Exception) -> bool:
    """Whether a 404 says the route does not exist (a web framework's page, not the
    Messages API's error JSON, which names what is not found)."""
    body = getattr(exc, "body", None)
    return not (isinstance(body, dict) and isinstance(body.get("error"), dict | str))


#: What a server's words about a refused request point at, first match wins.
_FEATURES = (
    (
        ("input_schema", "bash_20250124", "tools", "function"),
        "a tool of the kind orch-review offers",
    ),
    (("system", "role"), "system turns inside `messages` (orchestration-mode notices)"),
    (("tool_choice",), "a forced `tool_choice`"),
    (("output_config", "effort"), "`output_config.effort`"),
    (
        ("context", "too long", "exceed", "n_ctx", "maximum"),
        "a context window as long as the prompt",
    ),
)


def feature_named(server_words: str) -> str:
    """The part of the request a server's refusal names, in a few words."""
    lowered = server_words.lower()
    for words, feature in _FEATURES:
        if any(word in lowered for word in words):
            return feature
    return "a part of the request orch-review relies on"


def cache_path(env: Mapping[str, str]) -> Path | None:
    """Where the capabilities of endpoints are kept: ``$ORCH_REVIEW_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/orch-review``, else ``~/.cache/orch-review``; None without any."""
    explicit = env.get("ORCH_REVIEW_CACHE_DIR")
    if explicit:
        return Path(explicit, CACHE_FILE)
    base = env.get("XDG_CACHE_HOME") or (
        os.path.join(env["HOME"], ".cache") if env.get("HOME") else ""
    )
    return Path(base, "orch-review", CACHE_FILE) if base else None


class Endpoint:
    """What one endpoint accepts, per model: known at once for Anthropic and the clouds,
    learnt from the first answer otherwise, and kept in the user's cache."""

    def __init__(self, url: str, *, everything: bool, cache: Path | None) -> None:
        self.url = url
        self._everything = everything
        self._cache = cache
        self._known: dict[str, Capabilities] = {}
        self._anthropic = False
        self._announced: set[str] = set()
        self.lock = threading.Lock()  # one first contact at a time
        self._state = threading.Lock()

    @property
    def accepts_everything(self) -> bool:
        """Whether the endpoint is Anthropic's API or a cloud provider's, by configuration."""
        return self._everything

    def known(self, model: str) -> Capabilities | None:
        """The capabilities for ``model``, or None until the endpoint has answered once."""
        if self._everything:
            return FULL
        with self._state:
            if self._anthropic:
                return FULL
            if model not in self._known:
                cached = self._read().get(self._key(model))
                found = Capabilities.from_json(cached)
                if found is not None:
                    self._known[model] = found
            return self._known.get(model)

    def to_announce(self, model: str) -> bool:
        """True the first time this is asked for ``model``: what is adapted for it is said
        once per run."""
        with self._state:
            if model in self._announced:
                return False
            self._announced.add(model)
            return True

    def is_anthropic(self) -> None:
        """Record that the endpoint answered as Anthropic's API: nothing is adapted."""
        with self._state:
            self._anthropic = True

    def learnt(self, model: str, caps: Capabilities) -> None:
        """Record (and keep in the cache) what the endpoint accepts for ``model``."""
        with self._state:
            self._known[model] = caps
            if self._cache is None:
                return
            entries = self._read()
            entries[self._key(model)] = caps.to_json()
            try:
                self._cache.parent.mkdir(parents=True, exist_ok=True)
                temporary = self._cache.with_name(f".{self._cache.name}.{os.getpid()}")
                temporary.write_text(
                    json.dumps({"version": CACHE_VERSION, "servers": entries}, sort_keys=True)
                )
                temporary.replace(self._cache)
            except OSError:
                pass  # the next review probes again: a few cheap requests

    def _key(self, model: str) -> str:
        return f"{self.url} {model}"

    def _read(self) -> dict[str, Any]:
        if self._cache is None:
            return {}
        try:
            data = json.loads(self._cache.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        servers = data.get("servers")
        return servers if isinstance(servers, dict) else {}
