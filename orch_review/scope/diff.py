"""Parsing ``git diff`` output into what changed in each file, on the new side."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from orch_review.quoting import unquote_path
from orch_review.scope.symbols import defined, patterns_for

#: Deleted names kept per file, at most.
NAMES_PER_FILE = 50

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's change: status, line counts, and new-side line numbers touched."""

    path: str
    status: str  # "added", "modified", "deleted", "renamed"
    old_path: str | None = None
    additions: int = 0
    deletions: int = 0
    binary: bool = False
    added_lines: frozenset[int] = field(default=frozenset())
    hunks: tuple[tuple[int, int], ...] = ()  # new-side (start, end) incl. context, 1-based
    # "symlink", "file" or "submodule" when the path changed kind in this change (git's
    # type change, which a patch shows as a deletion and an addition of the same path):
    # what it was before; its status is then "modified" and every line of it is new.
    replaced: str | None = None
    # Names (functions, classes, types) that removed lines defined and added lines of this
    # file do not define again; and the names added lines define (orch_review.scope.symbols).
    removed_names: tuple[str, ...] = ()
    added_names: frozenset[str] = field(default=frozenset())

    def in_hunks(self, line: int) -> bool:
        """True if ``line`` (new side) lies in one of the hunks."""
        return any(start <= line <= end for start, end in self.hunks)


def line_ranges(hunks: Sequence[tuple[int, int]]) -> str:
    """``3-12, 40`` for new-side (start, end) hunks."""
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in hunks)


def _strip_side(raw: str, side: str) -> str | None:
    # git ends the ---/+++ line with a tab when the name contains a space (for patch(1)),
    # after the closing quote of a quoted name; a tab inside a name is always quoted.
    if raw.endswith("\t"):
        raw = raw[:-1]
    if raw == "/dev/null":
        return None
    path = unquote_path(raw)
    return path[2:] if path.startswith(side) else path


@dataclass
class _Builder:
    old: str | None = None
    new: str | None = None
    rename_from: str | None = None
    rename_to: str | None = None
    additions: int = 0
    deletions: int = 0
    binary: bool = False
    new_file: bool = False
    deleted_file: bool = False
    added: set[int] = field(default_factory=set)
    hunks: list[tuple[int, int]] = field(default_factory=list)
    old_mode: str | None = None
    removed_names: dict[str, None] = field(default_factory=dict)
    added_names: set[str] = field(default_factory=set)

    def note(self, name: str, added: bool) -> None:
        """Record a name a removed or added line defines (bounded per file)."""
        if added and len(self.added_names) < NAMES_PER_FILE * 4:
            self.added_names.add(name)
        elif not added and len(self.removed_names) < NAMES_PER_FILE:
            self.removed_names[name] = None

    def build(self, header_path: str) -> FileChange:
        path = self.new or self.rename_to or self.old or self.rename_from or header_path
        old = self.old or self.rename_from
        if self.deleted_file or (self.new is None and self.old is not None and not self.rename_to):
            status, path = "deleted", old or path
        elif self.new_file:
            status = "added"
        elif old is not None and old != path:
            status = "renamed"
        else:
            status = "modified"
        return FileChange(
            path=path,
            status=status,
            old_path=old if status == "renamed" else None,
            additions=self.additions,
            deletions=self.deletions,
            binary=self.binary,
            added_lines=frozenset(self.added),
            hunks=tuple(self.hunks),
            removed_names=tuple(n for n in self.removed_names if n not in self.added_names),
            added_names=frozenset(self.added_names),
        )


def _header_path(line: str) -> str:
    # "diff --git a/x b/x": only a fallback (mode-only changes have no ---/+++ lines).
    rest = line[len("diff --git ") :]
    if rest.startswith('"'):
        end = 1
        while end < len(rest) and rest[end] != '"':
            end += 2 if rest[end] == "\\" else 1
        return _strip_side(rest[: end + 1], "a/") or ""
    half = len(rest) // 2
    return rest[2:half] if rest[half] == " " else rest.split(" b/", 1)[0][2:]


def parse_patch(lines: Iterable[str]) -> list[FileChange]:
    """Changes from ``git diff -M --no-color --no-ext-diff`` output (a/ and b/ prefixes)."""
    changes: list[FileChange] = []
    old_modes: list[str | None] = []
    current: _Builder | None = None
    header = ""
    new_line = 0
    # Lines still due in the current hunk, per side: a hunk ends by its counts, not by the
    # look of a line (a removed "-- x" line reads "--- x", an empty context line may be "").
    old_left = new_left = 0
    definitions: re.Pattern[str] | None = None  # what defines a name in this file's language
    for line in lines:
        if old_left > 0 or new_left > 0:
            assert current is not None
            if line.startswith("\\"):
                continue
            if line.startswith("+"):
                current.added.add(new_line)
                current.additions += 1
                new_line, new_left = new_line + 1, new_left - 1
                if definitions is not None and (name := defined(definitions, line[1:])):
                    current.note(name, True)
            elif line.startswith("-"):
                current.deletions += 1
                old_left -= 1
                if definitions is not None and (name := defined(definitions, line[1:])):
                    current.note(name, False)
            else:
                new_line, old_left, new_left = new_line + 1, old_left - 1, new_left - 1
            continue
        if line.startswith("diff --git "):
            if current is not None:
                changes.append(current.build(header))
                old_modes.append(current.old_mode)
            current, header = _Builder(), _header_path(line)
            continue
        if current is None:
            continue
        if line.startswith("@@"):
            match = HUNK.match(line)
            if match:
                definitions = patterns_for(current.new or current.old or header)
                start, count = int(match.group(3)), int(match.group(4) or "1")
                old_left, new_left = int(match.group(2) or "1"), count
                new_line = start
                if count:
                    current.hunks.append((start, start + count - 1))
            continue
        if line.startswith("--- "):
            current.old = _strip_side(line[4:], "a/")
        elif line.startswith("+++ "):
            current.new = _strip_side(line[4:], "b/")
        elif line.startswith("rename from "):
            current.rename_from = unquote_path(line[len("rename from ") :])
        elif line.startswith("rename to "):
            current.rename_to = unquote_path(line[len("rename to ") :])
        elif line.startswith("new file mode"):
            current.new_file = True
        elif line.startswith("deleted file mode"):
            current.deleted_file = True
            current.old_mode = line[len("deleted file mode ") :].strip()
        elif line.startswith("Binary files ") or line.startswith("GIT binary patch"):
            current.binary = True
    if current is not None:
        changes.append(current.build(header))
        old_modes.append(current.old_mode)
    return _type_changes_merged(changes, old_modes)


def _kind(mode: str | None) -> str:
    return {"120000": "symlink", "160000": "submodule"}.get(mode or "", "file")


def _type_changes_merged(
    changes: list[FileChange], old_modes: list[str | None]
) -> list[FileChange]:
    """A path deleted and added in one patch (git's type change: a file that became a
    symlink, or the reverse) as one change of the path: its new side, status "modified"."""
    deleted = {c.path: i for i, c in enumerate(changes) if c.status == "deleted"}
    pairs = {
        deleted[c.path]: i
        for i, c in enumerate(changes)
        if c.status == "added" and c.path in deleted
    }
    merged = []
    for i, change in enumerate(changes):
        if i in pairs:
            continue  # the deleted side, folded into its addition
        old = next((j for j, k in pairs.items() if k == i), None)
        if old is not None:
            change = dataclasses.replace(
                change,
                status="modified",
                deletions=changes[old].deletions,
                replaced=_kind(old_modes[old]),
            )
        merged.append(change)
    return merged
