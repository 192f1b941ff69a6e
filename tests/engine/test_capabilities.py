"""Reviews against servers that are not Anthropic's API: Ollama, vLLM, llama.cpp, LiteLLM.

The fake Messages API behaves as each server does (tests/fakes/compat_servers.py): what it
refuses, what it converts before the model sees it, what it leaves out of its answers.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes import compat_servers
from tests.fakes.compat_servers import CompatServer
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, RecordedRequest, Reply
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script

pytestmark = pytest.mark.slow

Policy = Callable[[ModelRequest], Reply]


def answering_probes(policy: Policy) -> Policy:
    """``policy``, with a short answer to a request that offers no tools (a probe)."""

    def answer(request: ModelRequest) -> Reply:
        return Reply.text("OK") if not request.tools else policy(request)

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
    # Said first: what is adapted for this server.
    assert "is not Anthropic's API" in result.stderr
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
    assert [r for r in fake_api.message_requests if not r.body.get("tools")] == []  # no probe
