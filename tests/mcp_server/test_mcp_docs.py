"""docs/mcp.md says what the tools take: every argument of each tool's input schema, and no
other, is named in its row of the table, the required ones said to be required."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio

from orch_review.mcp_server.server import build_server
from orch_review.mcp_server.service import ReviewService

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def _schemas(repo: Path) -> dict[str, dict[str, Any]]:
    server = build_server(repo, ReviewService(repo, {}))

    async def tools() -> dict[str, dict[str, Any]]:
        return {tool.name: tool.input_schema for tool in await server.list_tools()}

    return anyio.run(tools)


def _rows() -> dict[str, str]:
    rows = re.findall(r"^\| `(\w+)` \| (.*?) \| .*? \|$", PAGE.read_text(), re.MULTILINE)
    return dict(rows)


def test_the_docs_name_each_tools_arguments(tmp_path: Path) -> None:
    rows = _rows()
    for name, schema in _schemas(tmp_path).items():
        named = set(re.findall(r"`(\w+)`", rows[name]))
        arguments = set(schema["properties"])
        assert arguments <= named, f"{name}: the docs do not name {arguments - named}"
        # Backticked words that are not arguments would be read as arguments.
        assert named <= arguments | {"id", "review", "plan"}, f"{name}: {named - arguments}"
        required = set(schema.get("required", ()))
        assert ("required" in rows[name]) == bool(required), name


def test_the_docs_show_how_the_key_reaches_the_server() -> None:
    text = PAGE.read_text()
    assert 'claude mcp add -e ANTHROPIC_API_KEY="$ANTHROPIC_API_KEY"' in text
    assert '"env": {"ANTHROPIC_API_KEY":' in text
