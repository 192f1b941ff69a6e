"""SWE-PRBench (foundry-ai/swe-prbench on Hugging Face, CC BY 4.0): 350 pull requests whose
ground truth is what human reviewers flagged.

The data set folder holds ``prs.jsonl`` (``task_id``, ``repo`` owner/name, ``pr_number``)
and ``annotations/{task_id}_human.json`` with the reviewers' ``comments`` (``comment_id``,
``body``, ``file``, ``line``, ``severity`` P0/P1/P2) and the ``substantive_comment_ids`` that
count (without that list: the comments marked ``is_initiating_comment``), the same
selection the benchmark's own harness makes. Commented lines are matched by location, the
rest by the judge. The change reviewed is the pull request's head (``head_commit`` when the
record has it) against its ``base_commit``, or else the merge-base with the default branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orch_review.errors import UsageError
from orch_review.eval.cases import Case, ExpectedIssue, check_revision
from orch_review.eval.importers.common import (
    DEFAULT_BRANCH,
    case_id,
    clone_url,
    pull_head,
    read_json,
    read_jsonl,
    severity,
    text,
)
from orch_review.findings.records import Severity

SEVERITIES = {"p0": Severity.HIGH, "p1": Severity.MEDIUM, "p2": Severity.LOW}


def _ground_truth(annotation: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(annotation, dict) or not isinstance(annotation.get("comments"), list):
        raise UsageError(f"{where}: expected an object with `comments`")
    comments = [c for c in annotation["comments"] if isinstance(c, dict)]
    wanted = set(annotation.get("substantive_comment_ids") or ())
    if wanted:
        return [c for c in comments if c.get("comment_id") in wanted]
    return [c for c in comments if c.get("is_initiating_comment")]


def _issue(comment: dict[str, Any]) -> ExpectedIssue | None:
    body = text(comment.get("body"))
    if body is None:
        return None
    path = text(comment.get("file"), 500)
    if path is not None and (path.startswith("/") or ".." in Path(path).parts):
        path = None
    line = comment.get("line")
    line = line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None
    return ExpectedIssue(
        body,
        path,
        line if path else None,
        line if path else None,
        severity(comment.get("severity"), SEVERITIES),
    )


def import_swe_prbench(source: Path) -> list[Case]:
    """Cases from the data set folder (``prs.jsonl`` and ``annotations/``)."""
    root = source / "dataset" if (source / "dataset" / "prs.jsonl").is_file() else source
    prs = root / "prs.jsonl"
    if not prs.is_file():
        raise UsageError(f"{source} holds no prs.jsonl: point at the SWE-PRBench data set folder")
    cases = []
    for where, record in read_jsonl(prs):
        number = record.get("pr_number") or record.get("number")
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            raise UsageError(f"{where}: `pr_number` must be a positive integer")
        repo = record.get("repo")
        task = record.get("task_id") or f"{str(repo).split('/')[-1]}__{number}"
        annotation = root / "annotations" / f"{task}_human.json"
        if not annotation.is_file():
            annotation = root / "annotations" / f"{number}_human.json"
        if not annotation.is_file():
            raise UsageError(f"{where}: no annotations/{task}_human.json next to prs.jsonl")
        comments = _ground_truth(read_json(annotation), str(annotation))
        base = record.get("base_commit") or DEFAULT_BRANCH
        head = record.get("head_commit") or pull_head(number)
        cases.append(
            Case(
                case_id("prb", task),
                clone_url(repo, where),
                check_revision(base, f"{where}: `base_commit`"),
                check_revision(head, f"{where}: `head_commit`"),
                tuple(issue for c in comments if (issue := _issue(c)) is not None),
            )
        )
    return cases
