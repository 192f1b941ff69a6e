"""`--sandbox tools` through the real CLI: agents get no shell, only the read-only tools, and
the review finds and covers exactly what it does with a shell."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.files_model import OneSubtaskPerFile
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import PLANTED_FILES, PLANTED_INJECTION, ReviewScript, planted_script

pytestmark = pytest.mark.slow

READ_TOOLS = {"read_file", "search", "list_files", "git_log", "git_show", "git_blame", "git_diff"}


def _review(
    fake_api: FakeMessagesAPI, env: dict[str, str], repo: Path, out: Path, *args: str
) -> tuple[int, dict[str, Any]]:
    fake_api.reset()
    fake_api.policy = planted_script()
    result = run_cli(repo, env, "--all", "--no-critic", "--json", str(out), *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(out.read_text())


def _around(word: str, text: str) -> list[str]:
    """Where ``text`` says ``word``, with some context."""
    return [m.group(0) for m in re.finditer(f".{{0,80}}{word}.{{0,40}}", text, re.I)]


def _promise(data: dict[str, Any]) -> dict[str, Any]:
    """What a report promises, whatever the agents looked with."""
    return {
        "findings": sorted(
            (f["path"], f["start_line"], f["status"], f["severity"], f["claim"])
            for f in data["findings"]
        ),
        "coverage": data["coverage"],
        "concerns": sorted(c["concern"] for c in data["concerns"]),
    }


def test_the_planted_review_without_a_shell_finds_and_covers_what_it_does_with_one(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    # Every agent has to look: no file is shown in its task.
    env = {**api_env, "ORCH_REVIEW_INLINE_FILE_BYTES": "0", "ORCH_REVIEW_JOURNAL": "false"}

    shell_exit, with_shell = _review(
        fake_api, env, repo, tmp_path / "shell.json", "--sandbox", "off"
    )
    shell_tools = {name for r in fake_api.message_requests for name in r.model_request().tool_names}
    tools_exit, without = _review(
        fake_api, env, repo, tmp_path / "tools.json", "--sandbox", "tools"
    )

    assert (shell_exit, tools_exit) == (1, 1)
    assert "bash" in shell_tools
    assert _promise(without) == _promise(with_shell)
    assert [
        (f["path"], f["start_line"]) for f in without["findings"] if f["status"] == "confirmed"
    ] == [("app.py", 6)]
    assert without["coverage"]["changed_files"]["complete"] is True
    requests = [r.model_request() for r in fake_api.message_requests]
    assert requests and all("bash" not in r.tool_names for r in requests)
    assert all(r.tool_names >= READ_TOOLS for r in requests)
    # Nothing tells the model to use bash: not a prompt, a task, a mode message, a tool.
    mentions = [
        text for r in fake_api.message_requests for text in _around("bash", json.dumps(r.body))
    ]
    assert mentions == []
    # The tools really ran: a subagent's search found the injection, a verifier read it.
    results = "\n".join(text for r in requests for text in r.tool_result_texts())
    assert "app.py:6:    cursor.execute(f" in results
    assert "     6\t    cursor.execute(f" in results


def test_the_environment_variable_selects_tools_and_the_journal_keeps_the_modes_apart(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    env = {**api_env, "ORCH_REVIEW_INLINE_FILE_BYTES": "0"}

    assert _review(fake_api, env, repo, tmp_path / "a.json", "--sandbox", "off")[0] == 1
    # The same review without a shell: nothing stored with bash answers it.
    tools_env = {**env, "ORCH_REVIEW_SANDBOX": "tools"}
    assert _review(fake_api, tools_env, repo, tmp_path / "b.json")[0] == 1
    requests = [r.model_request() for r in fake_api.message_requests]
    assert {r.role for r in requests} >= {"main", "subagent", "verifier"}
    assert all("search" in r.tool_names for r in requests)
    # Run again in the same mode: all of it comes from the journal.
    assert _review(fake_api, tools_env, repo, tmp_path / "c.json")[0] == 1
    assert fake_api.message_requests == []


def test_a_change_is_scouted_with_git_diff_and_every_file_covered_without_a_shell(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    from tests.conftest import git, write

    repo = git_repo(PLANTED_FILES)
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "change")
    write(repo, {"lib/one.py": "x = 1  # BUG\n", "lib/two.py": "y = 2\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    fake_api.policy = OneSubtaskPerFile(base)
    out = tmp_path / "r.json"

    result = run_cli(repo, api_env, "--base", base, "--sandbox", "tools", "--json", str(out))

    assert result.returncode == 1, result.stderr
    data = json.loads(out.read_text())
    assert [(f["path"], f["start_line"]) for f in data["findings"]] == [("lib/one.py", 1)]
    assert data["coverage"]["changed_files"]["complete"] is True
    assert sorted(f["path"] for f in data["coverage"]["files"]) == ["lib/one.py", "lib/two.py"]


def test_a_follow_up_question_reads_with_the_tools_the_review_had(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    env = {**api_env, "ORCH_REVIEW_SANDBOX": "tools"}
    fake_api.policy = planted_script()
    assert run_cli(repo, env, "--all").returncode == 1
    review_tools = fake_api.requests_for("main")[-1].body["tools"]
    fake_api.reset()

    question = "what does ratio do with a zero count?"

    def policy(request: ModelRequest) -> Reply:
        last = [m for m in request.messages if m["role"] != "system"][-1]
        if last["content"] == question:
            return Reply.tool_use("read_file", {"path": "calc.py", "start_line": 2})
        return Reply.text("It returns 0.0 when count is zero.")

    fake_api.policy = policy
    result = run_cli(repo, env, "ask", question)

    assert result.returncode == 0, result.stderr
    assert "It returns 0.0 when count is zero." in result.stdout
    first, second = fake_api.message_requests
    assert first.body["tools"] == review_tools  # the conversation's cached prefix holds
    assert second.model_request().tool_result_texts()[-1].startswith("     2\t    if count == 0:")


def test_suggested_fixes_stay_unverified_without_a_shell_and_nothing_crashes(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo({"app.py": PLANTED_FILES["app.py"]})
    injection = replace(PLANTED_INJECTION, replacement=lambda _: "    pass")
    fake_api.policy = ReviewScript([injection])
    env = {
        **api_env,
        "ORCH_REVIEW_SANDBOX": "tools",
        "ORCH_REVIEW_SUGGESTION_CHECK": "python3 -m py_compile {path}",
    }
    out = tmp_path / "r.json"

    result = run_cli(repo, env, "--all", "--fix", "--json", str(out), "--no-progress")

    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    data = json.loads(out.read_text())
    assert any(w.startswith("suggestion-check did not run") for w in data["warnings"])
    assert (repo / "app.py").read_text() == PLANTED_FILES["app.py"]  # nothing verified to apply


def test_the_critic_looks_with_the_read_only_tools_too(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    script = planted_script()
    injection, division = script.concerns
    script.subtasks = [division.subtask]  # the first wave misses the injection
    script.critic_concerns = [injection.subtask]
    fake_api.policy = script
    env = {**api_env, "ORCH_REVIEW_CRITIC": "true", "ORCH_REVIEW_SANDBOX": "tools"}

    result = run_cli(repo, env, "--all")

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    critic = [
        r.model_request()
        for r in fake_api.message_requests
        if r.model_request().has_tool("report_concerns")
    ]
    assert len(critic) == 2 and critic[0].tool_names == READ_TOOLS | {"report_concerns"}
    assert "app.py (" in critic[1].tool_result_texts()[0]  # its list_files ran


def test_a_cap_stops_the_review_the_same_way_without_a_shell(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    env = {**api_env, "ORCH_REVIEW_JOURNAL": "false", "ORCH_REVIEW_MAX_CONCURRENT": "1"}

    shell = _review(
        fake_api, env, repo, tmp_path / "a.json", "--sandbox", "off", "--max-agents", "2"
    )
    tools = _review(
        fake_api, env, repo, tmp_path / "b.json", "--sandbox", "tools", "--max-agents", "2"
    )

    assert shell[0] == tools[0] == 3  # incomplete, in both: never a green exit
    assert _promise(tools[1]) == _promise(shell[1])
    assert tools[1]["coverage"]["changed_files"]["complete"] is False


def test_a_question_with_a_shell_about_a_review_without_one_keeps_the_tools_it_called(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    assert run_cli(repo, {**api_env, "ORCH_REVIEW_SANDBOX": "tools"}, "--all").returncode == 1
    fake_api.reset()
    question = "and calc.py?"

    def policy(request: ModelRequest) -> Reply:
        last = [m for m in request.messages if m["role"] != "system"][-1]
        if last["content"] == question:
            return Reply.tool_uses([("list_files", {}), ("bash", {"command": "sed -n 2p calc.py"})])
        return Reply.text("It guards the zero.")

    fake_api.policy = policy
    result = run_cli(repo, {**api_env, "ORCH_REVIEW_SANDBOX": "off"}, "ask", question)

    assert result.returncode == 0, result.stderr
    first, second = fake_api.message_requests
    # The conversation called list_files: it stays declared (and is refused), bash is added.
    assert {"bash", "list_files"} <= first.model_request().tool_names
    refused, ran = second.model_request().tool_results()[-2:]
    assert refused[2] and "use bash instead" in refused[1]
    assert not ran[2] and "if count == 0:" in ran[1]
