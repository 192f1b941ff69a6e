"""Exactly the content under review, read-only, for agents to work in.

Agents run their bash commands there, never in the user's working tree: the index for
``--staged`` (staged content, not the working copy), the head commit for ``--base/--head``,
the working copy (tracked plus untracked, not ignored) otherwise. It is a commit in a small
private repository borrowing the user's objects, so ``git diff``/``git log -p`` work inside.

Every object a review makes (the tree of the working copy or index, its commit) goes to that
repository's own object directory: nothing is added to ``.git/objects``, and a read-only
``.git`` is fine. Agents see the commit either through a :class:`~.view.View` (bubblewrap:
the working tree with the differences mounted over it, O(change)) or, without a mount
namespace, in a full checkout written to :attr:`Snapshot.root` in the background.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs, waiting
from orch_review.errors import ScratchSpaceError
from orch_review.scope import farm
from orch_review.scope import git as gitops
from orch_review.scope.kept_tree import forget_kept_tree, kept_tree
from orch_review.scope.overlay import whiteouts_work
from orch_review.scope.resolve import Scope
from orch_review.scope.view import (
    MAX_MOUNTS,
    View,
    ViewPlan,
    build_view,
    farm_view,
    plan_view,
)

if TYPE_CHECKING:
    import git


def snapshot_commit(repo: git.Repo, scope: Scope, env: Mapping[str, str]) -> str:
    """The commit whose tree is the content under review (made if it does not exist, in the
    object directory ``repo`` writes to)."""
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
    to the directories alone: that is all removing the tree needs."""
    for current, _, files in os.walk(root):
        paths = [current] if writable else [current, *(os.path.join(current, f) for f in files)]
        for path in paths:
            if os.path.islink(path):
                continue
            mode = os.stat(path).st_mode
            os.chmod(path, (mode | stat.S_IWUSR) if writable else (mode & ~_WRITE_BITS))


class Snapshot:
    """The content under review: its commit, readable through git at once; a :attr:`view`
    for a mount namespace; or, once :meth:`use` asks for it, a full checkout at :attr:`root`
    (then :meth:`wait` before reading files there)."""

    def __init__(
        self,
        repo: git.Repo,
        root: Path,
        git_directory: Path,
        commit: str,
        content_id: str,
        view: View | None,
        writer: ThreadPoolExecutor,
        indexed: Future[None],
        blobs: gitops.BlobReader | None = None,
        under_review: Collection[str] = (),
        listing: gitops.TreeListing | None = None,
    ) -> None:
        self._repo = repo
        self._listing = listing
        self._blobs = blobs
        self._under_review = under_review
        self._ids: dict[str, str] | None = None  # path under review -> blob id, once asked
        self._indexed = indexed
        self._git_directory = git_directory
        self._writer = writer
        self._lock = threading.Lock()
        self._written: Future[None] | None = None
        self._callbacks: list[Callable[[BaseException | None], None]] = []
        self.root = root
        self.commit = commit
        self.content_id = content_id
        self.view = view

    @property
    def repo(self) -> git.Repo:
        """The user's repository, opened so that this snapshot's commit is readable too."""
        return self._repo

    def use(self, mounted: bool) -> None:
        """Say how agents will see the content: through :attr:`view` (``mounted``: in a
        mount namespace that applies it), else in a full checkout, started now."""
        with self._lock:
            if self._written is not None:
                return
            if mounted and self.view is not None:
                self._written = self._indexed
            else:
                self._written = self._writer.submit(self._check_out)
            for callback in self._callbacks:
                self._notify(callback)

    def _notify(self, callback: Callable[[BaseException | None], None]) -> None:
        assert self._written is not None
        self._written.add_done_callback(lambda written: callback(written.exception()))

    def settle(self) -> None:
        """Nothing more will be asked: when :meth:`use` never was, write nothing."""
        with self._lock:
            if self._written is None:
                self._written = Future()
                self._written.set_result(None)
                for callback in self._callbacks:
                    self._notify(callback)

    def _check_out(self) -> None:
        try:
            gitops.check_out_private(self._repo, self._git_directory, self.root, self.commit)
            _chmod_tree(self.root, writable=False)
        except Exception as exc:  # git failing to write, or an OSError of our own
            raise _unwritable(self.root.parent, exc) from None

    def wait(self) -> None:
        """Return once the content is in place (the full checkout written, when one was
        asked for); raises what went wrong writing it."""
        with self._lock:
            written = self._written
        if written is not None:
            waiting.result(written)

    def on_written(self, callback: Callable[[BaseException | None], None]) -> None:
        """Call ``callback`` with None once the content is in place, or with what went
        wrong (on the thread that finished it)."""
        with self._lock:
            if self._written is None:
                self._callbacks.append(callback)
                return
        self._notify(callback)

    def read(self, path: str) -> bytes | None:
        """The content of ``path`` under review (from git, exact), None if it is no file."""
        if path == ".git" or path.startswith(".git/"):
            return None
        if self._blobs is None:
            return gitops.blob(self._repo, self.commit, path)
        oid = self._known_ids().get(path)
        if oid is not None:
            return self._blobs.read_object(oid)
        return self._blobs.read(self.commit, path)

    def blob_ids(self, paths: Collection[str]) -> dict[str, str]:
        """Path -> git blob id of each of ``paths`` that is a file under review."""
        known = self._known_ids()
        found = {p: known[p] for p in paths if p in known}
        rest = [p for p in paths if p not in known]
        if rest:
            listed = gitops.tree_blobs(self._repo, self.commit, rest)
            found.update({p: oid for p, (_, oid) in listed.items()})
        return found

    def _known_ids(self) -> dict[str, str]:
        """The blob ids of the files under review, listed once: a path looked up on its own
        scans every tree on its way, as long as the repository is wide."""
        with self._lock:
            if self._ids is None:
                if self._listing is not None:
                    listed = self._listing.blobs(self._under_review)
                else:
                    listed = gitops.tree_blobs(self._repo, self.commit, self._under_review)
                self._ids = {p: oid for p, (_, oid) in listed.items()}
            return self._ids

    def own_objects(self) -> bytes:
        """A pack of the objects this review made (none for a commit under review), so
        the content can be found again after the snapshot is gone."""
        return gitops.own_objects_pack(self._repo, self._git_directory / "objects")


