"""How a finding's proof reads in the human formats: "proven by a failing test", with the test
folded. The test and its path come from a model: they go through the sanitizers, in fences
they cannot close."""

from __future__ import annotations

from orch_review.findings.proof import Proof
from orch_review.findings.records import Finding
from orch_review.sanitize import controls, fence
from orch_review.sanitize import markdown as safe

PROVEN = "proven by a failing test"


def _against(proof: Proof) -> str:
    return "with the verified patch" if proof.against == "patch" else "on the base revision"


def proof_line(proof: Proof) -> str:
    """One line: proven (what showed it), or not and why; plain text, not yet sanitized."""
    if proof.proven:
        return f"{PROVEN}: it fails on this change and passes {_against(proof)}"
    return f"not proven by a test: {proof.reason}"


def markdown_proof(finding: Finding, limit: int = 600) -> list[str]:
    """Markdown lines for ``finding``'s proof (none without one): the test folded when it
    proved the finding, the reason otherwise."""
    proof = finding.proof
    if proof is None:
        return []
    if not proof.proven:
        return ["", f"<sub>Not proven by a test: {safe(proof.reason, limit)}</sub>"]
    assert proof.test_code is not None and proof.test_path is not None
    assert proof.command is not None
    code = controls(proof.test_code).rstrip("\n")
    ticks = fence(code)
    command = controls(proof.command)
    run = fence(command, minimum=1)
    pad = " " if command.startswith("`") or command.endswith("`") else ""
    return [
        "",
        f"**{PROVEN.capitalize()}:** it fails on this change and passes {_against(proof)}.",
        "",
        "<details><summary>The test, "
        + safe(proof.test_path, 200)
        + f" (run from the repository's root with {run}{pad}{command}{pad}{run})</summary>",
        "",
        f"{ticks}python",
        code,
        ticks,
        "",
        "</details>",
    ]
