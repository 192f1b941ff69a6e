"""Where a finding sits on a merge request's diff, as GitLab's position object says it.

A diff note's position names the merge request version's three commits (``base_sha``,
``start_sha``, ``head_sha``), both paths, and the line: ``new_line`` alone for an added
line, ``old_line`` alone for a removed one, both for a context line (docs.gitlab.com,
"Discussions API", "Create a new thread in the merge request diff"). A finding that spans
several lines also gets ``line_range``, whose ends are line codes: the SHA-1 of the file's
path, the line's number in the old file and in the new one (``{sha}_{old}_{new}``), the
counters GitLab's own diff parser keeps. A finding on lines the diff does not show has no
position: GitLab would refuse it with a 400, so it goes into the summary instead.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from orch_review.findings.records import Finding

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True, slots=True)
class DiffLine:
    """A line the diff shows on the new side: added (no old number) or context."""

    new: int
    old: int | None  # None: added
    old_counter: int  # GitLab's running old-line counter at this line, for its line code


@dataclass(frozen=True, slots=True)
class FileDiff:
    """One file of the version's diff: its paths and the new-side lines it shows, by hunk."""

    old_path: str
    new_path: str
    hunks: tuple[tuple[DiffLine, ...], ...]


@dataclass(frozen=True, slots=True)
class Refs:
    """The latest merge request version's three commits."""

    base_sha: str
    start_sha: str
    head_sha: str


def parse_diff(text: str) -> tuple[tuple[DiffLine, ...], ...]:
    """The new-side lines of each hunk of a file's ``diff`` (hunks only, as GitLab gives)."""
    hunks: list[list[DiffLine]] = []
    old = new = 0
    for raw in text.splitlines():
        match = _HUNK.match(raw)
        if match:
            old, new = int(match.group(1)), int(match.group(2))
            hunks.append([])
            continue
        if not hunks or raw.startswith("\\"):
            continue
        kind = raw[:1]
        if kind == "+":
            hunks[-1].append(DiffLine(new, None, old))
            new += 1
        elif kind == "-":
            old += 1
        else:  # context (" ", or an empty line)
            hunks[-1].append(DiffLine(new, old, old))
            old += 1
            new += 1
    return tuple(tuple(h) for h in hunks if h)


def files_from_version(version: Mapping[str, Any]) -> dict[str, FileDiff]:
    """``new_path`` -> its diff, from a version's ``diffs`` (deleted files left out)."""
    files: dict[str, FileDiff] = {}
    for entry in version.get("diffs") or ():
        if not isinstance(entry, Mapping) or entry.get("deleted_file"):
            continue
        new_path, old_path = entry.get("new_path"), entry.get("old_path")
        diff = entry.get("diff")
        if not isinstance(new_path, str) or not isinstance(diff, str):
            continue
        files[new_path] = FileDiff(
            old_path if isinstance(old_path, str) else new_path, new_path, parse_diff(diff)
        )
    return files


def line_code(path: str, old: int, new: int) -> str:
    """GitLab's code of a diff line: ``{sha1(path)}_{old}_{new}``."""
    return f"{hashlib.sha1(path.encode('utf-8', 'surrogateescape')).hexdigest()}_{old}_{new}"


def _end(path: str, line: DiffLine) -> dict[str, Any]:
    # "Use `new` for lines added by this commit, otherwise `old`" (Discussions API,
    # "Parameters for multiline comments"): a context line is `old`.
    kind = "new" if line.old is None else "old"
    end: dict[str, Any] = {
        "line_code": line_code(path, line.old_counter, line.new),
        "type": kind,
        "old_line": line.old,
        "new_line": line.new,
    }
    return end


@dataclass(frozen=True, slots=True)
class DiffPosition:
    """A finding placed on the diff: its position and the lines it covers there."""

    position: dict[str, Any]
    first: int
    last: int


def place(finding: Finding, files: Mapping[str, FileDiff], refs: Refs) -> DiffPosition | str:
    """The position of ``finding`` on the diff, or why there is none."""
    diff = files.get(finding.path)
    if diff is None:
        return "file not changed in this merge request"
    start, end = finding.start_line, max(finding.end_line, finding.start_line)
    for hunk in diff.hunks:
        shown = [line for line in hunk if start <= line.new <= end]
        if not shown:
            continue
        first, last = shown[0], shown[-1]
        position: dict[str, Any] = {
            "position_type": "text",
            "base_sha": refs.base_sha,
            "start_sha": refs.start_sha,
            "head_sha": refs.head_sha,
            "old_path": diff.old_path,
            "new_path": diff.new_path,
            "new_line": last.new,
        }
        if last.old is not None:
            position["old_line"] = last.old
        if first is not last:
            position["line_range"] = {
                "start": _end(diff.new_path, first),
                "end": _end(diff.new_path, last),
            }
        return DiffPosition(position, first.new, last.new)
    return "lines outside the diff"


def refs_of(versions: Iterable[Mapping[str, Any]]) -> Refs | None:
    """The three commits of the latest version (GitLab lists the latest first)."""
    for version in versions:
        shas = [version.get(k) for k in ("base_commit_sha", "start_commit_sha", "head_commit_sha")]
        if all(isinstance(s, str) and s for s in shas):
            base, start, head = (str(s) for s in shas)
            return Refs(base, start, head)
    return None
