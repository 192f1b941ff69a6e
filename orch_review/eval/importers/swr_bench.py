"""SWR-Bench (ZZR0/SWRench, MIT): 1,000 pull requests of 12 Python projects, half clean.

``data/swr_datasets_d5c5.jsonl`` holds one pull request per line: ``repo`` (owner/name),
``instance_id``, ``base_commit``, ``change_introduced`` (false for a clean change),
``pr_commits`` (in order, each with its ``sha``) and ``changes``, the confirmed issues, each
with a ``change_type`` and a ``change_discussion`` (``original_reviewer_comment``,
``discussion_summary``). The change reviewed is ``base_commit`` to the last PR commit. Issues
carry no file or line and no severity, so they are matched by the judge and reported as
unrated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orch_review.errors import UsageError
from orch_review.eval.cases import Case, ExpectedIssue, check_revision
from orch_review.eval.importers.common import case_id, clone_url, read_jsonl, text


def _issue(change: Any) -> ExpectedIssue | None:
    if not isinstance(change, dict):
        return None
    discussion = change.get("discussion") or change.get("change_discussion") or {}
    if not isinstance(discussion, dict):
        return None
    said = text(discussion.get("original_reviewer_comment")) or text(
        discussion.get("discussion_summary")
    )
    if said is None:
        return None
    kind = text(change.get("change_type"), 100)
    return ExpectedIssue(f"[{kind}] {said}" if kind else said)


def import_swr_bench(source: Path) -> list[Case]:
    """Cases from ``swr_datasets_d5c5.jsonl``."""
    cases = []
    for where, record in read_jsonl(source):
        commits = record.get("pr_commits")
        if not isinstance(commits, list) or not commits or not isinstance(commits[-1], dict):
            raise UsageError(f"{where}: `pr_commits` must be a non-empty list of commits")
        head = check_revision(commits[-1].get("sha"), f"{where}: the last PR commit's `sha`")
        base = check_revision(record.get("base_commit"), f"{where}: `base_commit`")
        issues: tuple[ExpectedIssue, ...] = ()
        if record.get("change_introduced"):
            changes = record.get("changes")
            found = [_issue(c) for c in changes] if isinstance(changes, list) else []
            issues = tuple(issue for issue in found if issue is not None)
            if not issues:
                raise UsageError(f"{where}: a change with issues lists none we can read")
        cases.append(
            Case(
                case_id("swr", record.get("instance_id") or where),
                clone_url(record.get("repo"), where),
                base,
                head,
                issues,
            )
        )
    return cases
