"""A model whose output carries lone surrogates (``\\ud800``: valid as a JSON escape, not
encodable as UTF-8) in every field it writes: the text around its tool calls, a bash command,
the subtasks, a finding's path, claim, evidence, suggestion and replacement, the summary of
its findings, a verdict's reason, evidence and fix reason, and the review's summary.
Contained means: the review finishes with its verified finding, and every output format is
written, holding no lone surrogate (U+FFFD stands where each was)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orch_review.errors import ExitCode
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.helpers import run_cli
from tests.scripted import PLANTED_FILES, ReviewScript, planted_script

pytestmark = pytest.mark.slow
LONE = "\ud800"
FORMATS = ("text", "json", "sarif", "github", "gitlab", "rdjson", "junit", "markdown")
REPLACEMENT_CHARACTER = "\ufffd"


def _spiked(value: Any, keys: frozenset[str]) -> Any:
    """``value`` with a lone surrogate added to the string under each of ``keys``."""
    if isinstance(value, dict):
        return {
            k: (v + LONE if k in keys and isinstance(v, str) else _spiked(v, keys))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_spiked(v, keys) for v in value]
    return value


FIELDS = frozenset(
    {
        "text",  # text blocks, the review's summary among them
        "summary",
        "claim",
        "evidence",
        "suggestion",
        "reason",
        "fix_reason",
    }
)


class SurrogateModel:
    """The planted-bug script, with lone surrogates wherever the model writes text. A
    finding's path gets one on the first report only (a path that names no file is refused
    back to the model, which then reports it right)."""

    def __init__(self, script: ReviewScript) -> None:
        self.script = script
        self.refused_paths: list[str] = []

    def __call__(self, request: ModelRequest) -> Reply:
        reply = self.script(request)
        blocks = []
        for block in reply.blocks:
            if block["type"] == "text":
                blocks.append({**block, "text": block["text"] + LONE})
                continue
            tool_input = _spiked(block["input"], FIELDS)
            if block["name"] == "bash":  # in a comment, so that the command still works
                tool_input["command"] += " # " + LONE
            if block["name"] == "Workflow":
                tool_input["subtasks"] = [s + LONE for s in tool_input["subtasks"]]
            if block["name"] == "report_findings":
                tool_input = self._findings(request, tool_input)
            blocks.append({**block, "input": tool_input})
        if reply.blocks and reply.blocks[-1]["type"] == "text" and request.role == "main":
            blocks[-1]["text"] = LONE + "Summary " + LONE + blocks[-1]["text"]
        return Reply(blocks, reply.stop_reason)

    def _findings(self, request: ModelRequest, tool_input: dict[str, Any]) -> dict[str, Any]:
        findings = tool_input["findings"]
        results = request.tool_results()
        if results and results[-1][2] and "not a file under review" in results[-1][1]:
            self.refused_paths.append(results[-1][1])
            return tool_input
        for finding in findings:
            if finding["path"] == "app.py":
                line = PLANTED_FILES["app.py"].splitlines()[finding["start_line"] - 1]
                finding["replacement"] = line.replace('f"', '"') + "  # " + LONE
        spiked = [{**f, "path": f["path"] + LONE} for f in findings[:1]]
        return {**tool_input, "findings": [*findings, *spiked]}


def test_lone_surrogates_in_every_model_field_never_crash_a_review(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo(PLANTED_FILES)
    model = SurrogateModel(planted_script())
    fake_api.policy = model
    report, sarif = tmp_path / "r.json", tmp_path / "r.sarif"

    first = run_cli(repo, api_env, "--all", "--json", str(report), "--sarif", str(sarif))

    assert first.returncode == ExitCode.FINDINGS, first.stderr
    assert "SQL query built with an f-string" in first.stdout
    assert REPLACEMENT_CHARACTER in first.stdout
    # The path with a surrogate named no file: the model was told, and reported it right.
    assert model.refused_paths
    data = json.loads(report.read_text(encoding="utf-8"))
    (finding,) = [f for f in data["findings"] if f["status"] == "confirmed"]
    assert finding["path"] == "app.py"
    assert REPLACEMENT_CHARACTER in finding["claim"] + finding["evidence"]
    assert json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    # Every format prints, from the same review (replayed from the journal).
    for output_format in FORMATS:
        result = run_cli(repo, api_env, "--all", "--format", output_format)
        assert result.returncode == ExitCode.FINDINGS, (output_format, result.stderr)
        assert result.stdout.strip(), output_format
        assert LONE not in result.stdout + result.stderr
        assert "crash" not in result.stderr.lower(), result.stderr
