"""Reviews against servers that are not Anthropic's API: Ollama, vLLM, llama.cpp, LiteLLM.

The fake Messages API behaves as each server does (tests/fakes/compat_servers.py): what it
refuses, what it converts before the model sees it, what it leaves out of its answers.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anthropic
import pytest

from orch_review.engine.api import capabilities
from orch_review.engine.api.client import ModelClient
from orch_review.engine.api.client import Reply as ClientReply
from orch_review.engine.shell.bash import BASH_TOOL, CLIENT_BASH_TOOL
from orch_review.errors import ApiUnusable, UsageError
from tests.conftest import GitRepoFactory
from tests.fakes import compat_servers
from tests.fakes.compat_servers import CompatServer, Refusal
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, RecordedRequest, Reply
from tests.fakes.model_io import content_text
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script

pytestmark = pytest.mark.slow

Policy = Callable[[ModelRequest], Reply]


def answering_probes(policy: Policy) -> Policy:
    """``policy``, answering the probes as a model does: a short answer to a request that
    offers no tools, and the call the forcing probe asks for (the server may force another)."""
    probe_tools = {str(t["name"]) for t in capabilities.PROBE_TOOLS}

    def answer(request: ModelRequest) -> Reply:
        if not request.tools:
            return Reply.text("OK")
        if request.tool_names == probe_tools:
            return Reply.tool_use("check_asked", {})
        return policy(request)

    return answer


def planted_review(
    repo: Path, env: dict[str, str], tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    out = tmp_path / "report.json"
    result = run_cli(repo, env, "--all", "--no-critic", "--json", str(out), *args)
    data = json.loads(out.read_text()) if out.exists() else {}
    return result, data


def refused(server: CompatServer, requests: list[RecordedRequest]) -> list[RecordedRequest]:
    return [r for r in requests if server.refuse(r.body) is not None]


def test_a_review_against_anthropics_api_sends_no_probe_and_adapts_nothing(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result, _ = planted_review(repo, api_env, tmp_path)

    assert result.returncode == 1, result.stderr
    assert "not Anthropic's API" not in result.stderr
    # 3 main turns, 2 concerns and 2 verifiers of 2 turns each, the one-turn sweep.
    requests = fake_api.requests
    assert len(requests) == 12 and all(r.body.get("tools") for r in requests)
    for request in requests:
        assert request.body["tools"][0] == BASH_TOOL
        assert request.body["output_config"] == {"effort": "xhigh"}
    assert fake_api.requests_for("main")[0].body["messages"][1]["role"] == "system"
    assert not (tmp_path / "home" / ".cache" / "orch-review" / capabilities.CACHE_FILE).exists()


@pytest.mark.parametrize("server", compat_servers.ALL, ids=lambda s: s.name)
def test_planted_review_completes_against_the_server(
    server: CompatServer,
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = answering_probes(planted_script())
    fake_api.server = server

    result, data = planted_review(repo, api_env, tmp_path)

    assert result.returncode == 1, result.stderr
    assert "SQL query built with an f-string" in result.stdout
    assert "1 finding refuted" in result.stdout
    coverage = data["coverage"]
    assert isinstance(coverage, dict)
    assert {f["status"] for f in coverage["files"]} == {"covered"}
    assert len(coverage["files"]) == 3
    # Said first: what is adapted for this server, before any agent but the main one starts.
    lines = result.stderr.splitlines()
    said = next(i for i, line in enumerate(lines) if "is not Anthropic's API" in line)
    assert said < next(i for i, line in enumerate(lines) if line.startswith("[subagent"))
    assert "the shell is offered as a client tool" in result.stderr
    # At most the first request is refused (it is sent as to Anthropic's API), never twice.
    messages = fake_api.message_requests
    assert len(refused(server, messages)) <= 1
    for request in messages[1:]:
        tools = request.body.get("tools") or []
        assert all(t.get("type") != "bash_20250124" for t in tools)
        assert all(m["role"] != "system" for m in request.body["messages"])
    # A second review starts adapted: the cache says what the server accepts.
    fake_api.reset()
    result, _ = planted_review(repo, {**api_env, "ORCH_REVIEW_JOURNAL": "false"}, tmp_path)
    assert result.returncode == 1, result.stderr
    assert fake_api.message_requests, "the second review made no request"
    assert refused(server, fake_api.message_requests) == []
    assert [r for r in fake_api.requests if not _with_tools(r.model_request())] == []  # no probe


# -- the client, in process ------------------------------------------------------------------

REPORT = {
    "name": "report_findings",
    "description": "Report.",
    "input_schema": {
        "type": "object",
        "properties": {"summary": {"type": "string"}, "findings": {"type": "array"}},
        "required": ["summary", "findings"],
    },
}
TASK = [
    {"role": "user", "content": "Review this change."},
    {"role": "system", "content": "Mode on."},
]


def _client(api: FakeMessagesAPI, waits: list[float], **env: str) -> ModelClient:
    return ModelClient(
        {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "k", **env},
        max_retries=3,
        request_timeout=60,
        max_output_tokens=1000,
        effort="xhigh",
        backoff=(1.0, 30.0),
        sleep=waits.append,
    )


def _complete(client: ModelClient, **kwargs: Any) -> ClientReply:
    return client.complete(
        model="local-model",
        system="system",
        tools=[BASH_TOOL, REPORT],
        messages=kwargs.pop("messages", TASK),
        **kwargs,
    )


def test_anthropics_api_gets_todays_request_and_no_probe(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda _: Reply.tool_use("report_findings", {"summary": "", "findings": []})
    client = _client(fake_api, [])
    try:
        _complete(client, tool_choice={"type": "tool", "name": "report_findings"})
        _complete(client)
    finally:
        client.close()

    first, second = fake_api.requests  # no probe, no count
    todays = {
        "model": "local-model",
        "max_tokens": 1000,
        "system": [{"type": "text", "text": "system", "cache_control": {"type": "ephemeral"}}],
        "tools": [BASH_TOOL, REPORT],
        "messages": [
            {"role": "user", "content": "Review this change."},
            {
                "role": "system",
                "content": [
                    {"type": "text", "text": "Mode on.", "cache_control": {"type": "ephemeral"}}
                ],
            },
        ],
        "output_config": {"effort": "xhigh"},
        "stream": True,
        "tool_choice": {"type": "tool", "name": "report_findings"},
    }
    # The bytes the SDK sends for the request as it was built before any adaptation.
    sdk = anthropic.Anthropic(base_url=fake_api.base_url, api_key="k", max_retries=0)
    try:
        with sdk.messages.with_streaming_response.create(**todays) as response:
            response.read()
    finally:
        sdk.close()
    assert first.raw == fake_api.requests[-1].raw
    assert "tool_choice" not in json.loads(second.raw)


def test_a_server_without_request_id_is_probed_once_then_sent_adapted_requests(
    fake_api: FakeMessagesAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_api.policy = answering_probes(
        lambda _: Reply.tool_use("bash", {"command": "git ls-files"})
    )
    fake_api.server = compat_servers.OLLAMA
    client = _client(fake_api, [], ORCH_REVIEW_CACHE_DIR=str(tmp_path))
    try:
        reply = _complete(client)
        _complete(client)
    finally:
        client.close()

    first, effort, count, forcing, adapted, again = fake_api.requests
    assert first.body["tools"][0] == BASH_TOOL  # sent as to Anthropic's API, not read
    assert effort.body["output_config"] == {"effort": "xhigh"} and effort.body["max_tokens"] == 1
    assert count.path == "/v1/messages/count_tokens"
    assert forcing.body["tool_choice"] == {"type": "tool", "name": "check_forced"}
    assert adapted.body["tools"] == [CLIENT_BASH_TOOL, REPORT]
    assert adapted.body["output_config"] == {"effort": "xhigh"}  # Ollama takes it (think)
    assert [m["role"] for m in adapted.body["messages"]] == ["user"]
    assert again.body["tools"] == adapted.body["tools"]
    assert reply.tool_uses[0]["input"] == {"command": "git ls-files"}  # the schema got through
    (notice,) = [r.getMessage() for r in caplog.records if "not Anthropic's API" in r.getMessage()]
    assert "no token-counting route" in notice


def test_a_forced_turn_the_server_cannot_force_is_asked_by_instruction_and_once_more(
    fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    def model(request: ModelRequest) -> Reply:
        if "Your last answer did not call" in request.last_user_text:
            return Reply.tool_use("report_findings", {"summary": "done", "findings": []})
        return Reply.text("The code looks fine to me.")

    fake_api.policy = answering_probes(model)
    fake_api.server = compat_servers.OLLAMA
    client = _client(fake_api, [], ORCH_REVIEW_CACHE_DIR=str(tmp_path))
    try:
        reply = _complete(client, tool_choice={"type": "tool", "name": "report_findings"})
    finally:
        client.close()

    asked, retried = fake_api.message_requests[-2:]
    assert "tool_choice" not in asked.body and "tool_choice" not in retried.body
    note = capabilities.FORCED_REPORT_NOTE.format(name="report_findings")
    assert note in asked.model_request().last_user_text
    assert [u["name"] for u in reply.tool_uses] == ["report_findings"]
    assert reply.output_tokens > 1  # both answers are counted


def test_a_server_that_obeys_a_forced_tool_choice_keeps_it(
    fake_api: FakeMessagesAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_api.policy = answering_probes(lambda _: Reply.text("The code looks fine to me."))
    fake_api.server = compat_servers.VLLM
    client = _client(fake_api, [], ORCH_REVIEW_CACHE_DIR=str(tmp_path))
    try:
        reply = _complete(client, tool_choice={"type": "tool", "name": "report_findings"})
    finally:
        client.close()

    sent = fake_api.message_requests[-1]
    assert sent.body["tool_choice"] == {"type": "tool", "name": "report_findings"}
    assert [u["name"] for u in reply.tool_uses] == ["report_findings"]  # one request, forced
    assert not any(
        "Your last answer" in r.model_request().last_user_text for r in fake_api.message_requests
    )
    (notice,) = [r.getMessage() for r in caplog.records if "not Anthropic's API" in r.getMessage()]
    assert "report turns" not in notice


def test_a_refused_effort_is_probed_and_left_out(fake_api: FakeMessagesAPI, tmp_path: Path) -> None:
    def refuse(body: Mapping[str, Any]) -> Refusal | None:
        if "output_config" in body:
            return Refusal(400, {"error": {"message": "output_config: extra field", "code": 400}})
        return compat_servers.VLLM.refuse(body)

    fake_api.policy = answering_probes(lambda _: Reply.text("ok"))
    fake_api.server = dataclasses.replace(compat_servers.VLLM, refuse=refuse)
    client = _client(fake_api, [], ORCH_REVIEW_CACHE_DIR=str(tmp_path))
    try:
        _complete(client)
        _complete(client)
    finally:
        client.close()

    refusals = [r for r in fake_api.message_requests if refuse(r.body)]
    assert len(refusals) == 2  # the first request, and the probe that tells effort apart
    assert not refusals[1].body.get("tools")
    assert all("output_config" not in r.body for r in fake_api.message_requests[-2:])


def test_a_shape_the_server_refuses_stops_every_request_naming_what_it_lacks(
    fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    fake_api.policy = answering_probes(lambda _: Reply.text("ok"))
    fake_api.server = compat_servers.VLLM
    words = "tools.1.input_schema.properties: nested arrays are not supported"
    fake_api.add_fault("status", status=400, message=words, times=None, match=_with_tools)
    client = _client(fake_api, [], ORCH_REVIEW_CACHE_DIR=str(tmp_path))
    try:
        with pytest.raises(ApiUnusable) as raised:
            _complete(client)
        with pytest.raises(ApiUnusable):
            _complete(client)  # no doomed request: the answer is known
    finally:
        client.close()

    message = str(raised.value)
    assert words in message and "a tool of the kind orch-review offers" in message
    assert len([r for r in fake_api.message_requests if _with_tools(r.model_request())]) == 2


def test_the_same_5xx_twice_from_a_server_stops_instead_of_five_retries(
    fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    fake_api.policy = answering_probes(lambda _: Reply.text("ok"))
    fake_api.server = compat_servers.LLAMA_CPP
    words = "Error while rendering the chat template: System message must be at the beginning."
    fake_api.add_fault("status", status=500, message=words, times=None, match=_with_tools)
    waits: list[float] = []
    client = _client(fake_api, waits, ORCH_REVIEW_CACHE_DIR=str(tmp_path))
    try:
        with pytest.raises(ApiUnusable, match="gave the same error twice") as raised:
            _complete(client)
    finally:
        client.close()

    assert "system turns inside `messages`" in str(raised.value)
    # First contact, then the adapted request twice: one wait, not max_retries.
    assert len([r for r in fake_api.message_requests if _with_tools(r.model_request())]) == 3
    assert len(waits) == 1


def test_a_proxys_502_in_front_of_a_server_is_still_retried(
    fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    fake_api.policy = answering_probes(lambda _: Reply.text("ok"))
    fake_api.server = compat_servers.OLLAMA
    fake_api.add_fault("status", status=502, message="upstream restarting", times=3)
    waits: list[float] = []
    client = _client(fake_api, waits, ORCH_REVIEW_CACHE_DIR=str(tmp_path))
    try:
        assert _complete(client).text == "ok"
    finally:
        client.close()
    assert len(waits) == 3


def test_anthropics_5xx_is_still_retried(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda _: Reply.text("ok")
    fake_api.add_fault("status", status=500, times=3)
    waits: list[float] = []
    client = _client(fake_api, waits)
    try:
        assert _complete(client).text == "ok"
    finally:
        client.close()
    assert len(waits) == 3


def test_a_missing_count_tokens_route_says_so(fake_api: FakeMessagesAPI) -> None:
    fake_api.server = compat_servers.OLLAMA
    client = _client(fake_api, [])
    try:
        with pytest.raises(UsageError, match="has no token-counting route") as raised:
            client.count_tokens(model="local-model", system="s", messages=TASK[:1])
    finally:
        client.close()
    assert "does not know model" not in str(raised.value)


def _with_tools(request: ModelRequest) -> bool:
    """A request of the review (not a probe)."""
    return request.has_tool("bash")


# -- orchestration mode and errors, end to end -----------------------------------------------

MODE_ON, MODE_OFF = "Orchestration mode is ON", "Orchestration mode is OFF"


def mode_reading(policy: Policy) -> Policy:
    """``policy`` for a main agent that does as the latest mode notice it was given says:
    fans out while the mode is on, answers solo once it is off; told nothing, it fails."""

    def answer(request: ModelRequest) -> Reply:
        if request.role != "main":
            return policy(request)
        told = "\n".join(content_text(m.get("content")) for m in request.messages)
        latest = max((told.rfind(MODE_ON), MODE_ON), (told.rfind(MODE_OFF), MODE_OFF))
        if latest[0] < 0:
            raise AssertionError("the main agent was told nothing about the mode")
        if latest[1] == MODE_OFF:
            return Reply.text("Answered solo: the mode is off.")
        return policy(request)

    return answer


@pytest.mark.parametrize(
    "server", [compat_servers.VLLM_0_22, compat_servers.LLAMA_CPP_STRICT], ids=lambda s: s.name
)
def test_without_system_turns_the_mode_fans_out_when_on_and_answers_solo_when_off(
    server: CompatServer,
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = answering_probes(mode_reading(planted_script()))
    fake_api.server = server

    result, _ = planted_review(repo, api_env, tmp_path)

    assert result.returncode == 1, result.stderr
    assert fake_api.requests_for("subagent") and fake_api.requests_for("verifier")  # fanned out
    told = fake_api.requests_for("main")[-1].body["messages"][0]["content"]
    assert any(
        b["text"].startswith(capabilities.SESSION_INSTRUCTIONS) and MODE_ON in b["text"]
        for b in told
    )
    fake_api.reset()

    asked = run_cli(repo, api_env, "ask", "is finding 1 real?")

    assert asked.returncode == 0, asked.stderr
    assert "Answered solo: the mode is off." in asked.stdout
    (request,) = fake_api.message_requests  # solo: no Workflow, no subagents, no probe
    assert server.refuse(request.body) is None
    last = request.body["messages"][-1]
    assert last["role"] == "user"
    assert last["content"][-1]["text"].startswith(capabilities.SESSION_INSTRUCTIONS)
    assert MODE_OFF in last["content"][-1]["text"]


def test_a_refused_shape_ends_the_review_with_the_main_agents_error_and_no_other_request(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = answering_probes(planted_script())
    fake_api.server = compat_servers.LITELLM
    words = "litellm.BadRequestError: tool_result blocks are not supported by this backend"
    fake_api.add_fault(
        "status", status=400, message=words, times=None, match=lambda r: r.assistant_turns > 0
    )

    result, _ = planted_review(repo, api_env, tmp_path)

    assert result.returncode == 2, result.stderr
    assert words in result.stderr and "Traceback" not in result.stderr
    assert "stops here" in result.stderr
    # The main agent's second turn was refused; nothing else was sent after it.
    assert fake_api.requests_for("subagent") == []
    assert fake_api.message_requests[-1].model_request().role == "main"
    assert fake_api.message_requests[-1].fault == "status"


def test_plan_count_tokens_says_the_server_has_no_token_counting_route(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.server = compat_servers.OLLAMA

    result = run_cli(repo, api_env, "plan", "--all", "--count-tokens")

    assert result.returncode == 2
    assert "has no token-counting route" in result.stderr
    assert "does not know model" not in result.stderr


def test_a_local_model_is_priced_as_the_dearest_known_until_given_a_price(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = answering_probes(planted_script())
    fake_api.server = compat_servers.OLLAMA
    env = {**api_env, "ORCH_REVIEW_MODEL": "qwen3-coder:30b", "ORCH_REVIEW_JOURNAL": "false"}

    result, data = planted_review(repo, env, tmp_path)

    assert result.returncode == 1, result.stderr
    assert "highest known price for qwen3-coder:30b" in result.stdout + result.stderr
    usage = data["usage"]
    assert isinstance(usage, dict) and usage["total"]["cost_usd"] > 0

    (repo / ".orch-review.toml").write_text('[prices."qwen3-coder:30b"]\ninput = 0\noutput = 0\n')
    result, data = planted_review(repo, env, tmp_path)

    assert result.returncode == 1, result.stderr
    assert "highest known price" not in result.stdout + result.stderr
    usage = data["usage"]
    assert isinstance(usage, dict) and usage["total"]["cost_usd"] == 0
    assert usage["total"]["total_tokens"] > 0  # a token cap still counts them


def test_litellm_in_front_of_anthropics_api_is_taken_for_it(
    fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    fake_api.policy = lambda _: Reply.text("ok")
    fake_api.server = compat_servers.LITELLM_TO_ANTHROPIC
    client = _client(fake_api, [], ORCH_REVIEW_CACHE_DIR=str(tmp_path))
    try:
        _complete(client)
        _complete(client)
    finally:
        client.close()

    first, second = fake_api.requests  # no probe
    assert first.body["tools"][0] == BASH_TOOL and second.body["tools"][0] == BASH_TOOL
    assert second.body["messages"][1]["role"] == "system"
    assert not (tmp_path / capabilities.CACHE_FILE).exists()
