"""Shard reports read back like model output: confined paths, known categories, and
verified patches only with orch-review's signature.

A shard's JSON report reaches the merge job as a file anyone in the workflow could have
written. Its paths must be canonical repository-relative paths outside ``.git`` (else the
report is unusable), a category orch-review does not know becomes ``other``, and a patch
marked verified stays verified only when it carries a signature made with this credential's
key (see :mod:`orch_review.trust`): otherwise it is shown as prose, never as a committable
suggestion.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from orch_review.config.choices import CATEGORIES
from orch_review.findings.records import Finding, PatchCheck
from orch_review.findings.report import Report
from orch_review.quoting import path_for_json
from orch_review.trust import Signer

OTHER_CATEGORY = "other"
UNSIGNED = (
    "marked verified in a shard report, but not signed by a review with this credential: "
    "shown as prose, not as a suggestion to commit"
)


def confined_path(raw: str) -> str:
    """``raw`` in one spelling (``a/./b`` is ``a/b``); ValueError for a path that is not
    repository-relative, leaves the tree or goes into ``.git``."""
    if "\0" in raw:
        raise ValueError(f"`{raw}` is not a repository-relative path")
    if raw.startswith("/"):
        raise ValueError(f"`{raw}` is absolute; use a repository-relative path")
    path = posixpath.normpath(raw)
    if path == "." or path == ".." or path.startswith("../"):
        raise ValueError(f"`{raw}` is not a file inside the repository")
    if ".git" in path.split("/"):
        raise ValueError(f"`{raw}` is inside .git, which is not under review")
    return path


def known_category(category: str) -> str:
    """``category`` when orch-review offers it, else ``other``."""
    return category if category in CATEGORIES else OTHER_CATEGORY


def check_report_paths(data: Mapping[str, Any]) -> None:
    """ValueError naming the first path of a JSON report that orch-review would not write."""
    coverage = data.get("coverage") or {}
    entries: Iterable[Any] = [
        *(data.get("findings") or ()),
        *(coverage.get("files") or ()),
        *(coverage.get("skipped_files") or ()),
    ]
    for number, entry in enumerate(entries, 1):
        path = entry.get("path") if isinstance(entry, Mapping) else None
        if not isinstance(path, str):
            raise ValueError(f"entry {number} has no path")
        try:
            canonical = confined_path(path)
        except ValueError:
            canonical = None
        if canonical != path:
            # The path itself is not repeated: it is what the report may not show.
            raise ValueError(
                f"entry {number} has a path orch-review does not write (outside the "
                "repository, into .git, or not in its one spelling)"
            )


def _signed(finding: Finding, scope: str) -> tuple[object, ...]:
    check = finding.patch_check
    assert check is not None
    return (
        "verified patch",
        scope,
        path_for_json(finding.path),
        finding.start_line,
        finding.end_line,
        finding.replacement,
        check.reviewed,
    )


def sign_patches(report: Report, signer: Signer | None) -> Report:
    """``report`` with every verified patch signed (unchanged without a signer)."""
    if signer is None:
        return report
    findings = []
    for finding in report.findings:
        check = finding.patch_check
        if check is not None and check.verified:
            signature = signer.sign(*_signed(finding, report.scope))
            finding = replace(finding, patch_check=replace(check, signature=signature))
        findings.append(finding)
    return replace(report, findings=tuple(findings))


def trusted_patches(report: Report, signer: Signer | None) -> tuple[Report, int]:
    """``report`` with each verified patch whose signature does not hold downgraded to
    unverified; and how many were."""
    downgraded = 0
    findings = []
    for finding in report.findings:
        check = finding.patch_check
        if check is not None and check.verified:
            signed = _signed(finding, report.scope)
            if signer is None or not signer.valid(check.signature, *signed):
                check = PatchCheck(False, UNSIGNED, check.reviewed)
                finding = replace(finding, patch_check=check)
                downgraded += 1
        findings.append(finding)
    return replace(report, findings=tuple(findings)), downgraded


SHARD_PROOF = (
    "marked proven in a shard report, which the merge cannot check: run the proofs in the "
    "review that reports them"
)


def unproven_shard_proofs(report: Report) -> Report:
    """``report`` with every ``proven`` proof read back from a shard report made
    ``not-proven``: a shard's report is a file anyone in the workflow could have written, and
    a proof is not signed, so only a review that ran the test may say it proves anything."""
    findings = []
    for finding in report.findings:
        proof = finding.proof
        if proof is not None and proof.proven:
            finding = replace(
                finding, proof=replace(proof, status="not-proven", reason=SHARD_PROOF)
            )
        findings.append(finding)
    return replace(report, findings=tuple(findings))
