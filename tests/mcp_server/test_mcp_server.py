"""`orch-review mcp` as a coding agent runs it: a subprocess driven by the `mcp` SDK's own
stdio client, against the fake Messages API and real git repositories."""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from orch_review.engine.agents.prompts import MODE_EXIT
from tests.cli.test_cli_fix import SAFE_QUERY
from tests.cli.test_cli_resume import _division_verifier, _journal_kinds
from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import cli_launcher, make_planted_repo
from tests.scripted import PLANTED_FILES, Concern, ReviewScript, planted_script

pytestmark = pytest.mark.slow

T = TypeVar("T")


def _server(repo: Path, env: dict[str, str]) -> Client:
    launcher = cli_launcher(repo.parent / "launcher", env)
    params = StdioServerParameters(command=str(launcher), args=["mcp"], env=env, cwd=str(repo))
    return Client(params, mode="legacy", read_timeout_seconds=120)


def _drive(repo: Path, env: dict[str, str], session: Callable[[Client], Awaitable[T]]) -> T:
    async def main() -> T:
        async with _server(repo, env) as client:
            return await session(client)

    return anyio.run(main)


def _structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    data: dict[str, Any] = result.structured_content.get("result", result.structured_content)
    return data


def test_the_tools_are_listed_with_typed_inputs(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"app.py": "print(1)\n"})

    async def session(client: Client) -> Any:
        return await client.list_tools()

    tools = {tool.name: tool for tool in _drive(repo, api_env, session).tools}

    assert set(tools) == {"plan", "review", "explain_finding", "apply_fix"}
    review = tools["review"].input_schema["properties"]
    assert {"staged", "base", "all_files", "paths", "max_cost_usd", "max_agents"} <= set(review)
    assert tools["apply_fix"].input_schema["required"] == ["finding"]


def test_plan_lists_the_files_and_costs_nothing(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"app.py": "print(1)\n", "logo.png": b"\x89PNG\x00\x00"})

    async def session(client: Client) -> Any:
        return await client.call_tool("plan", {"all_files": True})

    plan = _structured(_drive(repo, api_env, session))

    assert [f["path"] for f in plan["files"]] == ["app.py"]
    assert [s["path"] for s in plan["skipped"]] == ["logo.png"]
    assert 0 < plan["cost"]["low_usd"] < plan["cost"]["high_usd"]  # estimated, not spent
    assert fake_api.requests == []


