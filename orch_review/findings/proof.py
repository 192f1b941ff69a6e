"""What proving a finding with a failing test showed: the records and their JSON.

A finding is *proven* only by what orch-review itself observed running the test (see
:mod:`orch_review.engine.proofs.proof_run`); nothing a model says sets :attr:`Proof.proven`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

ProofStatus = Literal["proven", "not-proven"]
Against = Literal["patch", "base"]


@dataclass(frozen=True, slots=True)
class ProofRun:
    """One run of the test: its exit status (None: killed or timed out) and its output."""

    exit_code: int | None
    output: str


@dataclass(frozen=True, slots=True)
class Proof:
    """The outcome of proving one finding; ``reason`` says why it is not proven (or how)."""

    status: ProofStatus
    reason: str
    test_path: str | None = None
    test_code: str | None = None
    command: str | None = None
    head: ProofRun | None = None
    fixed: ProofRun | None = None
    against: Against | None = None

    @property
    def proven(self) -> bool:
        """Whether the test failed on head with a test failure and passed with the fix."""
        return self.status == "proven"


def not_proven(reason: str) -> Proof:
    """A proof that was not made, and why."""
    return Proof("not-proven", reason)


def _run_to_json(run: ProofRun | None, against: Against | None = None) -> dict[str, Any] | None:
    if run is None:
        return None
    data: dict[str, Any] = {"exit_code": run.exit_code, "output": run.output}
    if against is not None:
        data["against"] = against
    return data


def proof_to_json(proof: Proof) -> dict[str, Any]:
    """The report's ``"proof"`` object."""
    return {
        "status": proof.status,
        "reason": proof.reason,
        "test_path": proof.test_path,
        "test_code": proof.test_code,
        "command": proof.command,
        "head": _run_to_json(proof.head),
        "fixed": _run_to_json(proof.fixed, proof.against),
    }


def _run_from_json(data: object) -> tuple[ProofRun | None, Against | None]:
    if data is None:
        return None, None
    if not isinstance(data, Mapping):
        raise ValueError("a proof's run must be an object")
    code = data.get("exit_code")
    output = data.get("output")
    if (code is not None and (not isinstance(code, int) or isinstance(code, bool))) or not (
        isinstance(output, str)
    ):
        raise ValueError("a proof's run needs an integer exit_code and a string output")
    against = data.get("against")
    if against not in (None, "patch", "base"):
        raise ValueError("a proof's `against` must be patch or base")
    return ProofRun(code, output), against


def proof_from_json(data: Mapping[str, Any]) -> Proof:
    """Inverse of :func:`proof_to_json`; raises ValueError/KeyError on a malformed dict."""
    status = data["status"]
    if status not in ("proven", "not-proven"):
        raise ValueError("a proof's status must be proven or not-proven")
    texts = {}
    for name in ("test_path", "test_code", "command"):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"a proof's {name} must be a string")
        texts[name] = value
    reason = data.get("reason")
    if not isinstance(reason, str):
        raise ValueError("a proof's reason must be a string")
    head, _ = _run_from_json(data.get("head"))
    fixed, against = _run_from_json(data.get("fixed"))
    return Proof(status, reason, head=head, fixed=fixed, against=against, **texts)
