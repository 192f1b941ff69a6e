"""The MCP server's review hands the agent the proof, test included."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import skip_without_bubblewrap
from tests.mcp_server.test_mcp_server import _drive, _structured
from tests.proofs.fixture import DISCOUNT_TEST, shop_repo, shop_script

pytestmark = pytest.mark.slow


def test_the_agent_gets_the_proof_and_its_test(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    fake_api.policy = shop_script()

    async def session(client: Client) -> Any:
        return await client.call_tool("review", {})

    result = _structured(_drive(repo, {**api_env, "ORCH_REVIEW_PROVE": "high"}, session))

    proofs = {f["start_line"]: f["proof"] for f in result["findings"]}
    assert proofs[2]["status"] == "proven"
    assert proofs[2]["test_code"] == DISCOUNT_TEST.code
    assert proofs[2]["test_path"] == DISCOUNT_TEST.path
    assert proofs[6]["status"] == "not-proven"
