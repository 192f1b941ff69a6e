"""The Code Review Bench offline set (withmartian/code-review-benchmark, MIT).

``offline/golden_comments/<project>.json`` lists pull requests, each with its ``url`` and
golden ``comments`` (``comment``, ``severity`` Low/Medium/High/Critical, optional
``category``). Comments carry no file or line, so every issue is matched by the judge. The
change reviewed is the pull request's head against the merge-base with the default branch.
"""

from __future__ import annotations

from pathlib import Path

from orch_review.errors import UsageError
from orch_review.eval.cases import Case, ExpectedIssue
from orch_review.eval.importers.common import (
    DEFAULT_BRANCH,
    case_id,
    clone_url,
    pull_head,
    pull_request,
    read_json,
    severity,
    text,
)
from orch_review.findings.records import Severity

SEVERITIES = {
    "critical": Severity.HIGH,
    "high": Severity.HIGH,
    "medium": Severity.MEDIUM,
    "low": Severity.LOW,
}


def import_code_review_bench(source: Path) -> list[Case]:
    """Cases from the ``golden_comments`` folder (or one of its JSON files)."""
    files = sorted(source.glob("*.json")) if source.is_dir() else [source]
    if not files:
        raise UsageError(f"{source} holds no golden comment file (*.json)")
    cases = []
    for path in files:
        entries = read_json(path)
        if not isinstance(entries, list):
            raise UsageError(f"{path}: expected a list of pull requests")
        for number, entry in enumerate(entries, 1):
            where = f"{path}: entry {number}"
            if not isinstance(entry, dict) or not isinstance(entry.get("comments"), list):
                raise UsageError(f"{where}: expected an object with `url` and `comments`")
            repo, pr = pull_request(entry.get("url"), where)
            issues = tuple(
                ExpectedIssue(description, severity=severity(c.get("severity"), SEVERITIES))
                for c in entry["comments"]
                if isinstance(c, dict) and (description := text(c.get("comment")))
            )
            cases.append(
                Case(
                    case_id("crb", path.stem, repo.replace("/", "-"), pr),
                    clone_url(repo, where),
                    DEFAULT_BRANCH,
                    pull_head(pr),
                    issues,
                )
            )
    return cases
