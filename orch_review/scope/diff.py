"""Parsing ``git diff`` output into what changed in each file, on the new side."""

from __future__ import annotations

import base64
import codecs
import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

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


def unquote_path(raw: str) -> str:
    """A path as git prints it in a patch header (C-quoted when unusual)."""
    if len(raw) >= 2 and raw.startswith('"') and raw.endswith('"'):
        data, _ = codecs.escape_decode(raw[1:-1].encode("utf-8"))
        return data.decode("utf-8", errors="surrogateescape")
    return raw


# git's short escapes (quote.c sq_lookup); every other control byte is written in octal.
_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v",
              "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}  # fmt: skip


def _c_escape(ch: str) -> str:
    if ch in _C_ESCAPES:
        return _C_ESCAPES[ch]
    if ch.isprintable():
        return ch
    # A byte that was not UTF-8 (decoded with surrogateescape) is that byte; any other
    # unprintable character is its UTF-8 bytes, as git writes them.
    raw = ch.encode("utf-8", "surrogateescape")
    return "".join(f"\\{byte:03o}" for byte in raw)


def line_ranges(hunks: Sequence[tuple[int, int]]) -> str:
    """``3-12, 40`` for new-side (start, end) hunks."""
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in hunks)


def quote_path(path: str) -> str:
    """``path`` on one line and in valid UTF-8: C-quoted as git shows it (``"caf\\351.py"``,
    ``"a\\tb"``) when it holds a control character or a byte that is not UTF-8; unchanged
    otherwise (printable non-ASCII names stay readable, as with ``core.quotePath=false``)."""
    if path.isprintable():
        return path
    return '"' + "".join(_c_escape(ch) for ch in path) + '"'


def is_utf8(text: str) -> bool:
    """False when ``text`` holds bytes that were not UTF-8 (surrogate escapes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class RealPath(str):
    """A file name as the file system has it: UTF-8, with each byte that is not UTF-8 as a
    surrogate escape (U+DC80-U+DCFF, as ``os.fsdecode`` gives it). :func:`json_safe` keeps
    it as it is and :func:`dumps` writes those escapes as ``\\udcXX``, so that
    ``os.fsencode(json.loads(...))`` is the name's exact bytes."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def path_for_json(path: str) -> RealPath:
    """``path`` as every JSON format carries it: the real name (:class:`RealPath`); JSON
    escapes its control characters, :func:`dumps` its bytes that are not UTF-8."""
    return RealPath(path)


def path_for_text(path: str) -> str:
    """``path`` for text that must be valid UTF-8 and has no escapes of its own (XML, a CI
    log's workflow commands): itself when it is UTF-8, else git's C-quoted form."""
    return path if is_utf8(path) else quote_path(path)


def dumps(data: Any, **options: Any) -> str:
    """``json.dumps(data, ensure_ascii=False, **options)`` with every lone surrogate (a byte
    of a :class:`RealPath` that is not UTF-8) written as a ``\\uXXXX`` escape: valid UTF-8
    text, and the exact name again for a reader that decodes with surrogate escapes."""
    import json

    text = json.dumps(data, ensure_ascii=False, **options)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def path_fields(path: str, key: str = "path") -> dict[str, str]:
    """``{key: path_for_json(path)}``, plus ``{key}_bytes_b64``, the name's exact bytes in
    base64, when the name is not UTF-8 (for readers whose JSON decoder refuses a lone
    surrogate)."""
    fields: dict[str, str] = {key: path_for_json(path)}
    if not is_utf8(path):
        raw = path.encode("utf-8", "surrogateescape")
        fields[f"{key}_bytes_b64"] = base64.b64encode(raw).decode("ascii")
    return fields


def json_safe(value: Any) -> Any:
    """JSON-ready ``value`` with every string valid UTF-8 (:func:`text_for_json`), file
    names (:class:`RealPath`) aside: :func:`dumps` writes those."""
    if isinstance(value, RealPath):
        return value
    if isinstance(value, str):
        return text_for_json(value)
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def text_for_json(text: str) -> str:
    """Free text (a description naming paths) with any non-UTF-8 byte written in octal."""
    if is_utf8(text):
        return text
    return "".join(_c_escape(ch) if not is_utf8(ch) else ch for ch in text)


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
