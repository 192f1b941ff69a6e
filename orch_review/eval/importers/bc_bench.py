"""BC-Bench's code review set (github.com/microsoft/BC-Bench, MIT): 144 changes to
microsoft/BCApps (AL code for Business Central), 37 of them clean.

``dataset/codereview.jsonl`` holds one change a line, as ``src/bcbench/dataset/codereview.py``
defines it: ``instance_id``, ``repo`` (owner/name), ``base_commit``, ``patch`` (a unified diff
to apply to the base), ``expect_findings`` and ``expected_comments`` with ``file``,
``line_start``, ``line_end``, ``severity`` (critical, high, medium, low) and ``body``. The
change reviewed is the patch applied to the base, made into a commit when the case runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orch_review.errors import UsageError
from orch_review.eval.cases import MAX_PATCH, Case, ExpectedIssue, check_revision
from orch_review.eval.importers.common import case_id, clone_url, read_jsonl, severity, text
from orch_review.findings.records import Severity

SEVERITIES = {
    "critical": Severity.HIGH,
    "high": Severity.HIGH,
    "medium": Severity.MEDIUM,
    "low": Severity.LOW,
}
FILE = "codereview.jsonl"


def _line(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _issue(comment: Any) -> ExpectedIssue | None:
    if not isinstance(comment, dict):
        return None
    body = text(comment.get("body"))
    if body is None:
        return None
    path = text(comment.get("file"), 500)
    if path is not None and (path.startswith("/") or ".." in Path(path).parts):
        path = None
    start = _line(comment.get("line_start"))
    end = _line(comment.get("line_end")) or start
    rank = severity(comment.get("severity"), SEVERITIES)
    if path is None or start is None or end is None:
        return ExpectedIssue(body, path, severity=rank)
    return ExpectedIssue(body, path, min(start, end), max(start, end), rank)


def import_bc_bench(source: Path) -> list[Case]:
    """Cases from ``codereview.jsonl``, or the repository or ``dataset/`` folder holding it."""
    path = source
    for candidate in (source / "dataset" / FILE, source / FILE):
        if source.is_dir() and candidate.is_file():
            path = candidate
    if not path.is_file():
        raise UsageError(f"{source} holds no {FILE}: point at BC-Bench's dataset folder")
    cases = []
    for where, record in read_jsonl(path):
        patch = record.get("patch")
        if not isinstance(patch, str) or not patch.strip() or len(patch) > MAX_PATCH:
            raise UsageError(f"{where}: `patch` must be a unified diff")
        comments = record.get("expected_comments") or []
        if not isinstance(comments, list):
            raise UsageError(f"{where}: `expected_comments` must be a list")
        expected = tuple(issue for c in comments if (issue := _issue(c)) is not None)
        if record.get("expect_findings") is False and expected:
            raise UsageError(f"{where}: `expect_findings` is false but comments are expected")
        base = check_revision(record.get("base_commit"), f"{where}: `base_commit`")
        cases.append(
            Case(
                case_id("bc", record.get("instance_id") or where.rsplit(":", 1)[-1]),
                clone_url(record.get("repo"), where),
                base,
                base,
                expected,
                patch=patch,
            )
        )
    return cases
