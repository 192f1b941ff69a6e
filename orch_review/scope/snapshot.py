"""A read-only materialization of exactly the content under review.

Agents run their bash commands here, never in the user's working tree: the index for
``--staged`` (staged content, not the working copy), the head commit for ``--base/--head``,
the working copy (tracked plus untracked, not ignored) otherwise. It is a small git
repository sharing the user's objects, so ``git diff``/``git log -p`` work inside it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.scope import git as gitops
from orch_review.scope.resolve import Scope

if TYPE_CHECKING:
    import git


def snapshot_commit(repo: git.Repo, scope: Scope, env: Mapping[str, str]) -> str:
    """The commit whose tree is the content under review (made if it does not exist)."""
    if scope.source == "commit":
        assert scope.head_commit is not None
        return scope.head_commit
    if scope.source == "index":
        tree = gitops.index_tree(repo, env)
    else:
        tree = gitops.working_tree_tree(repo, env, list(scope.untracked))
    return gitops.commit_tree(repo, tree, gitops.head_commit(repo), "orch-review snapshot")


_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


def _chmod_tree(root: Path, writable: bool) -> None:
    """Remove write permission from the work tree's files and directories, or give it back
    to the directories alone: that is all removing the tree needs.

    ``.git`` stays writable: git refreshes its index there, even for ``git diff``.
    """
    for current, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (current == str(root) and d == ".git")]
        paths = [current] if writable else [current, *(os.path.join(current, f) for f in files)]
        for path in paths:
            if os.path.islink(path):
                continue
            mode = os.stat(path).st_mode
            os.chmod(path, (mode | stat.S_IWUSR) if writable else (mode & ~_WRITE_BITS))


@dataclass(frozen=True)
class Snapshot:
    """The content under review, being written to ``root`` in the background: :meth:`wait`
    before reading anything there (its commit can be read through git at once)."""

    root: Path
    commit: str
    _written: Future[None]

    def wait(self) -> None:
        """Return once every file is in place; raises what went wrong writing them."""
        self._written.result()

    def on_written(self, callback: Callable[[BaseException | None], None]) -> None:
        """Call ``callback`` (on the writing thread) with None once every file is in place,
        or with what went wrong."""
        self._written.add_done_callback(lambda written: callback(written.exception()))


@contextmanager
def snapshot(repo: git.Repo, scope: Scope, env: Mapping[str, str]) -> Iterator[Snapshot]:
    """The snapshot of ``scope``'s content, read-only, removed afterwards (also on errors
    and Ctrl-C).

    Writing the files takes seconds for a large repository, so it runs on a thread of its
    own while the review starts: the first request does not need them.
    """
    commit = snapshot_commit(repo, scope, env)
    with (
        _directory(scope.root) as root,
        ThreadPoolExecutor(1, thread_name_prefix="orch-review-snapshot") as writer,
    ):
        written = writer.submit(_write, repo, commit, root)
        yield Snapshot(root, commit, written)
        written.result()  # a failure nobody waited for is still a failure
    # (On an error, leaving the writer's block waits for it: the files stop changing before
    # the directory is removed.)


@contextmanager
def checkout(repo: git.Repo, commit: str, work_tree: Path) -> Iterator[Path]:
    """A read-only temporary checkout of ``commit`` (a review's content, again, for a
    follow-up question), readable by others exactly when ``work_tree`` is."""
    with _directory(work_tree) as root:
        _write(repo, commit, root)
        yield root


@contextmanager
def _directory(work_tree: Path) -> Iterator[Path]:
    """An empty temporary directory, readable by others exactly when ``work_tree`` is,
    removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="orch-review-snapshot-"))
    try:
        # mkdtemp makes the directory private; let others read it exactly when they may read
        # the work tree itself (a sandbox may run agents as another user).
        shared = stat.S_IMODE(work_tree.stat().st_mode) & (
            stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
        )
        root.chmod(0o700 | shared)
        yield root
    finally:
        with contextlib.suppress(OSError):  # removal below does what it can
            _chmod_tree(root, writable=True)
        shutil.rmtree(root, ignore_errors=True)


def _write(repo: git.Repo, commit: str, root: Path) -> None:
    gitops.materialize(repo, commit, root)
    _chmod_tree(root, writable=False)
