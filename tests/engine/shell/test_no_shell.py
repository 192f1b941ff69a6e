"""`--sandbox tools`: the sandbox contract without a shell, and what agents are told then."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orch_review.engine.agents import prompts
from orch_review.engine.agents.inlined_files import inline_files
from orch_review.engine.agents.tools import (
    REPORT_CONCERNS_TOOL,
    REPORT_FINDINGS_TOOL,
    REPORT_VERDICTS_TOOL,
    described,
    workflow_tool,
)
from orch_review.engine.shell.confinement import SandboxUnavailable
from orch_review.engine.shell.read_tools import READ_TOOLS
from orch_review.engine.shell.sandbox import resolve_sandbox
from orch_review.findings.records import Finding, Severity
from orch_review.scope.workspace import Workspace

TEXTS = {
    "main": prompts.MAIN_SYSTEM,
    "subagent": prompts.SUBAGENT_SYSTEM,
    "verifier": prompts.VERIFIER_SYSTEM,
    "critic": prompts.CRITIC_SYSTEM,
}


def test_tools_mode_is_a_sandbox_without_a_shell(tmp_path: Path) -> None:
    # Not even a bwrap to look for: nothing is probed, nothing is started.
    sandbox = resolve_sandbox("tools", tmp_path, search_path="", bwrap_path=tmp_path / "none")
    assert (sandbox.kind, sandbox.launcher, sandbox.has_shell) == ("tools", None, False)
    assert "no shell" in sandbox.description
    with pytest.raises(SandboxUnavailable):
        sandbox.launch(tmp_path, {}, ("bash",))


def test_a_sandbox_with_a_launcher_has_a_shell(tmp_path: Path) -> None:
    assert resolve_sandbox("off", tmp_path, search_path=os.environ["PATH"]).has_shell


@pytest.mark.parametrize("role", sorted(TEXTS))
def test_system_prompts_name_the_read_only_tools_and_never_bash(role: str) -> None:
    text = prompts.system_prompt(TEXTS[role], shell=False)
    assert "bash" not in text.lower()
    assert "read_file" in text and "git_diff" in text
    assert prompts.system_prompt(TEXTS[role], shell=True) == TEXTS[role]


def test_mode_messages_and_tool_descriptions_are_worded_for_the_tools() -> None:
    for text in (prompts.MODE_ENTER, prompts.MODE_EXIT, prompts.FIX_REVIEW):
        assert "bash" in text and "bash" not in prompts.without_shell(text)
    offered = [
        workflow_tool(10, 5, shell=False),
        *(described(t, False) for t in (REPORT_FINDINGS_TOOL, REPORT_VERDICTS_TOOL)),
        described(REPORT_CONCERNS_TOOL, False),
        *READ_TOOLS,
    ]
    assert "bash" not in json.dumps(offered).lower()
    assert "bash" in json.dumps(workflow_tool(10, 5)) + json.dumps(REPORT_FINDINGS_TOOL)


def test_a_verifier_judging_a_fix_is_told_to_read_with_the_tools() -> None:
    finding = Finding(
        "a.py", 1, 1, Severity.HIGH, "security", "c", "e", "concern", replacement="x = 1"
    )
    task = prompts.verifier_task("concern", [finding], shell=False)
    assert "with the read-only tools" in task and "bash" not in task


def test_the_files_shown_to_a_subagent_keep_their_text_when_the_frame_is_reworded(
    tmp_path: Path,
) -> None:
    (tmp_path / "run.sh").write_text("echo run this with bash\n")
    workspace = Workspace(tmp_path, ["run.sh"], "key")
    shown = inline_files(workspace, ["run.sh"], 10_000, shell=False).text
    assert "use the read-only tools for everything else" in shown
    assert "echo run this with bash" in shown  # data is never rewritten
