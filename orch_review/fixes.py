"""``--fix``: verified patches written to the working tree, never to a commit or the index.

A patch is applied only where the working-tree file still has exactly the reviewed lines
at that place; otherwise the file changed since the review and the patch is left out. When
patches of one file overlap, the first (the most severe, as the report ranks them) wins.
Within a file patches are applied bottom-up, so line numbers above stay valid, and the file
is replaced atomically (a new file renamed over it, its mode kept). A path through a
symbolic link is never written: the link could lead out of the repository.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from orch_review.findings.patches import PatchError, apply, decode, original_lines
from orch_review.findings.records import Finding

CHANGED = "the file changed since the review"


@dataclass(frozen=True, slots=True)
class FixOutcome:
    """What became of one verified patch."""

    finding: Finding
    applied: bool
    reason: str = ""  # why it was not applied


def apply_fixes(top: Path, findings: Sequence[Finding]) -> list[FixOutcome]:
    """Apply the verified patches of ``findings`` (in their order of priority) to the files
    under ``top``; one outcome per verified patch, in that order."""
    patches = [f for f in findings if f.verified_patch is not None]
    by_path: dict[str, list[Finding]] = {}
    for finding in patches:
        by_path.setdefault(finding.path, []).append(finding)
    outcomes: dict[int, FixOutcome] = {}
    for path, group in by_path.items():
        for finding, outcome in _fix_file(top, path, group):
            outcomes[id(finding)] = outcome
    return [outcomes[id(f)] for f in patches]


def _fix_file(top: Path, path: str, group: list[Finding]) -> list[tuple[Finding, FixOutcome]]:
    try:
        data = _read_regular(top, path)
        text = decode(data)
    except (OSError, PatchError) as exc:
        why = exc.args[0] if isinstance(exc, PatchError) else _os_reason(exc)
        return [(f, FixOutcome(f, False, why)) for f in group]
    chosen: list[Finding] = []
    results: list[tuple[Finding, FixOutcome]] = []
    for finding in group:
        clash = next((c for c in chosen if _overlap(c, finding)), None)
        if clash is not None:
            lines = f"{clash.start_line}-{clash.end_line}"
            results.append(
                (finding, FixOutcome(finding, False, f"overlaps the patch of lines {lines}"))
            )
        elif not _still_reviewed(text, finding):
            results.append((finding, FixOutcome(finding, False, CHANGED)))
        else:
            chosen.append(finding)
    if not chosen:
        return results
    patched = text
    for finding in sorted(chosen, key=lambda f: f.start_line, reverse=True):
        assert finding.replacement is not None
        patched = apply(patched, finding.start_line, finding.end_line, finding.replacement)
    try:
        _write_atomically(top, path, patched.encode("utf-8"))
    except OSError as exc:
        return results + [(f, FixOutcome(f, False, _os_reason(exc))) for f in chosen]
    return results + [(f, FixOutcome(f, True)) for f in chosen]


def _overlap(a: Finding, b: Finding) -> bool:
    return a.start_line <= b.end_line and b.start_line <= a.end_line


def _still_reviewed(text: str, finding: Finding) -> bool:
    check = finding.patch_check
    if check is None or check.reviewed is None:
        return False
    try:
        current = original_lines(text, finding.start_line, finding.end_line)
    except PatchError:
        return False
    return current == check.reviewed.split("\n")


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _checked_path(top: Path, path: str) -> Path:
    """``top/path`` when no part of it is a symbolic link and it is a regular file."""
    current = top
    parts = path.split("/")
    for index, part in enumerate(parts):
        if part in ("", ".", ".."):
            raise OSError(0, "not a path inside the repository")
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            raise OSError(0, "the file is gone from the working tree") from None
        if stat.S_ISLNK(mode):
            raise OSError(0, "a symbolic link is in the way; not followed")
        last = index == len(parts) - 1
        if last and not stat.S_ISREG(mode):
            raise OSError(0, "not a regular file in the working tree")
    return current


def _read_regular(top: Path, path: str) -> bytes:
    target = _checked_path(top, path)
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as file:
        return file.read()


def _write_atomically(top: Path, path: str, data: bytes) -> None:
    target = _checked_path(top, path)
    mode = stat.S_IMODE(os.lstat(target).st_mode)
    fd, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".orch-review", dir=target.parent
    )
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        _checked_path(top, path)  # nothing was swapped for a link meanwhile
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