def test_a_review_returns_the_planted_findings_with_coverage_and_progress(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def session(client: Client) -> Any:
        return await client.call_tool("review", {"all_files": True}, progress_callback=on_progress)

    result = _structured(_drive(repo, api_env, session))

    assert result["complete"] is True and result["exit_code"] == 1
    assert result["coverage"] == f"{len(PLANTED_FILES)} of {len(PLANTED_FILES)} files covered"
    # The injection survived its verifier; the refuted division finding is not returned.
    assert [(f["path"], f["severity"]) for f in result["findings"]] == [("app.py", "high")]
    for finding in result["findings"]:
        assert finding["id"] and finding["claim"] and finding["evidence"]
        assert finding["verdict"]["confirmed"] is True
    assert result["cost_usd"] > 0
    assert progress, "no progress notification arrived"
    assert progress[-1][0] == progress[-1][1]  # every agent started has finished
    assert "agents done" in (progress[-1][2] or "")


def test_a_cancelled_review_stops_and_the_next_one_pays_only_for_what_did_not_finish(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    hang = fake_api.add_fault("hang", delay=120, match=_division_verifier)

    async def session(client: Client) -> tuple[bool, Any]:
        cancelled = False
        with anyio.move_on_after(90) as scope:  # an upper bound, not a timing assertion
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await client.call_tool("review", {"all_files": True})

                group.start_soon(call)
                while not (hang.hits == 1 and _journal_kinds(repo).get("verifier") == 1):
                    await anyio.sleep(0.05)
                group.cancel_scope.cancel()  # the client sends notifications/cancelled
                cancelled = True
        assert not scope.cancelled_caught, "the cancelled review did not stop"
        # The server is still serving after the cancellation.
        tools = await client.list_tools()
        return cancelled, tools

    # The hung reply never lands: a short wait for replies in flight after the cancel.
    cancelled, tools = _drive(repo, {**api_env, "ORCH_REVIEW_INTERRUPT_GRACE": "0.5"}, session)
    assert cancelled and len(tools.tools) == 4
    kinds = _journal_kinds(repo)
    assert kinds.get("subagent") == 2 and kinds.get("verifier") == 1

    fake_api.reset()
    fake_api.policy = planted_script()

    async def resume(client: Client) -> Any:
        return await client.call_tool("review", {"all_files": True})

    result = _structured(_drive(repo, api_env, resume))

    assert result["complete"] is True
    # The two concerns and the finished verifier are not paid again.
    verifiers = fake_api.requests_for("verifier")
    assert verifiers and all(_division_verifier(r.model_request()) for r in verifiers)
    assert all(
        "Sweep" in r.model_request().first_user_text for r in fake_api.requests_for("subagent")
    )


def _fix_script() -> ReviewScript:
    return ReviewScript(
        [
            Concern(
                "injection",
                "Check app.py for SQL injection.",
                "grep -n 'execute(f' app.py",
                path="app.py",
                category="security",
                claim="The query interpolates `name`.",
                replacement=lambda _: SAFE_QUERY,
                span=2,
            )
        ]
    )


def test_explain_finding_is_answered_with_the_mode_off_and_apply_fix_writes_the_patch(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"app.py": PLANTED_FILES["app.py"]})
    fake_api.policy = _fix_script()
    env = {**api_env, "ORCH_REVIEW_SUGGESTION_CHECK": "python3 -m py_compile {path}"}

    async def session(client: Client) -> tuple[Any, int, Any, Any]:
        review = _structured(await client.call_tool("review", {"all_files": True}))
        (finding,) = review["findings"]
        assert finding["patch"]["verified"] is True, finding
        before = len(fake_api.message_requests)
        explained = await client.call_tool(
            "explain_finding", {"finding": finding["id"], "question": "why is this a problem?"}
        )
        asked = len(fake_api.message_requests) - before
        fixed = await client.call_tool("apply_fix", {"finding": finding["id"]})
        report = await client.read_resource("orch-review://report/last")
        return explained, asked, fixed, report

    explained, asked, fixed, report = _drive(repo, env, session)

    answer = _structured(explained)
    assert answer["answer"]
    # A question costs a question: the review's conversation continues, the mode off.
    assert asked == 1
    (followup,) = fake_api.message_requests[-1:]
    assert followup.model_request().role == "main"
    notice = followup.body["messages"][-1]
    assert notice["role"] == "system" and MODE_EXIT in str(notice["content"])
    assert _structured(fixed)["applied"] is True
    assert SAFE_QUERY in (repo / "app.py").read_text()
    assert git(repo, "show", "HEAD:app.py") == PLANTED_FILES["app.py"]  # never committed
    assert '"schema_version"' in report.contents[0].text


def test_bad_arguments_are_tool_errors_and_apply_fix_stays_in_the_repository(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    # MCP 2025-11-25: input validation errors are tool results with isError, which the
    # calling model reads and can fix; protocol errors are for protocol faults.
    repo = git_repo({"app.py": PLANTED_FILES["app.py"]})
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")

    async def session(client: Client) -> list[str]:
        said = []
        for name, arguments in (
            ("review", {"paths": ["../outside.py"]}),
            ("review", {"paths": [str(outside)]}),
            ("review", {"max_cost_usd": -1}),
            ("review", {"base": "--output=/tmp/x"}),
            ("apply_fix", {"finding": "no-review-yet"}),
            ("explain_finding", {"finding": "x", "question": "   "}),
            ("review", {"max_agents": "many"}),
        ):
            result = await client.call_tool(name, arguments)
            assert result.is_error, (name, arguments, result)
            said.append(result.content[0].text)
        return said

    said = _drive(repo, api_env, session)

    assert "leaves the repository" in said[0] and "leaves the repository" in said[1]
    assert "positive number" in said[2] and "git revision" in said[3]
    assert "call `review` first" in said[4]
    assert "question: ask something" in said[5]
    assert "max_agents" in said[6]
    assert all("Traceback" not in text for text in said)
    assert fake_api.requests == []
    assert outside.read_text() == "x = 1\n"


def test_progress_always_increases_and_re_review_counts_each_file_once(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"README.md": "# demo\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, PLANTED_FILES)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the planted files")
    fake_api.policy = planted_script()
    runs: list[list[tuple[float, float | None, str | None]]] = [[], []]

    async def session(client: Client) -> list[Any]:
        results = []
        for seen in runs:

            async def on_progress(
                done: float, total: float | None, message: str | None, seen: Any = seen
            ) -> None:
                seen.append((done, total, message))

            results.append(
                await client.call_tool("review", {"base": "main"}, progress_callback=on_progress)
            )
        return results

    first, again = (_structured(r) for r in _drive(repo, api_env, session))

    n = int(first["coverage"].split()[0])
    assert n >= 2 and first["coverage"] == f"{n} of {n} files covered"
    # The second review reuses every file from the journal: still n of n, not 2n of n.
    assert again["coverage"] == f"{n} of {n} files covered ({n} reused from an earlier review)"
    assert runs[0], "no progress notification arrived"
    for seen in runs:
        values = [done for done, _, _ in seen]
        # MCP: "The progress value MUST increase with each notification".
        assert values == sorted(set(values)), f"progress must strictly increase: {values}"
        for done, total, message in seen:
            assert total is not None and done <= total
            assert (message or "").startswith(f"{int(done)} of {int(total)} agents done")


def test_stdout_carries_only_protocol_messages(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    import json
    import subprocess

    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "review", "arguments": {"all_files": True}},
        },
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "orch_review", "mcp"],
        cwd=repo,
        env=api_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    for message in lines:
        proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    answers = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        answers.append(json.loads(line))  # every stdout line is a JSON-RPC message
        if answers[-1].get("id") == 2:
            break
    proc.stdin.close()
    proc.wait(timeout=60)
    assert all(a.get("jsonrpc") == "2.0" for a in answers)
    assert answers[-1]["id"] == 2 and not answers[-1]["result"].get("isError")