# Free bytes below which a failed write is taken for a full filesystem.
_NEARLY_FULL = 1 << 20


def _unwritable(top: Path, exc: BaseException) -> ScratchSpaceError:
    """The error to show when the snapshot's checkout in ``top`` could not be written."""
    try:
        usage = shutil.disk_usage(top)
        full = usage.free < _NEARLY_FULL
    except OSError:
        full = False
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        full = True
    where = f"{top.parent} (TMPDIR)" if os.environ.get("TMPDIR") else str(top.parent)
    if full:
        why = "No space left on device"
    else:
        said = str(getattr(exc, "stderr", "") or exc).strip().splitlines()
        why = said[0].strip(" '") if said else type(exc).__name__
    return ScratchSpaceError(
        f"could not write the snapshot of the content under review to {where}: {why}; free "
        "space there, or set TMPDIR to a directory on a filesystem with room for a copy of "
        "the repository (with bubblewrap, only the changed files are copied)."
    )


@contextmanager
def snapshot(
    repo: git.Repo,
    scope: Scope,
    env: Mapping[str, str],
    *,
    overlay: Callable[[], bool] | None = None,
) -> Iterator[Snapshot]:
    """The snapshot of ``scope``'s content, read-only, removed afterwards (also on errors
    and Ctrl-C). Nothing is written to the user's repository. ``overlay``, asked only when a
    change is large enough for it to matter: whether the sandbox can lay the private copies
    over the working tree as an overlay."""
    with (
        _directory(scope.root) as top,
        ThreadPoolExecutor(1, thread_name_prefix="orch-review-snapshot") as writer,
        ThreadPoolExecutor(3, thread_name_prefix="orch-review-listing") as lister,
        contextlib.ExitStack() as held,
    ):
        root, git_dir, private = top / "content", top / "git", top / "private"
        private.mkdir()
        root.mkdir()
        gitops.init_private_repo(repo, git_dir, root)
        own = gitops.writing_objects_to(repo, git_dir / "objects")
        # The listings of the whole working tree run while the commit is made.
        if scope.source == "worktree" and scope.others is not None:
            untracked = lister.submit(list, scope.others)
        else:
            untracked = lister.submit(gitops.untracked_entries, own)
        # A commit's tree is listed once, for its submodules, the blob ids of many files
        # under review and a tree of links; a tree made now is asked about what it needs.
        listing = None
        if scope.head_commit is not None:
            listing = lister.submit(gitops.TreeListing, own, scope.head_commit)
        else:
            submodules = lister.submit(gitops.submodules, own, None)
        differ = lister.submit(_differences, own, scope)
        commit, indexed = _commit_and_index(own, scope, env, git_dir, root, writer)
        gitops.point_head(own, git_dir, root, commit)
        differences = waiting.result(differ)
        untracked_entries = waiting.result(untracked)
        listed = waiting.result(listing) if listing is not None else None
        submodule_paths = listed.submodules() if listed is not None else waiting.result(submodules)
        under_review = [f.path for f in scope.files if f.change is not None]
        plan = plan_view(
            own,
            commit,
            differ=differences,
            under_review=under_review,
            untracked_kept=scope.untracked,
            untracked=untracked_entries,
            submodules=submodule_paths,
            listing=listed,
        )
        view = _view(
            own,
            plan,
            commit,
            root,
            private,
            git_dir,
            under_review,
            differences,
            listed,
            held,
            overlay=overlay,
        )
        digest = hashlib.sha256(f"{scope.source}\0{gitops.tree_of(own, commit)}".encode())
        blobs = gitops.BlobReader(own)
        reviewed = [f.path for f in scope.files]
        content = Snapshot(
            own,
            root,
            git_dir,
            commit,
            digest.hexdigest(),
            view,
            writer,
            indexed,
            blobs,
            reviewed,
            listed,
        )
        try:
            yield content
        finally:
            blobs.close()
            content.settle()
            with contextlib.suppress(BaseException):
                content.wait()  # the files stop changing before the directory is removed
        content.wait()  # a failure nobody waited for is still a failure


