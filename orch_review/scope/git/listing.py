"""One listing of a whole tree, shared by everything a snapshot asks of it."""

from __future__ import annotations

import re
import threading
from collections.abc import Collection
from typing import TYPE_CHECKING

from orch_review.scope.git.trees import as_pathspecs, tree_blobs

if TYPE_CHECKING:
    import git

_SUBMODULE = re.compile(r"(?:^|\0)160000 [^\t]*\t([^\0]*)")
_NOT_BLOBS = ("040000", "160000")


class TreeListing:
    """Every entry of the tree of ``rev``, listed once (``ls-tree -r -t``): its submodules,
    the blob ids of more paths than are worth naming to git, and every entry for a tree of
    links. Each of those was a listing of its own, as long as the repository is large.
    Safe to share between threads."""

    def __init__(self, repo: git.Repo, rev: str) -> None:
        command = ["git", "ls-tree", "-r", "-t", "-z", "--full-tree", rev]
        self._raw = str(repo.git.execute(command))
        self._repo, self._rev = repo, rev
        self._entries: list[tuple[str, str, str]] | None = None
        self._lock = threading.Lock()

    def submodules(self) -> list[str]:
        """Paths of the submodules in the tree."""
        if "160000 commit " not in self._raw:
            return []  # most trees: one scan for the bytes, not the pattern at every entry
        return _SUBMODULE.findall(self._raw)

    def entries(self) -> list[tuple[str, str, str]]:
        """(mode, object id, path) of every entry, directories before what they hold."""
        with self._lock:
            if self._entries is None:
                found = []
                for entry in self._raw.split("\0"):
                    if entry:
                        meta, _, path = entry.partition("\t")
                        mode, _, oid = meta.split(" ", 2)
                        found.append((mode, oid, path))
                self._entries = found
            return self._entries

    def blobs(self, paths: Collection[str]) -> dict[str, tuple[str, str]]:
        """Path -> (mode, object id) of each of ``paths`` that is a file in the tree (as
        :func:`~.trees.tree_blobs`): asked of git by name when they are few, else picked out
        of the listing."""
        if as_pathspecs(paths) is not None:
            return tree_blobs(self._repo, self._rev, paths)
        wanted = set(paths)
        return {
            path: (mode, oid)
            for mode, oid, path in self.entries()
            if path in wanted and mode not in _NOT_BLOBS
        }
