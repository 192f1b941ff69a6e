"""The prover agent: reads the code of one confirmed finding and writes a minimal test that
should fail because of the bug. Its answer is a proposal; :mod:`.proof_run` decides."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from orch_review.engine.agents.agent_loop import Terminal
from orch_review.engine.agents.prompts import finding_fields
from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.subagent import run_agent
from orch_review.engine.agents.tools import ToolInputError
from orch_review.engine.proofs.proof_run import ProverReport
from orch_review.engine.proofs.runners import Runner
from orch_review.engine.shell.scratch_tree import ScratchPathError, checked_relative
from orch_review.findings.records import Finding
from orch_review.quoting import json_safe

MAX_TEST_CHARS = 20_000

REPORT_PROOF_TOOL: dict[str, Any] = {
    "name": "report_proof",
    "description": (
        "Report, once and at the end, a minimal test that fails because of the finding's "
        "bug and would pass once it is fixed. orch-review writes it into a private copy of "
        "the project and runs it itself; what you say about its outcome is not used."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "test_path": {
                "type": "string",
                "description": "A new file's repository-relative path, e.g. tests/test_bug.py.",
            },
            "test_code": {"type": "string", "description": "The complete test file."},
            "command": {
                "type": "string",
                "description": "The command that runs it from the repository's root.",
            },
        },
        "required": ["test_path", "test_code", "command"],
    },
}

PROVER_SYSTEM = """\
You are a prover in a code review. A verifier confirmed a finding about a repository; your \
job is to show it with a test. You have a bash tool running in a read-only copy of the \
repository (your working directory is its root); there is no network.

Read the cited code and what it uses. Then write the smallest test that exercises the code \
as it is and fails because of the bug: an assertion about the behaviour the finding says is \
wrong, or an expected exception. It must import the project's own code, not a copy of it, \
and must pass once the bug is fixed. Do not test anything else, do not write files outside \
the test, and do not reach the network. If no honest test can show the finding, still report \
your best test: it is run, and it proves nothing unless it fails on this code and passes \
with the fix. The test file must be new. Then call report_proof."""

_GO_PLACE = ", in the directory of the package it tests (only its own Test functions run)"
PROVER_TURN_LIMIT_NOTE = "You have reached your turn limit. Call report_proof now."


def prover_task(finding: Finding, runner: Runner) -> str:
    """The prover's first user turn: the finding, and how its test will be run."""
    data = json.dumps(json_safe(finding_fields(finding)), indent=2, ensure_ascii=False).replace(
        "<", "\\u003c"
    )
    return (
        f"The confirmed finding:\n\n<finding>\n{data}\n</finding>\n\n"
        f"The test is run with {runner.name}, as `{runner.command('TEST_PATH')}` from the "
        "repository's root (only the language's standard library and what the project itself "
        f"installs are there); its file must end in {' or '.join(runner.test_suffixes)}"
        f"{_GO_PLACE if runner.name == 'go' else ''}. "
        "Write the test, then call report_proof."
    )


def parse_proof(
    tool_input: Mapping[str, Any], suffixes: tuple[str, ...] = (".py",)
) -> ProverReport:
    """A validated ``report_proof`` call for a test file ending in one of ``suffixes``;
    ToolInputError goes back to the model."""
    values = {}
    for key in ("test_path", "test_code", "command"):
        value = tool_input.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ToolInputError(f"`{key}` is required and must be a non-empty string")
        values[key] = value
    if len(values["test_code"]) > MAX_TEST_CHARS:
        raise ToolInputError(f"`test_code` is longer than {MAX_TEST_CHARS:,} characters")
    try:
        path = checked_relative(values["test_path"].strip())
    except ScratchPathError as exc:
        raise ToolInputError(f"`test_path`: {exc}") from None
    if not path.endswith(suffixes):
        raise ToolInputError(f"`test_path` must end in {' or '.join(suffixes)}")
    return ProverReport(path, values["test_code"], values["command"])


def run_prover(session: Session, agent_id: str, finding: Finding, runner: Runner) -> ProverReport:
    """Ask for a test showing ``finding``; raises OrchReviewError when none came."""

    def parse(tool_input: Mapping[str, Any]) -> ProverReport:
        return parse_proof(tool_input, runner.test_suffixes)

    terminal = Terminal("report_proof", parse, PROVER_TURN_LIMIT_NOTE)
    return run_agent(
        session,
        agent_id,
        "prover",
        finding.location,
        PROVER_SYSTEM,
        REPORT_PROOF_TOOL,
        prover_task(finding, runner),
        terminal,
    )
