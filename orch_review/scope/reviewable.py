"""Which files are worth reviewing, and why the others are skipped."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from orch_review.scope.ignore import NestedPatterns, PatternList

REVIEW_IGNORE_FILE = ".orch-reviewignore"
DEFAULT_MAX_FILE_SIZE = 1_000_000

# Lock files and generated or vendored code: reviewing them costs tokens and finds nothing
# the author can act on. (Not configurable yet: there is no `generated` setting.)
DEFAULT_GENERATED = (
    "*.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "go.sum",
    "*.min.js",
    "*.min.css",
    "*.map",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.generated.*",
    "vendor/",
    "node_modules/",
    "third_party/",
    "__snapshots__/",
)

# Source and text suffixes whose files are not read for a NUL byte when listing every file
# (`--all`): reading 100,000 files to find the rare binary .py costs more than the listing.
TEXT_SUFFIXES = frozenset(
    (
        "py",
        "pyi",
        "js",
        "jsx",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "go",
        "rs",
        "java",
        "kt",
        "kts",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "cs",
        "rb",
        "php",
        "swift",
        "scala",
        "sh",
        "bash",
        "md",
        "rst",
        "txt",
        "yml",
        "yaml",
        "toml",
        "json",
        "html",
        "css",
        "scss",
        "sql",
        "xml",
        "cfg",
        "ini",
    )
)

#: The skip reason of a file this process may not read; such a file counts as not covered.
UNREADABLE = "unreadable"

SUBMODULE_MODE = "160000"
SYMLINK_MODE = "120000"


@dataclass(frozen=True, slots=True)
class SkipSettings:
    """The configurable part of what is skipped: globs and the size limit."""

    exclude: tuple[str, ...] = ()
    generated: tuple[str, ...] = DEFAULT_GENERATED
    max_file_size: int = DEFAULT_MAX_FILE_SIZE


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file in scope that is not reviewed, with the reason shown by ``plan``."""

    path: str
    reason: str


@dataclass(frozen=True)
class ReviewRules:
    """Exclusions beyond git's ignore rules: ``.orch-reviewignore``, config and defaults."""

    review_ignore: NestedPatterns
    config_exclude: PatternList
    generated: PatternList
    max_file_size: int = DEFAULT_MAX_FILE_SIZE

    @classmethod
    def build(
        cls,
        review_ignore: Mapping[str, str],
        exclude: Iterable[str],
        generated: Iterable[str] = DEFAULT_GENERATED,
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    ) -> ReviewRules:
        """Rules from the ``.orch-reviewignore`` files (directory, "" for the top -> text)
        and config globs."""
        return cls(
            NestedPatterns(review_ignore),
            PatternList(exclude),
            PatternList(generated),
            max_file_size,
        )

    @cached_property
    def _by_name(self) -> tuple[tuple[PatternList | NestedPatterns, str], ...]:
        """The lists that have patterns, in order, each with the reason it gives."""
        lists: tuple[tuple[PatternList | NestedPatterns, str], ...] = (
            (self.review_ignore, f"excluded by {REVIEW_IGNORE_FILE}"),
            (self.config_exclude, "excluded by the `exclude` setting"),
            (self.generated, "lock file or generated/vendored code"),
        )
        return tuple((patterns, reason) for patterns, reason in lists if patterns)

    def excluded(self, path: str) -> str | None:
        """Why a path is excluded by name alone, or None."""
        for patterns, reason in self._by_name:
            if patterns.ignores(path):
                return reason
        return None

    def skip_reason(
        self,
        path: str,
        *,
        mode: str | None,
        size: int | None,
        binary: bool | Callable[[], bool],
        link_target: str | None = None,
        root: Path | None = None,
    ) -> str | None:
        """Why ``path`` is not reviewed, or None when it is reviewable.

        ``binary`` may be a function, called only when the name alone does not settle it.
        """
        if mode == SUBMODULE_MODE:
            return "submodule"
        if (
            mode == SYMLINK_MODE
            and link_target is not None
            and root is not None
            and not _inside(root, path, link_target)
        ):
            return f"symlink pointing outside the repository ({link_target})"
        reason = self.excluded(path)
        if reason is not None:
            return reason
        if binary if isinstance(binary, bool) else binary():
            return "binary"
        if size is not None and size > self.max_file_size:
            return f"larger than {self.max_file_size:,} bytes ({size:,})"
        return None


def _inside(root: Path, path: str, target: str) -> bool:
    resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
    if os.path.isabs(target):
        try:
            Path(target).resolve().relative_to(root.resolve())
        except ValueError:
            return False
        return True
    return not (resolved == ".." or resolved.startswith("../"))


BINARY_PROBE_BYTES = 8000


def looks_binary(data: bytes) -> bool:
    """Git's heuristic: a NUL byte in the first 8,000 bytes."""
    return b"\0" in data[:BINARY_PROBE_BYTES]


def file_looks_binary(path: str) -> bool:
    """:func:`looks_binary` for the file at ``path`` (False when it cannot be read)."""
    try:
        with open(path, "rb") as stream:
            return looks_binary(stream.read(BINARY_PROBE_BYTES))
    except OSError:
        return False


def has_text_suffix(path: str) -> bool:
    """True for a name ending in one of :data:`TEXT_SUFFIXES` (not read for NUL bytes)."""
    return path.rpartition(".")[2] in TEXT_SUFFIXES


def can_read(path: Path) -> bool:
    """False for a regular file this process may not read (mode 000, another user's file);
    True for anything else, a deleted file included (git records the deletion)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return True
    if not stat.S_ISREG(mode) or mode & 0o444 == 0o444:
        return True  # readable by everyone: no access check needed (the common case)
    return os.access(path, os.R_OK)
