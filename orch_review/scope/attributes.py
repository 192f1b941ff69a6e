"""What git attributes may decide about a file under review, and from where they are read.

A change must not take its own code out of the review: a pull request adding
``*.py -diff`` to ``.gitattributes`` makes ``git diff`` call every Python file binary, and
git reads attributes from the working tree, which is the pull request's head in CI. So
content alone decides what is binary (a NUL byte in the first 8,000 bytes, as git's own
heuristic), and the attributes orch-review does honour (``linguist-generated``,
``linguist-vendored``, ``filter=lfs``) are read from the trusted side: with ``--base``,
the base revision, the revision configuration comes from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.scope import git as gitops
from orch_review.scope.diff import FileChange, parse_patch
from orch_review.scope.reviewable import looks_binary

if TYPE_CHECKING:
    import git

HONOURED = ("linguist-generated", "linguist-vendored", "filter")
# The whole of a pointer file (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md):
# strict, so nothing but a pointer can pass for one.
LFS_POINTER = re.compile(
    rb"version https://git-lfs\.github\.com/spec/v1\n"
    rb"oid sha256:[0-9a-f]{64}\n"
    rb"size [0-9]+\n"
)

# Reads the first bytes of a file of the content under review; None when it has none.
ContentReader = Callable[[str], "bytes | None"]


def content_reader(repo: git.Repo, rev: str | None, limit: int) -> ContentReader:
    """A reader of the content under review: the tree of ``rev`` (":0" for the index), or the
    working tree when None. Symbolic links are not followed."""
    if rev is not None:
        return lambda path: gitops.blob_head(repo, rev, path, limit)
    root = gitops.work_tree(repo)

    def read(path: str) -> bytes | None:
        full = Path(root, path)
        if full.is_symlink() or not full.is_file():
            return None
        try:
            with full.open("rb") as stream:
                return stream.read(limit)
        except OSError:
            return None

    return read


def rediff_text_files(
    repo: git.Repo, changes: list[FileChange], revs: tuple[str, ...], read: ContentReader
) -> list[FileChange]:
    """``changes`` where every file git called binary but whose content is text (an
    attribute said ``-diff``, ``binary`` or named a binary diff driver) is diffed again as
    the text it is, so its lines are reviewed like any other."""
    texts = [c for c in changes if c.binary and c.status != "deleted" and _is_text(read(c.path))]
    if not texts:
        return changes
    specs = [f":(literal){p}" for c in texts for p in (c.path, c.old_path) if p is not None]
    lines = gitops.diff_lines(repo, *revs, "--text", "--", *specs)
    again = {c.path: c for c in parse_patch(lines)}
    redone = {c.path for c in texts}
    return [again.get(c.path, c) if c.path in redone else c for c in changes]


def _is_text(data: bytes | None) -> bool:
    return data is not None and not looks_binary(data)


def attribute_skips(
    repo: git.Repo,
    paths: Collection[str],
    trusted_rev: str | None,
    read: ContentReader,
) -> dict[str, str]:
    """Path -> why it is skipped, for the files the trusted attributes mark as generated or
    vendored, and the Git LFS pointers. ``trusted_rev``: where ``.gitattributes`` files are
    read (None: as git reads them, in the user's own working tree)."""
    reasons: dict[str, str] = {}
    for path, values in gitops.check_attributes(repo, paths, HONOURED, trusted_rev).items():
        if _true(values.get("linguist-generated")):
            reasons[path] = "generated code (linguist-generated attribute)"
        elif _true(values.get("linguist-vendored")):
            reasons[path] = "vendored code (linguist-vendored attribute)"
        elif values.get("filter") == "lfs" and is_lfs_pointer(read(path)):
            reasons[path] = "Git LFS pointer (the content is stored outside the repository)"
    return reasons


def _true(value: str | None) -> bool:
    return value in ("set", "true")


def is_lfs_pointer(data: bytes | None) -> bool:
    """True for the content of a Git LFS pointer file."""
    return data is not None and LFS_POINTER.fullmatch(data) is not None
