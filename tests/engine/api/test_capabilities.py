"""Requests reshaped for servers that are not Anthropic's API, and the cache of what each
endpoint accepts."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from orch_review.engine.agents.prompts import MODE_ENTER
from orch_review.engine.api import capabilities
from orch_review.engine.api.capabilities import FULL, OPEN_SERVER, Capabilities
from orch_review.engine.shell.bash import BASH_TOOL, CLIENT_BASH_TOOL

REPORT_TOOL = {
    "name": "report_findings",
    "description": "Report.",
    "input_schema": {
        "type": "object",
        "properties": {"summary": {"type": "string"}, "findings": {"type": "array"}},
        "required": ["summary", "findings"],
    },
}


def _request() -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 10,
        "system": [{"type": "text", "text": "system"}],
        "tools": [BASH_TOOL, REPORT_TOOL],
        "messages": [
            {"role": "user", "content": "Review this change."},
            {"role": "system", "content": MODE_ENTER},
        ],
        "output_config": {"effort": "xhigh"},
        "tool_choice": {"type": "tool", "name": "report_findings"},
        "stream": True,
    }


def test_an_endpoint_that_accepts_everything_gets_the_request_unchanged() -> None:
    request = _request()
    assert capabilities.adapt(request, FULL) == request


def test_a_server_that_is_not_anthropics_gets_the_forms_every_server_accepts() -> None:
    request = _request()
    before = copy.deepcopy(request)

    adapted = capabilities.adapt(request, OPEN_SERVER)

    assert request == before  # the caller's request is not changed in place
    assert adapted["tools"] == [CLIENT_BASH_TOOL, REPORT_TOOL]
    assert CLIENT_BASH_TOOL["input_schema"]["properties"].keys() == {"command", "restart"}
    assert "tool_choice" not in adapted
    assert adapted["output_config"] == {"effort": "xhigh"}  # probed, not assumed
    (turn,) = adapted["messages"]  # the notice joins the user turn it follows
    assert turn["role"] == "user"
    texts = [block["text"] for block in turn["content"]]
    assert texts[0] == "Review this change."
    assert texts[1] == capabilities.SESSION_INSTRUCTIONS + MODE_ENTER
    assert "not part of the user's message" in texts[1]
    assert texts[2] == capabilities.FORCED_REPORT_NOTE.format(name="report_findings")


def test_a_refused_effort_is_left_out() -> None:
    adapted = capabilities.adapt(_request(), Capabilities(effort=False))
    assert "output_config" not in adapted
    assert adapted["tools"][0] == BASH_TOOL and adapted["tool_choice"]


def test_a_notice_after_an_assistant_turn_becomes_a_user_turn() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
        {"role": "system", "content": "note"},
    ]
    folded = capabilities.fold_system_turns(messages)
    assert [m["role"] for m in folded] == ["user", "assistant", "user"]
    assert folded[-1]["content"][0]["text"].endswith("note")


@pytest.mark.parametrize(
    ("content", "ok"),
    [
        (
            [
                {
                    "type": "tool_use",
                    "name": "report_findings",
                    "input": {"summary": "", "findings": []},
                }
            ],
            True,
        ),
        ([{"type": "tool_use", "name": "report_findings", "input": {"summary": "s"}}], False),
        ([{"type": "tool_use", "name": "bash", "input": {"command": "ls"}}], False),
        ([{"type": "text", "text": "The code looks fine."}], False),
    ],
)
def test_a_forced_turn_is_answered_by_a_complete_call_of_its_tool(
    content: list[dict[str, Any]], ok: bool
) -> None:
    choice = {"type": "tool", "name": "report_findings"}
    assert capabilities.forced_reply_ok(content, choice, [REPORT_TOOL]) is ok


@pytest.mark.parametrize(
    ("words", "feature"),
    [
        ("tools.0.input_schema: Field required", "a tool of the kind orch-review offers"),
        ("messages.1.role: Input should be 'user' or 'assistant'", "system turns inside"),
        ("System message must be at the beginning.", "system turns inside"),
        ("tool_choice: unknown variant", "a forced `tool_choice`"),
        ("output_config: Extra inputs are not permitted", "`output_config.effort`"),
        ("the request exceeds the available context size", "a context window"),
        ("something else", "a part of the request"),
    ],
)
def test_a_refusal_is_told_by_the_feature_it_names(words: str, feature: str) -> None:
    assert capabilities.feature_named(words).startswith(feature)


def test_anthropic_and_the_clouds_are_known_without_asking() -> None:
    env = {"HOME": "/nonexistent"}
    assert capabilities.endpoint_for("anthropic", None, env).known("m") == FULL
    assert capabilities.endpoint_for("bedrock", "http://127.0.0.1:9", env).known("m") == FULL
    anthropic = capabilities.endpoint_for("anthropic", "https://api.anthropic.com/", env)
    assert anthropic.known("m") == FULL
    assert capabilities.endpoint_for("anthropic", "http://127.0.0.1:9", env).known("m") is None


def test_what_a_server_accepts_is_kept_per_base_url_and_model(tmp_path: Path) -> None:
    env = {"ORCH_REVIEW_CACHE_DIR": str(tmp_path)}
    url = "http://user:secret@127.0.0.1:11434/?key=x"
    first = capabilities.endpoint_for("anthropic", url, env)
    first.learnt("qwen3-coder", OPEN_SERVER)

    again = capabilities.endpoint_for("anthropic", url, env)
    assert again.known("qwen3-coder") == OPEN_SERVER
    assert again.known("other-model") is None
    assert (
        capabilities.endpoint_for("anthropic", "http://127.0.0.1:8000", env).known("qwen3-coder")
        is None
    )
    stored = (tmp_path / capabilities.CACHE_FILE).read_text()
    assert "secret" not in stored and "key=x" not in stored


def test_a_cache_that_is_not_ours_is_ignored(tmp_path: Path) -> None:
    (tmp_path / capabilities.CACHE_FILE).write_text('{"version": 1, "servers": {"x": 1}}')
    endpoint = capabilities.endpoint_for(
        "anthropic", "http://127.0.0.1:1", {"ORCH_REVIEW_CACHE_DIR": str(tmp_path)}
    )
    assert endpoint.known("m") is None
    assert Capabilities.from_json({"server_tools": "yes"}) is None
