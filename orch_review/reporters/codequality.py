"""``--format gitlab``: a GitLab Code Quality report, for ``artifacts:reports:codequality``.

The subset of the Code Climate spec GitLab documents (docs.gitlab.com, "Code Quality",
"Code Quality report format"): a JSON array of objects with ``description``,
``check_name``, ``fingerprint``, ``severity`` (``info``, ``minor``, ``major``, ``critical``,
``blocker``), ``location.path`` and ``location.lines.begin``. The merge request widget shows
them on every GitLab tier, with only the job token. A file in scope that no verified review
covered is an entry of its own (``orch-review/not-covered``): an incomplete review never
looks clean in the widget.
"""

from __future__ import annotations

import hashlib
from typing import Any

from orch_review.findings.records import Finding, Severity
from orch_review.findings.report import Report
from orch_review.findings.snippets import cap_lines
from orch_review.quoting import dumps, json_safe, path_for_json
from orch_review.reporters.text import machine_text

SEVERITY = {
    Severity.HIGH: "critical",
    Severity.MEDIUM: "major",
    Severity.LOW: "minor",
    Severity.INFO: "info",
}
NOT_COVERED = "orch-review/not-covered"


def _fingerprint(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _issue(finding: Finding) -> dict[str, Any]:
    text = f"{finding.claim.strip()} Evidence: {finding.evidence.strip()}"
    return {
        "description": machine_text(cap_lines(text)),
        "check_name": f"orch-review/{finding.category}",
        "fingerprint": _fingerprint(
            finding.fingerprint or f"{finding.path}:{finding.start_line}", finding.claim
        ),
        "severity": SEVERITY[finding.severity],
        "location": {
            "path": path_for_json(finding.path),
            "lines": {
                "begin": finding.start_line,
                "end": max(finding.end_line, finding.start_line),
            },
        },
    }


def to_data(report: Report) -> list[dict[str, Any]]:
    """The report's entries: confirmed findings, then files left uncovered."""
    entries = [_issue(f) for f in report.confirmed]
    coverage = report.coverage
    for file in coverage.uncovered if coverage is not None else ():
        reason = file.reason or "no verified review covered it"
        entries.append(
            {
                "description": machine_text(f"orch-review did not review this file: {reason}."),
                "check_name": NOT_COVERED,
                "fingerprint": _fingerprint(NOT_COVERED, file.path),
                "severity": "major",
                "location": {"path": path_for_json(file.path), "lines": {"begin": 1}},
            }
        )
    return entries


def render(report: Report) -> str:
    """The Code Quality report as pretty JSON, keys sorted."""
    return dumps(json_safe(to_data(report)), indent=2, sort_keys=True) + "\n"
