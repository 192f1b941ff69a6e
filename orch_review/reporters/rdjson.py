"""``--format rdjson``: reviewdog's Diagnostic Format (``DiagnosticResult``), for
``reviewdog -f=rdjson``, whose reporters reach Gerrit, Bitbucket, Gitea and more.

The fields are those of reviewdog's ``proto/rdf/reviewdog.proto``: each confirmed finding is a
diagnostic with its message, location (a line range: without columns it is linewise and
includes its end line), severity, code (the category) and, for a verified patch, a
suggestion replacing the flagged lines. Files in scope that no verified review covered are
reported as diagnostics of their own, so an incomplete review never looks clean.

reviewdog filters diagnostics by the diff (``filter/diff_filter.go``): under its default
``-filter-mode=added`` it keeps one only when a line of its range is a line the diff adds,
and a diagnostic without a line has none. So a not-covered diagnostic spans the file's
changed lines (its hunks, first to last), which hold every line the change adds to it.
"""

from __future__ import annotations

from typing import Any

from orch_review.findings.records import Finding, Severity
from orch_review.findings.report import Report
from orch_review.findings.snippets import cap_lines
from orch_review.quoting import dumps, json_safe, path_for_json
from orch_review.reporters.text import machine_text
from orch_review.version import __version__

SEVERITY = {
    Severity.HIGH: "ERROR",
    Severity.MEDIUM: "WARNING",
    Severity.LOW: "INFO",
    Severity.INFO: "INFO",
}
SOURCE = {"name": "orch-review", "url": "https://github.com/orch-review/orch-review"}


def _lines(start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": start}, "end": {"line": max(start, end)}}


def _diagnostic(finding: Finding) -> dict[str, Any]:
    message = f"{finding.claim.strip()}\n\nEvidence: {finding.evidence.strip()}"
    diagnostic: dict[str, Any] = {
        "message": machine_text(cap_lines(message)),
        "location": {
            "path": path_for_json(finding.path),
            "range": _lines(finding.start_line, finding.end_line),
        },
        "severity": SEVERITY[finding.severity],
        "code": {"value": finding.category},
        "source": SOURCE,
    }
    patch = finding.verified_patch
    if patch is not None:
        diagnostic["suggestions"] = [
            {"range": _lines(finding.start_line, finding.end_line), "text": patch}
        ]
    return diagnostic


def to_data(report: Report) -> dict[str, Any]:
    """The ``DiagnosticResult``: confirmed findings, then files left uncovered."""
    diagnostics = [_diagnostic(f) for f in report.confirmed]
    coverage = report.coverage
    for file in coverage.uncovered if coverage is not None else ():
        reason = file.reason or "no verified review covered it"
        location: dict[str, Any] = {"path": path_for_json(file.path)}
        if file.hunks:
            location["range"] = _lines(file.hunks[0][0], file.hunks[-1][1])
        diagnostics.append(
            {
                "message": machine_text(f"orch-review did not review this file: {reason}."),
                "location": location,
                "severity": "WARNING",
                "code": {"value": "not-covered"},
                "source": SOURCE,
            }
        )
    return {"source": {**SOURCE, "version": __version__}, "diagnostics": diagnostics}


def render(report: Report) -> str:
    """The diagnostics as pretty JSON, keys sorted."""
    return dumps(json_safe(to_data(report)), indent=2, sort_keys=True) + "\n"
