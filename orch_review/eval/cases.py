"""Evaluation cases: one JSON object per line, validated as hostile data.

A case names a repository (a local path or a clone URL), a base and a head revision (or,
instead of a head, a ``patch`` to apply to the base), and the issues a good review of that
change should report; ``"expected": []`` marks a clean change::

    {"id": "c1", "repo": "../app", "base": "v1.0", "head": "fix-42",
     "expected": [{"path": "app/x.py", "line": 12, "description": "...", "severity": "high"}]}

``line`` is a line number or a ``[start, end]`` range; ``path``, ``line`` and ``severity`` are
optional. Revisions may not start with ``-`` (they reach git's command line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orch_review.errors import UsageError
from orch_review.findings.records import Severity

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$")
_MAX_TEXT = 10_000
MAX_PATCH = 5_000_000


@dataclass(frozen=True, slots=True)
class ExpectedIssue:
    """An issue a review of the change should find."""

    description: str
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    severity: Severity | None = None

    @property
    def located(self) -> bool:
        """True when matching can go by location (a path and a line range)."""
        return self.path is not None and self.start_line is not None

    def to_json(self) -> dict[str, Any]:
        """The case-file form of this issue."""
        out: dict[str, Any] = {"description": self.description}
        if self.path is not None:
            out["path"] = self.path
        if self.start_line is not None:
            end = self.end_line or self.start_line
            out["line"] = self.start_line if end == self.start_line else [self.start_line, end]
        if self.severity is not None:
            out["severity"] = self.severity.value
        return out


@dataclass(frozen=True, slots=True)
class Case:
    """One change to review and what it should yield."""

    id: str
    repo: str
    base: str
    head: str
    expected: tuple[ExpectedIssue, ...] = ()
    # For generated cases (``--mutate``): the defect pattern planted, shown per pattern.
    pattern: str | None = None
    # A unified diff: the change is ``patch`` applied to ``base`` (``head`` is then ``base``
    # until the runner makes the commit).
    patch: str | None = None

    @property
    def clean(self) -> bool:
        """A change with no expected issue."""
        return not self.expected

    def to_json(self) -> dict[str, Any]:
        """The case-file form of this case (one JSON line)."""
        out: dict[str, Any] = {
            "id": self.id,
            "repo": self.repo,
            "base": self.base,
            "head": self.head,
            "expected": [e.to_json() for e in self.expected],
        }
        if self.pattern is not None:
            out["pattern"] = self.pattern
        if self.patch is not None:
            out["patch"] = self.patch
            del out["head"]
        return out


def check_revision(rev: object, where: str) -> str:
    """A revision that is safe to hand to git: a non-empty string not starting with ``-``."""
    if not isinstance(rev, str) or not rev.strip():
        raise UsageError(f"{where} must be a non-empty revision string")
    if rev.startswith("-") or any(c in rev for c in "\0\n\r") or len(rev) > 256:
        raise UsageError(f"{where} is not a revision git would accept safely: {rev[:60]!r}")
    return rev


def _text(value: object, where: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_TEXT:
        raise UsageError(f"{where} must be a non-empty string of at most {_MAX_TEXT} characters")
    return value


def _lines(value: object, where: str) -> tuple[int | None, int | None]:
    if value is None:
        return None, None
    if isinstance(value, list) and len(value) == 2:
        start, end = value
    else:
        start, end = value, value
    for number in (start, end):
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise UsageError(f"{where} must be a line number or a [start, end] range")
    assert isinstance(start, int) and isinstance(end, int)
    if end < start:
        raise UsageError(f"{where}: the range ends before it starts")
    return start, end


def _issue(raw: object, where: str) -> ExpectedIssue:
    if not isinstance(raw, dict):
        raise UsageError(f"{where} must be an object with a `description`")
    unknown = set(raw) - {"description", "path", "line", "severity"}
    if unknown:
        raise UsageError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    description = _text(raw.get("description"), f"{where}.description")
    assert description is not None
    path = _text(raw.get("path"), f"{where}.path", optional=True)
    if path is not None and (path.startswith("/") or ".." in Path(path).parts):
        raise UsageError(f"{where}.path must be relative to the repository's top: {path!r}")
    start, end = _lines(raw.get("line"), f"{where}.line")
    if start is not None and path is None:
        raise UsageError(f"{where}: a `line` needs a `path`")
    severity = raw.get("severity")
    if severity is not None and severity not in {s.value for s in Severity}:
        raise UsageError(f"{where}.severity must be one of high, medium, low, info")
    return ExpectedIssue(
        description, path, start, end, None if severity is None else Severity(severity)
    )


def parse_case(raw: object, where: str) -> Case:
    """One case from its decoded JSON; UsageError naming ``where`` when it is malformed."""
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: a case must be a JSON object")
    unknown = set(raw) - {"id", "repo", "base", "head", "expected", "pattern", "patch"}
    if unknown:
        raise UsageError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not _ID.match(case_id):
        raise UsageError(f"{where}: `id` must be a short identifier (letters, digits, ._:/@+-)")
    repo = _text(raw.get("repo"), f"{where}: `repo`")
    assert repo is not None
    if repo.startswith("-"):
        raise UsageError(f"{where}: `repo` may not start with `-`")
    expected = raw.get("expected")
    if not isinstance(expected, list):
        raise UsageError(f"{where}: `expected` must be a list (empty for a clean change)")
    pattern = _text(raw.get("pattern"), f"{where}: `pattern`", optional=True)
    patch = raw.get("patch")
    if patch is not None and (not isinstance(patch, str) or not patch.strip()):
        raise UsageError(f"{where}: `patch` must be a unified diff")
    if isinstance(patch, str) and len(patch) > MAX_PATCH:
        raise UsageError(f"{where}: `patch` is longer than {MAX_PATCH:,} characters")
    base = check_revision(raw.get("base"), f"{where}: `base`")
    if patch is not None and raw.get("head") is not None:
        raise UsageError(f"{where}: give `head` or `patch`, not both")
    head = base if patch is not None else check_revision(raw.get("head"), f"{where}: `head`")
    return Case(
        case_id,
        repo,
        base,
        head,
        tuple(_issue(e, f"{where}: expected[{n}]") for n, e in enumerate(expected)),
        pattern,
        patch,
    )


def parse_cases(lines: Iterable[str], source: str) -> list[Case]:
    """Cases from JSONL text; blank lines and lines starting with ``#`` are skipped."""
    cases: list[Case] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{source}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: not valid JSON ({exc.msg})") from None
        case = parse_case(raw, where)
        if case.id in seen:
            raise UsageError(f"{where}: case id `{case.id}` is used twice")
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise UsageError(f"{source} holds no case: write one JSON object per line")
    return cases


def load_cases(path: Path) -> list[Case]:
    """The cases of a JSONL file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the case file {path}: {exc}") from None
    return parse_cases(text.splitlines(), str(path))


def dump_cases(cases: Iterable[Case]) -> Iterator[str]:
    """JSONL lines (without newlines) for ``cases``, keys sorted."""
    for case in cases:
        yield json.dumps(case.to_json(), sort_keys=True, ensure_ascii=False)
