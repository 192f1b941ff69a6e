"""What the importers share: reading JSON, GitHub names to clone URLs, case ids, severities."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from orch_review.errors import UsageError
from orch_review.findings.records import Severity

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_PR_URL = re.compile(r"^https://github\.com/([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)/pull/(\d+)/?$")
DEFAULT_BRANCH = "origin/HEAD"  # a clone's default branch; the review diffs from the merge-base


def clone_url(repo: object, where: str) -> str:
    """``owner/name`` as an https clone URL."""
    if not isinstance(repo, str) or not _REPO.match(repo):
        raise UsageError(f"{where}: `repo` must be a GitHub owner/name, got {str(repo)[:80]!r}")
    return f"https://github.com/{repo}.git"


def pull_request(url: object, where: str) -> tuple[str, int]:
    """(owner/name, number) of a GitHub pull request URL."""
    match = _PR_URL.match(url) if isinstance(url, str) else None
    if match is None:
        raise UsageError(f"{where}: not a GitHub pull request URL: {str(url)[:100]!r}")
    return match.group(1), int(match.group(2))


def pull_head(number: int) -> str:
    """The revision naming a pull request's head in a clone (fetched on demand)."""
    return f"origin/pull/{number}/head"


def case_id(*parts: object) -> str:
    """A case id from ``parts``, limited to the characters case files accept."""
    text = "-".join(str(p) for p in parts)
    return re.sub(r"[^A-Za-z0-9._:/@+-]+", "-", text).strip("-.")[:200] or "case"


def severity(raw: object, table: dict[str, Severity]) -> Severity | None:
    """A published severity label mapped onto ours (None when it has no counterpart)."""
    return table.get(raw.strip().lower()) if isinstance(raw, str) else None


def read_json(path: Path) -> Any:
    """A JSON file; UsageError naming it when it is unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None


def read_jsonl(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``file:line``, record) for each JSON object line of ``path``."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise UsageError(f"{where}: expected a JSON object")
        yield where, record


def text(value: object, limit: int = 4000) -> str | None:
    """A non-empty string cut to ``limit`` characters, else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:limit]