def test_without_the_sdk_the_command_says_what_to_install(
    api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    import subprocess

    repo = git_repo({"app.py": "print(1)\n"})
    blocker = tmp_path / "block"
    blocker.mkdir()
    write(blocker, {"mcp/__init__.py": "raise ImportError('no mcp here', name='mcp')\n"})
    env = {**api_env, "PYTHONPATH": str(blocker)}

    result = subprocess.run(
        [sys.executable, "-m", "orch_review", "mcp"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )

    assert result.returncode == 2, result.stderr
    assert "pip install 'orch-review[mcp] @ git+" in result.stderr
    assert "Traceback" not in result.stderr


def test_apply_fix_never_writes_outside_the_repository(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo({"app.py": PLANTED_FILES["app.py"]})
    fake_api.policy = _fix_script()
    env = {**api_env, "ORCH_REVIEW_SUGGESTION_CHECK": "python3 -m py_compile {path}"}
    outside = tmp_path / "outside.py"
    outside.write_text(PLANTED_FILES["app.py"])

    async def session(client: Client) -> Any:
        review = _structured(await client.call_tool("review", {"all_files": True}))
        (finding,) = review["findings"]
        # After the review, the file becomes a link out of the repository.
        (repo / "app.py").unlink()
        (repo / "app.py").symlink_to(outside)
        return await client.call_tool("apply_fix", {"finding": finding["id"]})

    refused = _drive(repo, env, session)

    assert refused.is_error
    assert "not applied" in refused.content[0].text
    assert outside.read_text() == PLANTED_FILES["app.py"]
