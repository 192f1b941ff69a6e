"""``--write-proofs DIR``: the tests that proved findings, saved as files to commit as
regression tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orch_review.findings.provenance import confined_path
from orch_review.findings.records import Finding
from orch_review.quoting import quote_path


def write_proofs(findings: Sequence[Finding], directory: Path) -> list[str]:
    """Write each proven finding's test at its path under ``directory``; one line per test
    (written, or why not) for the user. Never through a link, never over an existing file."""
    lines = []
    for finding in findings:
        proof = finding.proof
        if proof is None or not proof.proven or proof.test_path is None:
            continue
        assert proof.test_code is not None
        try:
            relative = confined_path(proof.test_path)
        except ValueError as exc:
            lines.append(f"Not written: {exc}")
            continue
        target = directory / relative
        shown = quote_path(str(target))
        parents = [directory / p for p in reversed(Path(relative).parents) if str(p) != "."]
        if any(p.is_symlink() for p in [directory, *parents]) or target.is_symlink():
            lines.append(f"Not written: {shown} leads through a link.")
            continue
        if target.exists():
            lines.append(f"Not written: {shown} exists.")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(proof.test_code, encoding="utf-8", errors="surrogateescape")
        lines.append(f"Wrote the test proving {finding.location} to {shown}")
    return lines
