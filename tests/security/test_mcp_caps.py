"""The MCP caller raising the cap: the configuration says ``max-cost-usd = 0.001`` and the
calling agent, steered by the change it is asked about, sends ``max_cost_usd: 1000``. A
caller may lower a configured cap, never raise it. Through the real ``mcp`` client and
``orch-review mcp`` as a subprocess, against the fake Messages API."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo
from tests.mcp_server.test_mcp_server import _drive, _structured
from tests.scripted import planted_script

pytestmark = pytest.mark.slow


def test_a_caller_may_lower_the_configured_caps_never_raise_them(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    (repo / ".orch-review.toml").write_text("max-cost-usd = 0.001\nmax-agents = 50\n")
    fake_api.policy = planted_script()

    async def session(client: Client) -> tuple[Any, Any]:
        raised = await client.call_tool(
            "review", {"all_files": True, "max_cost_usd": 1000, "max_agents": 3}
        )
        return raised, None

    raised, _ = _drive(repo, api_env, session)
    result = _structured(raised)

    # The configured cost cap held against the caller's 1000; its lower agent cap applied.
    assert result["caps"]["max_cost_usd"] == 0.001
    assert result["caps"]["max_agents"] == 3
    assert result["complete"] is False
    assert len(fake_api.message_requests) <= 3
