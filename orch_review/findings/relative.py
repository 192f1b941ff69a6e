"""A report as seen from a subdirectory: its paths relative to it, as git shows them.

Reports hold repository-relative paths, and machine outputs (JSON, SARIF, workflow commands)
keep them so, as documented. People who run orch-review from a subdirectory read the
terminal report with paths they can open from there (``../app.py:6``), as ``git status``
prints them; :func:`seen_from` makes that copy of the report for the terminal only.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from orch_review.findings.report import Report


def shown_path(path: str, prefix: str) -> str:
    """``path`` (relative to the repository's top) relative to ``prefix``, a directory of
    the repository ("" or "." for the top itself)."""
    prefix = prefix.strip("/")
    if prefix in ("", "."):
        return path
    # Both are relative to the same top, so this is pure path arithmetic: no file is read.
    return posixpath.relpath(posixpath.join("/", path), posixpath.join("/", prefix))


def seen_from(report: Report, prefix: str) -> Report:
    """``report`` with the paths of its findings, coverage and unreadable files relative to
    ``prefix`` (see :func:`shown_path`); the same report when ``prefix`` is the top."""
    if prefix.strip("/") in ("", "."):
        return report
    coverage = report.coverage
    if coverage is not None:
        coverage = replace(
            coverage,
            files=tuple(replace(f, path=shown_path(f.path, prefix)) for f in coverage.files),
            skipped=tuple(replace(s, path=shown_path(s.path, prefix)) for s in coverage.skipped),
        )
    return replace(
        report,
        findings=tuple(replace(f, path=shown_path(f.path, prefix)) for f in report.findings),
        unreadable=tuple(shown_path(p, prefix) for p in report.unreadable),
        coverage=coverage,
    )