def _view(
    repo: git.Repo,
    plan: ViewPlan | None,
    commit: str,
    root: Path,
    private: Path,
    git_dir: Path,
    under_review: list[str],
    differ: list[str],
    listing: gitops.TreeListing | None,
    held: contextlib.ExitStack,
    *,
    overlay: Callable[[], bool] | None = None,
) -> View | None:
    """How bubblewrap shows the content: the plan's mounts when the review's shells pay
    little for them, else one tree of links shared by every shell when it costs less to
    make, or when mounts cannot show the content (too many, or a symbolic link in the way)
    in a repository not small enough to copy; None when neither can (the content is
    copied). Where mounting the private copies one by one costs, and ``overlay()`` says the
    sandbox can, they are laid as overlays: a mount or a few, whatever their number."""
    entries = None
    laid = whiteouts = False
    if plan is not None and overlay is not None:
        many = farm.mount_seconds(plan.mounts, len(under_review)) >= farm.WORTH_LISTING
        laid = (plan.mounts > MAX_MOUNTS or many) and plan.layerable and overlay()
        whiteouts = laid and plan.layered is not None and whiteouts_work(private)
    mounted = False  # the plan's mounts chosen over a tree of links
    if plan is None:
        # Mounts cannot show it: copying costs a file written per file of the repository,
        # a tree of links (at most) a link; worth it past a small repository.
        indexed = gitops.indexed_files(repo)
        if indexed is not None and indexed * farm.LINK_SECONDS < farm.WORTH_LISTING:
            return None
    elif (mounts := plan.mounts_with(overlay=laid, whiteouts=whiteouts)) <= MAX_MOUNTS:
        # Mounts, unless the tree costs clearly less: the tree is listed only when it may.
        cost = farm.mount_seconds(mounts, len(under_review))
        indexed = gitops.indexed_files(repo)
        likely = indexed is None or indexed * farm.LINK_SECONDS < cost
        if cost >= farm.WORTH_LISTING and likely:
            entries = _entries(repo, commit, listing)
        mounted = entries is None or len(entries) * farm.LINK_SECONDS >= cost
        if mounted and laid:  # the tree of links is not needed while overlays can be had
            forget_kept_tree(Path(repo.git_dir))
    if not mounted:
        if entries is None:
            entries = _entries(repo, commit, listing)
        tree = _tree(repo, commit, entries, private / "tree", [*differ, *under_review], held)
        if tree is not None:
            return farm_view(tree, repo, root=root, git_directory=git_dir)
        if plan is None or mounts > MAX_MOUNTS:
            return None
    assert plan is not None  # mounted, or a tree could not be made where mounts can show it
    return build_view(
        plan,
        repo,
        root=root,
        private_dir=private,
        git_directory=git_dir,
        overlay=laid,
        whiteouts=whiteouts,
    )


def _entries(
    repo: git.Repo, commit: str, listing: gitops.TreeListing | None
) -> list[tuple[str, str, str]]:
    """Every entry of ``commit``'s tree, from ``listing`` when it was listed already."""
    return listing.entries() if listing is not None else gitops.whole_tree(repo, commit)


def _tree(
    repo: git.Repo,
    commit: str,
    entries: list[tuple[str, str, str]],
    fresh: Path,
    copied: list[str],
    held: contextlib.ExitStack,
) -> Path | None:
    """The tree of links of ``entries`` (``commit``'s): the one kept in the git directory
    (held until ``held`` closes) when it can be had, else a new one at ``fresh``; None when
    neither can be made (the working tree is on another filesystem)."""
    work = gitops.work_tree(repo)
    kept = held.enter_context(
        kept_tree(
            repo,
            entries,
            work=work,
            git_directory=Path(repo.git_dir),
            private=copied,
            root_tree=gitops.tree_of(repo, commit),
        )
    )
    if kept is not None:
        return kept
    if farm.build_farm(repo, entries, work=work, farm=fresh, private=copied):
        return fresh
    return None


