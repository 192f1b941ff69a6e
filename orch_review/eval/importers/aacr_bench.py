"""AACR-Bench (github.com/alibaba/aacr-bench, Apache-2.0): 200 pull requests of 50 projects
in 10 languages, with review comments cross-annotated by engineers.

``dataset/positive_samples.json`` is a JSON array of pull requests: ``githubPrUrl``,
``source_commit`` and ``target_commit`` (the benchmark's own converter,
``evaluation/converters/aacr_bench.py``, reviews ``target_commit`` against
``source_commit``), and ``comments`` with ``note``, ``path``, ``side`` (``right``: the new
code, ``left``: the old), ``from_line`` and ``to_line``, ``category`` and ``context``. Those
comments are the issues a review should find. ``negative_samples.json``, same shape, holds the
comments the annotators rejected; it names no issue to find, so it adds no case. Comments
on the old side have no line in the reviewed content and are matched by the judge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orch_review.errors import UsageError
from orch_review.eval.cases import Case, ExpectedIssue, check_revision
from orch_review.eval.importers.common import (
    case_id,
    clone_url,
    pull_request,
    read_json,
    text,
)

POSITIVE = "positive_samples.json"


def _line(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _issue(comment: Any) -> ExpectedIssue | None:
    if not isinstance(comment, dict):
        return None
    note = text(comment.get("note"))
    if note is None:
        return None
    path = text(comment.get("path"), 500)
    if path is not None and (path.startswith("/") or ".." in Path(path).parts):
        path = None
    start, end = _line(comment.get("from_line")), _line(comment.get("to_line"))
    if path is None or comment.get("side") == "left" or start is None:
        return ExpectedIssue(note, path)
    end = end or start
    return ExpectedIssue(note, path, min(start, end), max(start, end))


def import_aacr_bench(source: Path) -> list[Case]:
    """Cases from ``positive_samples.json``, or the ``dataset/`` folder holding it."""
    path = source
    if source.is_dir():
        path = source / "dataset" / POSITIVE
        if not path.is_file():
            path = source / POSITIVE
    if not path.is_file():
        raise UsageError(f"{source} holds no {POSITIVE}: point at AACR-Bench's dataset folder")
    records = read_json(path)
    if not isinstance(records, list):
        raise UsageError(f"{path}: expected a JSON array of pull requests")
    cases = []
    for index, record in enumerate(records):
        where = f"{path}[{index}]"
        if not isinstance(record, dict):
            raise UsageError(f"{where}: expected an object")
        repo, number = pull_request(record.get("githubPrUrl"), where)
        comments = record.get("comments") or []
        if not isinstance(comments, list):
            raise UsageError(f"{where}: `comments` must be a list")
        head = check_revision(record.get("target_commit"), f"{where}: `target_commit`")
        cases.append(
            Case(
                case_id("aacr", repo.replace("/", "__"), number),
                clone_url(repo, where),
                check_revision(record.get("source_commit"), f"{where}: `source_commit`"),
                head,
                tuple(issue for c in comments if (issue := _issue(c)) is not None),
            )
        )
    return cases
