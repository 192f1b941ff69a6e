"""The fake's server modes, through the real anthropic SDK: each refuses, converts and
answers as its server's source says (see tests/fakes/compat_servers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from tests.fakes import compat_servers
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply

BASH = {"type": "bash_20250124", "name": "bash"}
NOTICE: list[Any] = [
    {"role": "user", "content": "Review this change."},
    {"role": "system", "content": "Mode on."},
]


@pytest.fixture
def sdk(fake_api: FakeMessagesAPI) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=fake_api.base_url, api_key="k", max_retries=0) as client:
        yield client


def _create(sdk: anthropic.Anthropic, **kwargs: Any) -> Any:
    return sdk.messages.with_raw_response.create(
        model="m", max_tokens=100, messages=kwargs.pop("messages", NOTICE[:1]), **kwargs
    )


def test_anthropics_api_names_every_response_and_the_servers_do_not(
    fake_api: FakeMessagesAPI, sdk: anthropic.Anthropic
) -> None:
    fake_api.policy = lambda _: Reply.text("ok")
    assert _create(sdk).headers.get("request-id")
    fake_api.server = compat_servers.OLLAMA
    assert _create(sdk).headers.get("request-id") is None


def test_vllm_0_22_refuses_a_schemaless_tool_and_a_system_turn(
    fake_api: FakeMessagesAPI, sdk: anthropic.Anthropic
) -> None:
    fake_api.server = compat_servers.VLLM_0_22
    with pytest.raises(anthropic.BadRequestError) as raised:
        _create(sdk, tools=[BASH], messages=NOTICE)
    body = raised.value.body
    assert isinstance(body, dict)
    message = body["error"]["message"]
    assert "'input_schema'), 'msg': 'Field required'" in message
    assert "Input should be 'user' or 'assistant'" in message
    assert raised.value.response.headers.get("request-id") is None


def test_vllm_0_23_folds_a_system_turn_into_the_user_turn_before_it(
    fake_api: FakeMessagesAPI, sdk: anthropic.Anthropic
) -> None:
    seen: list[ModelRequest] = []
    fake_api.policy = lambda request: seen.append(request) or Reply.text("ok")
    fake_api.server = compat_servers.VLLM
    _create(sdk, messages=NOTICE, output_config={"effort": "high"})
    (request,) = seen
    assert request.messages == [{"role": "user", "content": "Review this change.\n\nMode on."}]
    assert "output_config" not in request.body  # validated, not used


def test_llama_cpp_with_a_strict_template_fails_on_a_system_turn(
    fake_api: FakeMessagesAPI, sdk: anthropic.Anthropic
) -> None:
    fake_api.server = compat_servers.LLAMA_CPP_STRICT
    with pytest.raises(anthropic.InternalServerError, match="must be at the beginning"):
        _create(sdk, messages=NOTICE)


def test_ollama_and_llama_cpp_call_a_schemaless_tool_with_nothing(
    fake_api: FakeMessagesAPI, sdk: anthropic.Anthropic
) -> None:
    fake_api.policy = lambda _: Reply.tool_use("bash", {"command": "ls"})
    for server in (compat_servers.OLLAMA, compat_servers.LLAMA_CPP):
        fake_api.server = server
        message = _create(sdk, tools=[BASH]).parse()
        assert [block.input for block in message.content] == [{}]


def test_tool_choice_is_ignored_by_ollama_and_loses_its_name_on_llama_cpp(
    fake_api: FakeMessagesAPI, sdk: anthropic.Anthropic
) -> None:
    seen: list[ModelRequest] = []
    fake_api.policy = lambda request: seen.append(request) or Reply.text("ok")
    tool = {"name": "report", "input_schema": {"type": "object", "properties": {}}}
    choice = {"type": "tool", "name": "report"}
    for server in (compat_servers.OLLAMA, compat_servers.LLAMA_CPP, compat_servers.VLLM):
        fake_api.server = server
        _create(sdk, tools=[tool], tool_choice=choice)
    assert [r.body.get("tool_choice") for r in seen] == [None, {"type": "any"}, choice]


def test_ollama_has_no_count_tokens_route_and_no_cache_usage(
    fake_api: FakeMessagesAPI, sdk: anthropic.Anthropic
) -> None:
    fake_api.policy = lambda _: Reply.text("ok")
    fake_api.server = compat_servers.OLLAMA
    with pytest.raises(anthropic.NotFoundError) as raised:
        sdk.messages.count_tokens(model="m", messages=NOTICE[:1])
    assert raised.value.body == "404 page not found"
    usage = _create(sdk).parse().usage
    assert usage.cache_read_input_tokens is None and usage.cache_creation_input_tokens is None


def test_litellm_refuses_a_schemaless_tool_and_rewrites_a_system_turn(
    fake_api: FakeMessagesAPI, sdk: anthropic.Anthropic
) -> None:
    seen: list[ModelRequest] = []
    fake_api.policy = lambda request: seen.append(request) or Reply.text("ok")
    fake_api.server = compat_servers.LITELLM
    with pytest.raises(anthropic.BadRequestError, match="input_schema"):
        _create(sdk, tools=[BASH])
    _create(sdk, messages=NOTICE)
    assert seen[0].messages[0]["content"].endswith("\nOperator note: Mode on.")
