"""orch-review's own report files are never part of a later review.

Every report file orch-review writes inside a repository's working tree (``--json``,
``--sarif``, ``plan --json FILE``, ``merge``) is recorded with the SHA-256 of what was written
in ``.git/orch-review/reports.json``. A later review skips such a file while it still holds
exactly those bytes, in the working tree, the index or a commit alike: a report costs tokens
and finds nothing. Once anything else is written there, it is reviewed like any file.

The record lives in the git directory, never in the content under review, so a change cannot
hide a file from its review by claiming it is a report.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

RECORD_NAME = "reports.json"
SKIP_REASON = "an orch-review report: its own outputs are never reviewed"
# Reports kept in the record at most: the oldest are forgotten first.
MAX_RECORDED = 200


def record_path(git_dir: Path) -> Path:
    """Where the record of written reports is kept."""
    return git_dir / "orch-review" / RECORD_NAME


def digest(data: bytes) -> str:
    """How a report's content is recognised."""
    return hashlib.sha256(data).hexdigest()


def recorded(git_dir: Path) -> dict[str, str]:
    """Repository-relative path -> SHA-256 of each report orch-review wrote there; empty when
    nothing was recorded or the record cannot be read (then nothing is skipped)."""
    try:
        data = json.loads(record_path(git_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def remember(top: Path, git_dir: Path, written: Iterable[tuple[Path, bytes]]) -> None:
    """Record the reports in ``written`` (path, bytes) that lie inside the working tree
    ``top``. Best effort: a record that cannot be written only means the report may be
    reviewed later, which is no reason to fail the review that wrote it."""
    top = Path(os.path.realpath(top))
    entries = recorded(git_dir)
    changed = False
    for path, data in written:
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(top) or real == top:
            continue
        relative = real.relative_to(top).as_posix()
        if relative.split("/", 1)[0] == ".git":
            continue
        entries.pop(relative, None)  # re-inserted last: the newest are kept
        entries[relative] = digest(data)
        changed = True
    if not changed:
        return
    kept = dict(list(entries.items())[-MAX_RECORDED:])
    target = record_path(git_dir)
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{RECORD_NAME}.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(kept, out, sort_keys=True, indent=0)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def own_reports(
    git_dir: Path, candidates: Iterable[str], content: Callable[[str], bytes | None]
) -> set[str]:
    """Those of ``candidates`` (repository-relative paths) that hold a report orch-review
    wrote; ``content`` gives a path's bytes in the content under review (None: none)."""
    entries = recorded(git_dir)
    if not entries:
        return set()
    found = set()
    for path in candidates:
        expected = entries.get(path)
        if expected is None:
            continue
        data = content(path)
        if data is not None and digest(data) == expected:
            found.add(path)
    return found


def working_copy(top: Path) -> Callable[[str], bytes | None]:
    """A ``content`` reader for :func:`own_reports`: the file in the working tree."""

    def read(path: str) -> bytes | None:
        full = top / path
        try:
            if full.is_symlink() or not full.is_file():
                return None
            return full.read_bytes()
        except OSError:
            return None

    return read
