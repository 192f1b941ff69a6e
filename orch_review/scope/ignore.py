"""Git's ignore rules, evaluated with pathspec's gitwildmatch patterns.

Sources, lowest precedence first: the user's global excludes file, ``.git/info/exclude``,
then the ``.gitignore`` of every directory from the top down (patterns relative to their
directory). Within and across sources the last matching pattern wins, and, as in git, nothing
inside an ignored directory can be re-included.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

IGNORE_FILE = ".gitignore"
_DIR_MARK = "ps_d"  # pathspec's regex group for "a directory this pattern matched ends here"
# How pathspec's regex for a pattern without a leading "/" or inner "/" begins.
_FLOATING = "^(?:.+/)?"


def _mark_end(match: re.Match[str]) -> int | None:
    group = match.re.groupindex.get(_DIR_MARK)
    if group is None or match.start(group) == -1:
        return None
    return match.end(group)


def _matches(regex: re.Pattern[str], path: str, is_dir: bool) -> bool:
    """Whether a pattern matches ``path`` itself, as git's matcher decides.

    pathspec's regexes also match everything *below* a matched directory (the ``ps_d``
    group marks where that directory ends); git's rule that an ignored directory's content
    cannot be re-included needs the match of each path on its own.
    """
    if is_dir:
        full = regex.fullmatch(path + "/")
        if full is not None and _mark_end(full) == len(path) + 1:
            return True
    full = regex.fullmatch(path)
    if full is not None and _mark_end(full) is None:
        return True
    # Patterns such as "dir/**" or "**" match what lies below a prefix: a match of a leading
    # part of the path, ending at a "/", with no directory mark.
    found = regex.search(path)
    return found is not None and _mark_end(found) is None and found.end() < len(path)


def _unnamed(pattern: str) -> str:
    """A regex with its named groups made anonymous, so several can be joined."""
    return re.sub(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>", "(?:", pattern)


class PatternList:
    """The patterns of one ignore file (or list of globs), in order."""

    def __init__(self, lines: Iterable[str]) -> None:
        import pathspec

        # (regex, ignore (False: a "!" re-inclusion), directories only)
        self._patterns: list[tuple[re.Pattern[str], bool, bool]] = []
        for line in lines:
            if not line.strip() or line.startswith("#"):
                continue
            # As git does: a trailing "/" only restricts the pattern to directories. pathspec
            # folds it into the pattern, which turns "dir/**/" into "dir/" (dir itself).
            text = line if line.endswith("\\ ") else line.rstrip()
            dir_only = text.endswith("/") and text.strip("!/") != ""
            if dir_only:
                text = text[:-1]
            try:
                compiled = pathspec.GitIgnoreSpec.from_lines([text]).patterns
            except (ValueError, re.error):
                continue  # git skips a pattern it cannot parse, so do we
            for pattern in compiled:
                if pattern.regex is not None and pattern.include is not None:
                    self._patterns.append((pattern.regex, bool(pattern.include), dir_only))
        # One alternation of every pattern: a path it does not even *search*-match is matched
        # by no pattern, nor is any of its directories (a pattern's regex also matches what
        # lies below a directory it matches). That settles most paths with one regex call
        # instead of one per rule. Most patterns float ("*.lock" matches at any depth): their
        # shared "^(?:.+/)?" prefix is factored out, which halves the cost of that call.
        floating, anchored = [], []
        for regex, _, _ in self._patterns:
            body = _unnamed(regex.pattern)
            if body.startswith(_FLOATING):
                floating.append(body[len(_FLOATING) :])
            else:
                anchored.append(f"(?:{body})")
        if floating:
            anchored.insert(0, f"(?:^|/)(?:{'|'.join(floating)})")
        self._any = re.compile("|".join(anchored)) if anchored else None
        self._dir_verdicts: dict[str, bool | None] = {}
        self._inside: dict[str, bool] = {}  # directory -> it or a parent is excluded

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def _may_match(self, path: str, is_dir: bool) -> bool:
        if self._any is None:
            return False
        return bool(self._any.search(path) or (is_dir and self._any.search(path + "/")))

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        """The last matching pattern's verdict for ``path`` itself: True ignored, False
        re-included, None when no pattern matches."""
        if is_dir:
            if path not in self._dir_verdicts:  # many files share their directories
                self._dir_verdicts[path] = (
                    self._verdict(path, True) if self._may_match(path, True) else None
                )
            return self._dir_verdicts[path]
        return self._verdict(path, False) if self._may_match(path, False) else None

    def _verdict(self, path: str, is_dir: bool) -> bool | None:
        for regex, include, dir_only in reversed(self._patterns):
            if (is_dir or not dir_only) and _matches(regex, path, is_dir):
                return include
        return None

    def ignores(self, path: str) -> bool:
        """True if the patterns exclude ``path`` or one of its directories."""
        path = path.strip("/")
        if self._any is None or self._any.search(path) is None:
            return False
        parent = path.rpartition("/")[0]
        return (bool(parent) and self._excluded_directory(parent)) or bool(
            self._verdict(path, False)
        )

    def _excluded_directory(self, directory: str) -> bool:
        """True if the patterns exclude ``directory`` or one of its parents (cached: many
        files share their directories)."""
        known = self._inside.get(directory)
        if known is None:
            parent = directory.rpartition("/")[0]
            known = (bool(parent) and self._excluded_directory(parent)) or bool(
                self.verdict(directory, is_dir=True)
            )
            self._inside[directory] = known
        return known


def _read(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


class IgnoreRules:
    """Decides whether repository-relative paths are ignored, like ``git check-ignore``."""

    def __init__(
        self,
        root: Path,
        *,
        root_lines: Iterable[str] = (),
        per_directory_file: str | None = IGNORE_FILE,
        directory_patterns: Mapping[str, PatternList] | None = None,
    ) -> None:
        """``root_lines`` are root-relative patterns (global excludes, info/exclude), oldest
        first; ``per_directory_file`` names the file read in each directory (None: none);
        ``directory_patterns`` gives the files' patterns instead (directory, "" for the top)."""
        self._root = root
        self._base = PatternList(root_lines)
        self._file = per_directory_file
        self._dirs: dict[str, PatternList | None] = {
            directory: patterns or None
            for directory, patterns in (directory_patterns or {}).items()
        }

    @classmethod
    def for_repository(cls, root: Path, git_dir: Path, global_excludes: Path | None) -> IgnoreRules:
        """The rules git applies in the work tree ``root``."""
        lines: list[str] = []
        if global_excludes is not None:
            lines += _read(global_excludes)
        lines += _read(git_dir / "info" / "exclude")
        return cls(root, root_lines=lines)

    def _directory_patterns(self, directory: str) -> PatternList | None:
        if directory not in self._dirs:
            patterns = None
            if self._file is not None:
                patterns = PatternList(_read(self._root / directory / self._file)) or None
            self._dirs[directory] = patterns
        return self._dirs[directory]

    def _decide(self, path: str, is_dir: bool) -> bool | None:
        """The deepest matching rule's verdict for ``path`` itself (None: no rule matched)."""
        parts = path.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            directory = "/".join(parts[:depth])
            patterns = self._directory_patterns(directory)
            if patterns is None:
                continue
            relative = "/".join(parts[depth:])
            verdict = patterns.verdict(relative, is_dir)
            if verdict is not None:
                return verdict
        return self._base.verdict(path, is_dir)

    def is_ignored(self, path: str, is_dir: bool = False) -> bool:
        """True if git would ignore ``path`` (repository-relative, ``/``-separated)."""
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts)):
            if self._decide("/".join(parts[:depth]), is_dir=True):
                return True
        return bool(self._decide("/".join(parts), is_dir))

    def walk(self, directory: str) -> Iterator[str]:
        """Files under ``directory`` (repository-relative) that are not ignored; ignored
        directories are not entered, so an ignored build tree costs one check. A nested
        repository is yielded as its directory, not entered: git does not track its files."""
        top = self._root / directory if directory else self._root
        for current, dirs, files in os.walk(top):
            rel = Path(current).relative_to(self._root).as_posix()
            prefix = "" if rel == "." else rel + "/"
            # git records a link to a directory as a file, and matches it as one.
            links = [d for d in dirs if os.path.islink(os.path.join(current, d))]
            kept = [d for d in dirs if d != ".git" and d not in links]
            dirs[:] = []
            for name in kept:
                if self._decide(prefix + name, True):
                    continue
                if is_repository(Path(current, name)):
                    yield prefix + name
                else:
                    dirs.append(name)
            for name in sorted([*links, *files]):
                if not self._decide(prefix + name, False):
                    yield prefix + name


class NestedPatterns:
    """Patterns from files of one name in any directories, read as git reads ``.gitignore``
    files: each file's patterns are relative to its directory, a deeper file's verdict wins,
    and nothing inside an excluded directory is included again."""

    def __init__(self, files: Mapping[str, str]) -> None:
        """``files``: directory ("" for the top) -> the text of its file."""
        patterns = {directory: PatternList(text.splitlines()) for directory, text in files.items()}
        self._rules = IgnoreRules(Path(), per_directory_file=None, directory_patterns=patterns)
        self._any = any(patterns.values())

    def __bool__(self) -> bool:
        return self._any

    def ignores(self, path: str) -> bool:
        """True if the files exclude ``path`` or one of its directories."""
        return self._any and self._rules.is_ignored(path)


def is_repository(directory: Path) -> bool:
    """True if ``directory`` is the top of a (nested) git repository."""
    return (directory / ".git").exists()
