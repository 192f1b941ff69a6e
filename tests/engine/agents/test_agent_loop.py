"""One agent's loop against the fake Messages API: pause_turn, truncation, turn limits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from orch_review.engine.agents.agent_loop import EMPTY_REPLY_NOTE, AgentLoop, Terminal
from orch_review.engine.agents.prompts import TRUNCATION_NOTE
from orch_review.engine.agents.tools import REPORT_FINDINGS_TOOL, ToolInputError
from orch_review.engine.api.budget import Budget, Caps
from orch_review.engine.api.client import ModelClient
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply


def _client(api: FakeMessagesAPI) -> ModelClient:
    # Retries on, without waiting: a reply wrongly taken for a fault would be resent.
    return ModelClient(
        {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "k"},
        max_retries=3,
        request_timeout=120,  # an upper bound: no request here hangs
        max_output_tokens=1000,
        effort="high",
        backoff=(0.0, 0.0),
    )


def _parse(tool_input: Mapping[str, Any]) -> str:
    summary = tool_input.get("summary")
    if not isinstance(summary, str):
        raise ToolInputError("`summary` must be a string")
    return summary


LOOKUP_TOOL = {"name": "lookup", "description": "Look something up.", "input_schema": {}}


def _loop(api: FakeMessagesAPI, max_turns: int = 5) -> AgentLoop[str]:
    return AgentLoop(
        client=_client(api),
        budget=Budget(Caps(), cost=lambda *a: (0.0, True)),
        role="subagent",
        model="claude-test",
        system="system",
        tools=[LOOKUP_TOOL, REPORT_FINDINGS_TOOL],
        max_turns=max_turns,
        bash=None,
        handlers={"lookup": lambda tool_input: ("the answer is 42", False)},
        terminal=Terminal("report_findings", _parse, "turn limit: report now"),
    )


def _bodies(api: FakeMessagesAPI) -> list[str]:
    return [json.dumps(r.body, sort_keys=True) for r in api.message_requests]


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


@pytest.mark.parametrize("empty", [Reply.empty(), Reply.empty("max_tokens"), Reply.text("  ")])
def test_an_empty_reply_is_left_out_and_the_model_told(
    fake_api: FakeMessagesAPI, empty: Reply
) -> None:
    replies = iter([Reply.tool_use("lookup", {}), empty, _report()])
    fake_api.policy = lambda request: next(replies)

    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result == "done"  # the fake rejects an empty assistant turn with a 400
    third = fake_api.message_requests[2].model_request()
    assert [m["role"] for m in third.messages] == ["user", "assistant", "user"]
    assert EMPTY_REPLY_NOTE in third.last_user_text


def test_a_tool_call_cut_off_at_the_output_limit_is_asked_again_not_resent(
    fake_api: FakeMessagesAPI,
) -> None:
    def policy(request: ModelRequest) -> Reply:
        if request.assistant_turns == 0 and "cut off" not in request.last_user_text:
            return Reply.cut_off("lookup", {"query": "x" * 200}, text="Looking it up.")
        if request.assistant_turns <= 1:
            return Reply.tool_use("lookup", {"query": "x"})
        return _report()

    fake_api.policy = policy
    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result == "done"
    bodies = _bodies(fake_api)
    assert len(bodies) == 3 and len(set(bodies)) == 3  # nothing resent byte for byte
    second = fake_api.message_requests[1].model_request()
    assert second.messages[1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Looking it up."}],  # the cut-off call is dropped
    }
    assert "Your call to `lookup` was cut off at the output token limit" in second.last_user_text
    assert "Send it again, smaller" in second.last_user_text


def test_a_second_cut_off_call_ends_the_agent_as_failed(fake_api: FakeMessagesAPI) -> None:
    fake_api.policy = lambda request: Reply.cut_off("report_findings", {"summary": "x" * 99})

    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result is None
    assert run.note == "its tool calls were cut off at the output token limit twice"
    assert len(set(_bodies(fake_api))) == 2


def test_a_refused_turn_is_removed_and_the_restart_pays_only_from_it(
    fake_api: FakeMessagesAPI,
) -> None:
    def policy(request: ModelRequest) -> Reply:
        if len(fake_api.message_requests) == 2:
            return Reply.refusal()
        return Reply.tool_use("lookup", {}) if request.assistant_turns == 0 else _report()

    fake_api.policy = policy
    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result == "done"
    # The restart starts from the task again, but the turn before the refused one is
    # answered as it was the first time: only the refused request is asked again.
    first, refused, asked_again = fake_api.message_requests
    assert refused.model_request().assistant_turns == 1
    assert asked_again.body == refused.body  # the refusal is not in the conversation
    assert first.body["messages"] != refused.body["messages"]


@pytest.mark.parametrize("refusal", [Reply.refusal(), Reply.refusal("I can't help with")])
def test_a_second_refusal_fails_the_agent(fake_api: FakeMessagesAPI, refusal: Reply) -> None:
    fake_api.policy = lambda request: refusal

    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result is None
    assert "refused" in run.note
    assert len(fake_api.message_requests) == 2


def test_a_report_sent_with_other_calls_waits_for_their_results(
    fake_api: FakeMessagesAPI,
) -> None:
    def policy(request: ModelRequest) -> Reply:
        if request.assistant_turns == 0:
            return Reply.tool_uses(
                [("lookup", {}), ("report_findings", {"summary": "blind", "findings": []})]
            )
        return _report("read the results")

    fake_api.policy = policy
    run = _loop(fake_api).run([{"role": "user", "content": "task"}])

    assert run.result == "read the results"
    (_, looked_up, lookup_error), (_, text, is_error) = (
        fake_api.message_requests[1].model_request().tool_results()
    )
    assert looked_up == "the answer is 42" and not lookup_error
    assert is_error and "report_findings was not recorded" in text
    assert "same turn as other tool calls" in text


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
