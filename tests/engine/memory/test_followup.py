"""Follow-up questions: the review's conversation continues with the mode switched off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orch_review.engine.agents.prompts import MODE_ENTER, MODE_EXIT
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script


def _without_cache_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_markers(v) for v in value]
    return value


def _system_texts(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def _reviewed(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, answer: str
) -> Path:
    """The planted repository after a review; the model then answers ``answer``."""
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    run_cli(repo, api_env, "--all")
    fake_api.reset()
    fake_api.policy = planted_script(summary=answer)
    return repo


def test_ask_continues_the_review_solo_with_one_exit_notice(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script(summary="The injection in app.py is the real problem.")
    run_cli(repo, api_env, "--all")
    last_review_request = fake_api.requests_for("main")[-1].body
    fake_api.reset()
    fake_api.policy = planted_script(summary="Because the name goes into the SQL text.")

    first = run_cli(repo, api_env, "ask", "why is finding 1 a problem?")

    assert first.returncode == 0, first.stderr
    assert "Because the name goes into the SQL text." in first.stdout
    (request,) = fake_api.message_requests  # answered solo: no Workflow, no subagents
    messages = request.body["messages"]
    previous = _without_cache_markers(last_review_request["messages"])
    assert _without_cache_markers(messages[: len(previous)]) == previous  # the cached prefix
    assert messages[len(previous)]["role"] == "assistant"
    assert messages[-2] == {"role": "user", "content": "why is finding 1 a problem?"}
    assert messages[-1]["role"] == "system" and _system_texts(messages[-1]) == MODE_EXIT
    assert request.body["system"] == last_review_request["system"]
    assert request.body["tools"] == last_review_request["tools"]

    fake_api.reset()
    fake_api.policy = planted_script(summary="Use parameters.")
    second = run_cli(repo, api_env, "ask", "how do I fix it?")

    assert second.returncode == 0 and "Use parameters." in second.stdout
    notices = [m for m in fake_api.message_requests[0].body["messages"] if m["role"] == "system"]
    assert [_system_texts(m) for m in notices] == [MODE_ENTER, MODE_EXIT]  # exit sent once


def test_ask_with_orchestrate_sends_the_mode_text_again(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    run_cli(repo, api_env, "--all")
    run_cli(repo, api_env, "ask", "a light question")  # the mode is switched off
    fake_api.reset()
    fake_api.policy = planted_script(summary="Checked again.")

    result = run_cli(repo, api_env, "ask", "--orchestrate", "re-check everything")

    assert result.returncode == 0, result.stderr
    messages = fake_api.message_requests[0].body["messages"]
    assert messages[-1]["role"] == "system" and _system_texts(messages[-1]) == MODE_ENTER
    notices = [_system_texts(m) for m in messages if m["role"] == "system"]
    assert notices == [MODE_ENTER, MODE_EXIT, MODE_ENTER]


def test_ask_without_a_review_says_what_to_do(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    result = run_cli(repo, api_env, "ask", "anything?")
    assert result.returncode == 2
    assert "there is no review to ask about" in result.stderr and "Traceback" not in result.stderr


def test_chat_switches_the_mode_with_slash_commands(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = _reviewed(fake_api, api_env, git_repo, answer="Answer.")

    result = run_cli(
        repo, api_env, "chat", input="first question\n/bogus\n/mode on\nsecond question\n/quit\n"
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.count("Answer.") == 2
    assert "unknown command /bogus" in result.stdout
    first, second = fake_api.message_requests  # /bogus was not sent to the model
    assert _system_texts(first.body["messages"][-1]) == MODE_EXIT
    assert _system_texts(second.body["messages"][-1]) == MODE_ENTER


def test_an_answer_reaches_the_terminal_sanitized(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = _reviewed(
        fake_api, api_env, git_repo, answer="\x1b]52;c;ZXZpbA==\x07Fine.\n::error::forged"
    )

    result = run_cli(repo, api_env, "ask", "is it fine?")

    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "Fine." in result.stdout
    assert not any(line.startswith("::") for line in result.stdout.splitlines())
