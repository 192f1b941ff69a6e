"""The coverage ledger: which reviewable files a review covered, counted in files, not concerns.

A file is covered when a concern that names it finished and every one of its findings was
verified, or when an earlier complete review of the same content covered it ("reused"). Every
other reviewable file is uncovered, with the reason; files skipped before the review are listed
with theirs. The exit code follows this ledger: a review is complete only when it covers
every reviewable file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from orch_review.wording import unit_noun

FileStatus = Literal["covered", "reused", "uncovered"]
COVERED: tuple[FileStatus, ...] = ("covered", "reused")
NOT_NAMED = "no concern that finished and was verified named it"


@dataclass(frozen=True, slots=True)
class LedgerFile:
    """One reviewable file: its size for grouping, and for a change its changed lines."""

    path: str
    lines: int  # lines added or deleted for a change; the file's lines for --all
    hunks: tuple[tuple[int, int], ...] = ()  # new-side (start, end), empty for --all


@dataclass(frozen=True, slots=True)
class FileCoverage:
    """What became of one reviewable file."""

    path: str
    lines: int
    hunks: tuple[tuple[int, int], ...]
    status: FileStatus
    concerns: tuple[int, ...] = ()  # 1-based ids of the concerns that covered it
    reason: str = ""  # why it is not covered

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (stable keys)."""
        return {
            "path": self.path,
            "lines": self.lines,
            "hunks": [list(h) for h in self.hunks],
            "status": self.status,
            "concerns": list(self.concerns),
            "reason": self.reason or None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FileCoverage:
        """Inverse of :meth:`to_json`."""
        status = str(data["status"])
        if status not in ("covered", "reused", "uncovered"):
            raise ValueError(f"unknown file coverage status {status!r}")
        return cls(
            path=str(data["path"]),
            lines=int(data["lines"]),
            hunks=tuple((int(a), int(b)) for a, b in data.get("hunks") or ()),
            status=status,  # type: ignore[arg-type]
            concerns=tuple(int(c) for c in data.get("concerns") or ()),
            reason=str(data.get("reason") or ""),
        )


@dataclass(frozen=True, slots=True)
class SkippedPath:
    """A file in scope that was not reviewed at all, and why (binary, too large, refused)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Coverage:
    """The ledger of one review (or of merged shard reviews)."""

    files: tuple[FileCoverage, ...]
    skipped: tuple[SkippedPath, ...] = ()
    unit: str = "changed files"  # "files" for a full audit
    notes: tuple[str, ...] = field(default=())  # e.g. a shard that produced no report

    @property
    def covered(self) -> list[FileCoverage]:
        """Files covered by this review or reused from an earlier one."""
        return [f for f in self.files if f.status in COVERED]

    @property
    def reused(self) -> list[FileCoverage]:
        """Files covered by an earlier complete review of the same content."""
        return [f for f in self.files if f.status == "reused"]

    @property
    def uncovered(self) -> list[FileCoverage]:
        """Files nothing covered, with the reason."""
        return [f for f in self.files if f.status == "uncovered"]

    @property
    def complete(self) -> bool:
        """Every reviewable file covered, and nothing noted missing."""
        return not self.uncovered and not self.notes

    def headline(self) -> str:
        """``N of M changed files covered`` (with how many were reused)."""
        total = len(self.files)
        line = f"{len(self.covered)} of {total} {unit_noun(total, self.unit)} covered"
        if self.reused:
            line += f" ({len(self.reused)} reused from an earlier review)"
        return line

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (files sorted by path)."""
        return {
            "unit": self.unit,
            "total": len(self.files),
            "covered": len(self.covered),
            "reused": len(self.reused),
            "uncovered": len(self.uncovered),
            "complete": self.complete,
            "files": [f.to_json() for f in sorted(self.files, key=lambda f: f.path)],
            "skipped": [
                {"path": s.path, "reason": s.reason}
                for s in sorted(self.skipped, key=lambda s: s.path)
            ],
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Coverage:
        """Inverse of :meth:`to_json`."""
        return cls(
            files=tuple(FileCoverage.from_json(f) for f in data["files"]),
            skipped=tuple(SkippedPath(str(s["path"]), str(s["reason"])) for s in data["skipped"]),
            unit=str(data.get("unit") or "changed files"),
            notes=tuple(str(n) for n in data.get("notes") or ()),
        )


def build_coverage(
    files: Iterable[LedgerFile],
    *,
    covered_by: Mapping[str, Sequence[int]],
    reused: Iterable[str] = (),
    reasons: Mapping[str, str] | None = None,
    skipped: Iterable[SkippedPath] = (),
    unit: str = "changed files",
) -> Coverage:
    """The ledger from which concern ids covered each path, which paths were reused, and
    why the others were not covered (default: no finished concern named them)."""
    reasons = reasons or {}
    reused_paths = set(reused)
    out = []
    for file in files:
        ids = tuple(sorted(set(covered_by.get(file.path, ()))))
        if ids:
            status: FileStatus = "covered"
        elif file.path in reused_paths:
            status = "reused"
        else:
            status = "uncovered"
        reason = "" if status != "uncovered" else reasons.get(file.path, NOT_NAMED)
        out.append(FileCoverage(file.path, file.lines, file.hunks, status, ids, reason))
    return Coverage(tuple(out), tuple(skipped), unit)


def merge_coverage(parts: Sequence[Coverage], notes: Iterable[str] = ()) -> Coverage:
    """Shard ledgers summed: each file once (covered wins, concern ids kept as reported),
    skipped files once."""
    files: dict[str, FileCoverage] = {}
    for part in parts:
        for file in part.files:
            known = files.get(file.path)
            if known is None or (known.status == "uncovered" and file.status in COVERED):
                files[file.path] = file
    skipped = {s.path: s for part in parts for s in part.skipped}
    unit = parts[0].unit if parts else "changed files"
    return Coverage(
        tuple(files[p] for p in sorted(files)),
        tuple(skipped[p] for p in sorted(skipped)),
        unit,
        tuple(n for part in parts for n in part.notes) + tuple(notes),
    )
