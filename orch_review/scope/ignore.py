"""orch-review's own exclusions (``.orch-reviewignore`` files, the ``exclude`` setting, the
generated-file globs), read with gitignore syntax and git's rules through pathspec.

What git itself ignores is git's to say (see :func:`orch_review.scope.git.untracked_files`);
these patterns are not git's, and may come from a revision rather than the working tree.

The rules this module keeps from git: the last matching pattern wins; a deeper file's patterns
win over a shallower one's (so files are merged, deepest last, into one list); a trailing
``/`` restricts a pattern to directories; and nothing inside an excluded directory can be
included again, so directories are decided from the top down.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

_ANY_GROUP_NAME = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")
_AT_ANY_DEPTH = "^(?:.+/)?"  # how a pattern's regex begins when it matches a name at any depth
# Characters a directory name must have escaped to stand for itself in a pattern.
_GLOB_SPECIAL = re.compile(r"([\\*?\[\]!#])")


def _compiles(line: str) -> bool:
    """True when pathspec reads ``line`` as a pattern that can match (not blank, not a
    comment, not a lone ``/`` or ``!``); git skips a pattern it cannot parse, so do we."""
    import pathspec

    try:
        spec = pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error):
        return False
    return any(p.include is not None for p in spec.patterns)


def _body(line: str) -> str:
    """The pattern without its unescaped trailing spaces, as git reads it."""
    return line if line.endswith("\\ ") else line.rstrip()


def _for_directories(line: str) -> str:
    """``line`` as it applies to a directory: a trailing ``/`` only says "directories only",
    which a directory satisfies, so it is dropped."""
    body = _body(line)
    if body.endswith("/") and body.lstrip("!").strip("/"):
        return body[:-1]
    return line


def _for_files(line: str) -> str:
    """``line`` as it applies to files: unchanged, except that pathspec reads a trailing
    ``/**/`` ("every directory below") as ``/`` (the directory itself). A file lies below
    such a directory exactly when it lies below one a level down, which ``/*/`` says."""
    body = _body(line)
    stem = body.removesuffix("**/")
    if stem != body and (stem.lstrip("!") == "" or stem.endswith("/")):
        return stem + "*/"
    return line


def _rebased(line: str, directory: str) -> str:
    """``line`` from the ignore file of ``directory``, as a pattern of the top directory."""
    if not directory:
        return line
    negated = line.startswith("!")
    body = _body(line[1:] if negated else line)
    prefix = _GLOB_SPECIAL.sub(r"\\\1", directory)
    if "/" in body.rstrip("/"):  # anchored to its directory
        rebased = f"{prefix}/{body.removeprefix('/')}"
    else:  # matches a name at any depth below its directory
        rebased = f"{prefix}/**/{body}"
    return ("!" if negated else "") + rebased


def _any_pattern_search(spec: pathspec.PathSpec) -> Callable[[str], object] | None:
    """One regex search that finds a match exactly when some pattern of ``spec`` matches
    (the path or a directory of it), or None when the patterns' regexes cannot be joined.

    pathspec tries its patterns one by one; most paths match none, and one search of all
    patterns' public ``regex`` joined together settles them several times faster. Named
    groups are made anonymous so the regexes can be joined, and the prefix of patterns that
    match a name at any depth is searched for once; no verdict ever depends on this.
    """
    floating, others = [], []
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or not isinstance(regex, re.Pattern):
            continue
        source = _ANY_GROUP_NAME.sub("(?:", regex.pattern)
        if source.startswith(_AT_ANY_DEPTH):
            floating.append(source.removeprefix(_AT_ANY_DEPTH))
        else:
            others.append(f"(?:{source})")
    if floating:  # paths never start with "/": "^(?:.+/)?x" finds what "(?:^|/)x" finds
        others.insert(0, f"(?:^|/)(?:{'|'.join(floating)})")
    try:
        return re.compile("|".join(others)).search if others else None
    except re.error:
        return None


class _Rules:
    """Patterns relative to the top, in order of precedence (the last match wins)."""

    def __init__(self, lines: list[str]) -> None:
        import pathspec

        self._any = bool(lines)
        # One spec for files, one for directories: see _for_directories. For a path, pathspec
        # gives the last pattern matching the path itself if there is one, else the last one
        # matching one of its directories; as directories are decided first (from the top),
        # the second case only arises once they all turned out not excluded, when that last
        # pattern is necessarily a re-inclusion: "not excluded", which is git's answer too.
        self._files = pathspec.GitIgnoreSpec.from_lines([_for_files(x) for x in lines])
        self._dirs = pathspec.GitIgnoreSpec.from_lines([_for_directories(x) for x in lines])
        self._excluded_dirs: dict[str, bool] = {}  # many files share their directories
        self._may_match = _any_pattern_search(self._files)

    def __bool__(self) -> bool:
        return self._any

    def ignores(self, path: str) -> bool:
        """True if the patterns exclude ``path`` or one of its directories."""
        path = path.strip("/")
        if not self._any:
            return False
        if self._may_match is not None and self._may_match(path) is None:
            return False
        verdict = self._files.check_file(path).include
        if verdict is None:  # no pattern matches the path or any of its directories
            return False
        parent = path.rpartition("/")[0]
        return (bool(parent) and self._excluded(parent)) or bool(verdict)

    def _excluded(self, directory: str) -> bool:
        """True if the patterns exclude ``directory`` or one of its parents."""
        known = self._excluded_dirs.get(directory)
        if known is None:
            parent = directory.rpartition("/")[0]
            known = (bool(parent) and self._excluded(parent)) or bool(
                self._dirs.check_file(directory).include
            )
            self._excluded_dirs[directory] = known
        return known


class PatternList:
    """The patterns of one ignore file at the top (or a list of globs), in order."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._rules = _Rules([line for line in lines if _compiles(line)])

    def __bool__(self) -> bool:
        return bool(self._rules)

    def ignores(self, path: str) -> bool:
        """True if the patterns exclude ``path`` or one of its directories."""
        return self._rules.ignores(path)


class NestedPatterns:
    """Patterns from files of one name in any directories, read as git reads ``.gitignore``
    files: each file's patterns are relative to its directory, a deeper file's verdict wins,
    and nothing inside an excluded directory is included again."""

    def __init__(self, files: Mapping[str, str]) -> None:
        """``files``: directory ("" for the top) -> the text of its file."""
        top_down = sorted(files, key=lambda d: (d.count("/") + bool(d), d))
        lines = [
            _rebased(line, directory)
            for directory in top_down
            for line in files[directory].splitlines()
            if _compiles(line)
        ]
        self._rules = _Rules(lines)

    def __bool__(self) -> bool:
        return bool(self._rules)

    def ignores(self, path: str) -> bool:
        """True if the files exclude ``path`` or one of its directories."""
        return self._rules.ignores(path)
