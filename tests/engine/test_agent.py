"""One agent's loop against the fake Messages API: pause_turn, truncation, turn limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from orch_review.engine.agent import AgentLoop, Terminal
from orch_review.engine.budget import Caps, Ledger
from orch_review.engine.client import ModelClient
from orch_review.engine.prompts import TRUNCATION_NOTE
from orch_review.engine.tools import REPORT_FINDINGS_TOOL, ToolInputError
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply


def _client(api: FakeMessagesAPI) -> ModelClient:
    return ModelClient(
        {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "k"},
        max_retries=0,
        request_timeout=10,
        max_output_tokens=1000,
        effort="high",
    )


def _parse(tool_input: Mapping[str, Any]) -> str:
    summary = tool_input.get("summary")
    if not isinstance(summary, str):
        raise ToolInputError("`summary` must be a string")
    return summary


def _loop(api: FakeMessagesAPI, max_turns: int = 5) -> AgentLoop[str]:
    return AgentLoop(
        client=_client(api),
        ledger=Ledger(Caps(), cost=lambda *a: (0.0, True)),
        role="subagent",
        model="claude-test",
        system="system",
        tools=[REPORT_FINDINGS_TOOL],
        max_turns=max_turns,
        bash=None,
        terminal=Terminal("report_findings", _parse, "turn limit: report now"),
    )


def _report(text: str = "done") -> Reply:
    return Reply.tool_use("report_findings", {"summary": text, "findings": []})


def test_pause_turn_continues_without_a_user_message(fake_api: FakeMessagesAPI) -> None:
    def policy(request: ModelRequest) -> Reply:
        if request.assistant_turns == 0:
            return Reply([{"type": "text", "text": "thinking..."}], stop_reason="pause_turn")
        return _report()

    fake_api.policy = policy
    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result == "done"
    second = fake_api.message_requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant"]


def test_max_tokens_adds_a_truncation_warning(fake_api: FakeMessagesAPI) -> None:
    def policy(request: ModelRequest) -> Reply:
        if request.assistant_turns == 0:
            return Reply([{"type": "text", "text": "a long answ"}], stop_reason="max_tokens")
        return _report()

    fake_api.policy = policy
    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result == "done"
    assert fake_api.message_requests[1].model_request().last_user_text == TRUNCATION_NOTE


def test_ending_without_the_report_gets_one_reminder(fake_api: FakeMessagesAPI) -> None:
    def policy(request: ModelRequest) -> Reply:
        return Reply.text("I am done.") if request.assistant_turns == 0 else _report()

    fake_api.policy = policy
    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result == "done"
    assert (
        "You have not called report_findings"
        in fake_api.message_requests[1].model_request().last_user_text
    )


def test_invalid_report_is_sent_back_as_a_tool_error(fake_api: FakeMessagesAPI) -> None:
    def policy(request: ModelRequest) -> Reply:
        if request.assistant_turns == 0:
            return Reply.tool_use("report_findings", {"summary": 3, "findings": []})
        return _report("fixed")

    fake_api.policy = policy
    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result == "fixed"
    ((_, text, is_error),) = fake_api.message_requests[1].model_request().tool_results()
    assert is_error and "`summary` must be a string" in text


@pytest.mark.parametrize("max_turns", [1, 3])
def test_last_turn_forces_the_report_with_a_note(fake_api: FakeMessagesAPI, max_turns: int) -> None:
    def policy(request: ModelRequest) -> Reply:
        if request.body.get("tool_choice", {}).get("name") == "report_findings":
            return _report("forced")
        return Reply.text("still looking")

    fake_api.policy = policy
    run = _loop(fake_api, max_turns).run([{"role": "user", "content": "task"}])

    assert run.result == "forced"
    last = fake_api.message_requests[-1]
    assert len(fake_api.message_requests) == max_turns
    assert "turn limit: report now" in last.model_request().last_user_text


def test_turn_limit_without_report_returns_a_clear_note(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda request: Reply.text("no")
    run = _loop(fake_api, 2).run([{"role": "user", "content": "task"}])

    assert run.result is None
    assert run.note == "stopped at the turn limit (2 turns)"


def test_no_report_after_one_reminder_forces_it_then_ends_as_failed(
    fake_api: FakeMessagesAPI,
) -> None:
    fake_api.policy = lambda request: Reply.text("nothing to report")

    run = _loop(fake_api, max_turns=15).run([{"role": "user", "content": "task"}])

    assert run.result is None
    requests = [r.model_request() for r in fake_api.message_requests]
    assert len(requests) == 3  # the answer, one reminder, one forced turn: never 15
    assert "You have not called report_findings" in requests[1].last_user_text
    assert [r.body.get("tool_choice") for r in requests] == [
        None,
        None,
        {"type": "tool", "name": "report_findings"},
    ]
    assert "call report_findings now" in requests[2].last_user_text
    assert run.note.startswith("ended without calling report_findings after a reminder")


def test_the_forced_turn_records_the_report(fake_api: FakeMessagesAPI) -> None:
    def policy(request: ModelRequest) -> Reply:
        if request.body.get("tool_choice"):
            return _report("forced")
        return Reply.text("done, I think")

    fake_api.policy = policy
    run = _loop(fake_api, max_turns=15).run([{"role": "user", "content": "task"}])

    assert run.result == "forced" and len(fake_api.message_requests) == 3