def _commit_and_index(
    repo: git.Repo,
    scope: Scope,
    env: Mapping[str, str],
    git_dir: Path,
    root: Path,
    writer: ThreadPoolExecutor,
) -> tuple[str, Future[None]]:
    """The snapshot's commit, and its index being made: for the working copy and the index,
    the copy of the user's index the tree was written from (its stat data match the working
    tree, so ``git status`` inside does not hash every file); for a commit, built on the
    writing thread from the user's index."""
    index = git_dir / "index"
    if scope.source == "commit" or not gitops.index_file(repo, env).is_file():
        commit = snapshot_commit(repo, scope, env)
        return commit, writer.submit(gitops.index_private, repo, git_dir, root, commit)
    untracked = list(scope.untracked) if scope.source == "worktree" else None
    tree = gitops.tree_in_index(repo, env, index, untracked, _maybe_modified(scope))
    commit = gitops.commit_tree(repo, tree, gitops.head_commit(repo), "orch-review snapshot")
    done: Future[None] = Future()
    done.set_result(None)
    return commit, done


def _maybe_modified(scope: Scope) -> set[str] | None:
    """For a change in the working copy, every tracked path whose working copy may differ
    from the index, as the scope found them; None when it does not know them all."""
    if scope.source != "worktree" or scope.compared is None:
        return None
    return set(scope.compared)


def _differences(repo: git.Repo, scope: Scope) -> list[str]:
    """Paths whose working copy differs from the content under review. A sparse checkout's
    files git keeps off the disk count: git compares them as if they were there."""
    sparse = sorted(gitops.skip_worktree_files(repo))
    if scope.source == "worktree":
        return sparse  # the content is made from the working copy
    if scope.source == "index":
        return sorted({*gitops.modified_files(repo), *sparse})
    assert scope.head_commit is not None
    return sorted({*gitops.differences_from(repo, scope.head_commit), *sparse})


class CheckedOut:
    """A review's content checked out again at :attr:`root`, and readable through git."""

    view: View | None = None

    def __init__(self, root: Path, repo: git.Repo, commit: str) -> None:
        self.root, self.commit = root, commit
        self._repo = repo

    @property
    def repo(self) -> git.Repo:
        """The user's repository, opened so that the commit's objects are readable."""
        return self._repo

    def use(self, mounted: bool) -> None:
        """Nothing to do: the checkout is written."""

    def settle(self) -> None:
        """Nothing to do: the checkout is written."""

    def read(self, path: str) -> bytes | None:
        """The content of ``path`` in the commit, None if it is no file."""
        if path == ".git" or path.startswith(".git/"):
            return None
        return gitops.blob(self._repo, self.commit, path)

    def blob_ids(self, paths: Collection[str]) -> dict[str, str]:
        """Path -> git blob id of each of ``paths`` that is a file of the commit."""
        return {p: oid for p, (_, oid) in gitops.tree_blobs(self._repo, self.commit, paths).items()}


@contextmanager
def checkout(
    repo: git.Repo, commit: str, work_tree: Path, objects: bytes = b""
) -> Iterator[CheckedOut]:
    """A read-only temporary checkout of ``commit`` (a review's content, again, for a
    follow-up question), readable by others exactly when ``work_tree`` is. ``objects`` is the
    pack of the objects the review made (:meth:`Snapshot.own_objects`)."""
    with _directory(work_tree) as top:
        root, git_directory = top / "content", top / "git"
        root.mkdir()
        gitops.init_private_repo(repo, git_directory, root)
        own = gitops.writing_objects_to(repo, git_directory / "objects")
        if objects:
            gitops.unpack_into(own, objects)
        gitops.resolve_commit(own, commit)  # a GitError when it is gone
        gitops.point_head(own, git_directory, root, commit)
        gitops.check_out_private(own, git_directory, root, commit)
        _chmod_tree(root, writable=False)
        yield CheckedOut(root, own, commit)


@contextmanager
def _directory(work_tree: Path) -> Iterator[Path]:
    """An empty temporary directory, readable by others exactly when ``work_tree`` is,
    removed afterwards."""
    top = tempdirs.make("snapshot")  # swept by a later run if this process is killed
    try:
        # mkdtemp makes the directory private; let others read it exactly when they may read
        # the work tree itself (a sandbox may run agents as another user).
        shared = stat.S_IMODE(work_tree.stat().st_mode) & (
            stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
        )
        top.chmod(0o700 | shared)
        yield top
    finally:
        tempdirs.remove(top)  # read-only parts included
