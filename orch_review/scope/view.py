"""The content under review shown without copying it: the working tree, read-only, with
private copies mounted over it and what the content does not hold taken away.

A mount namespace (bubblewrap) binds the user's working tree read-only where agents work,
then mounts over it: the snapshot's own ``.git``; a private, read-only copy (written from
git's blob) of every file under review and of every file whose working copy differs from
the content under review (a staged version, another commit's version). Directories that hold
what the content does not (untracked, ignored, staged deletions, submodule checkouts) or
lack what it holds (a file deleted but still staged, a commit's new directory) are rebuilt
on an empty read-only tmpfs from the tree's entries. Preparing it costs O(change), not
O(repository).

What this gives up against a full copy, and why it is still exact where it matters:

* files that are not under review and equal the content under review are the user's own
  files, read-only but live: an edit to one during the review is visible to agents. The
  files under review are private copies, and everything orch-review reads itself (line
  counts, snippets, journal keys) comes from git objects, never from those files;
* each mount slows the start of every shell (bwrap reads the mount table for each), so
  rebuilding to hide has a budget: past it, a hidden entry keeps its name, as an empty
  file or directory, its content out of reach.

Where bubblewrap can mount an overlay (0.11 and later, on Linux 5.11 and later for a user
who is not root), the private copies are not mounted one by one: they are written at their
own paths in one private directory, laid over the working tree as one read-only overlay at
the root. Where whiteouts can be made (a character device 0/0, which an overlay takes for
"absent"; any user may since Linux 5.8), that layer also holds one for each entry to hide
and the symbolic links the working tree lacks: nothing else is mounted but the snapshot's
``.git`` and submodules' checkouts, and preparing it costs what the change holds. Without
them, hidden entries are taken away as above, and where the root itself is rebuilt, one
overlay goes over each directory it binds that holds copies. Files under review are still
private copies; for the user's own files, the kernel leaves undefined what an overlay shows
while its layers change, so an edit during the review may or may not show, which is all
agents could rely on with a bound file too.

When the difference cannot be shown this way (a symbolic link in the way of a mount, a file
where the content has a directory, too many mounts), there is no view: the snapshot is
written out whole, as without bubblewrap.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.scope import git as gitops
from orch_review.scope.overlay import (
    REGULAR_MODES,
    Layered,
    layer_path,
    layered_plan,
    make_parents,
    write_layer,
)

if TYPE_CHECKING:
    import git

# Past a few hundred mounts, starting a sandbox slows down more than linearly (bwrap reads
# the whole mount table for each one): about 0.25 s at 200 mounts, 1 s at 400. Well before
# that, a review's shells share one tree of links instead (:mod:`.farm`); when none can be
# made, beyond this many mounts the content is copied instead.
MAX_MOUNTS = 500
# Mounts spent on rebuilding directories so that hidden entries are absent, not empty.
REBUILD_BUDGET = 100
_REBUILD_CANDIDATES = 500

# One mount step: ("bind", source, destination), ("tmpfs", destination), ("dir", destination),
# ("symlink", target, destination), ("readonly", destination) or ("overlay", lowest layer,
# ..., top layer, destination): a read-only overlay of the layers.
Step = tuple[str, ...]


@dataclass(frozen=True)
class View:
    """How a mount namespace shows the content under review at ``root``: ``steps`` in order,
    then ``extra`` directories (that git inside needs) read-only at their own path."""

    root: Path  # where agents' shells start
    steps: tuple[Step, ...]
    extra: tuple[Path, ...]


class _NoView(Exception):
    """The difference cannot be shown with mounts over the working tree."""


@dataclass(frozen=True)
class ViewPlan:
    """What the content under review needs over the working tree, relative paths."""

    private: dict[str, tuple[str, str]]  # path -> (mode, blob id): a private copy
    hidden_files: tuple[str, ...]
    hidden_dirs: tuple[str, ...]
    rebuilt: dict[str, list[tuple[str, str, str]]]  # directory -> its (mode, id, name) entries
    layered: Layered | None = None  # the same as one layer with whiteouts, where it can be

    @property
    def mounts(self) -> int:
        """How many mounts each shell's start makes to show this plan."""
        return self.mounts_with(overlay=False)

    def mounts_with(self, *, overlay: bool, whiteouts: bool = False) -> int:
        """How many mounts each shell's start makes to show this plan; with ``overlay`` (see
        :func:`build_view`), none for the private copies but one at the root, and with
        ``whiteouts`` too, none for what is hidden but submodules' checkouts."""
        if overlay and whiteouts and self.layered is not None:
            return len(self.layered.emptied) + 4
        count = len(self.hidden_files) + len(self.hidden_dirs) + 3
        count += sum(len(entries) + 2 for entries in self.rebuilt.values())
        if overlay and self.layerable:
            return count + (0 if "" in self.rebuilt else 1)
        return count + len(self.private)

    @property
    def layerable(self) -> bool:
        """Whether the private copies can be laid as overlays: every path one that a layer
        may hold."""
        return all(layer_path(path) for path in self.private)


def plan_view(
    repo: git.Repo,
    commit: str,
    *,
    differ: Iterable[str],
    under_review: Iterable[str],
    untracked_kept: Iterable[str],
    untracked: Iterable[str],
    submodules: Iterable[str],
    listing: gitops.TreeListing | None = None,
) -> ViewPlan | None:
    """What must be mounted over the working tree to show ``commit``'s tree, or None when
    mounts cannot show it (however many: :attr:`ViewPlan.mounts` says). ``differ`` lists
    the paths whose working copy differs from it (:func:`~.git.differences_from`; none for
    a tree made from the working tree, whose untracked files kept are ``untracked_kept``);
    ``untracked`` lists the working tree's untracked and ignored entries
    (:func:`~.git.untracked_entries`), ``submodules`` the content's submodules; ``listing``,
    when given, is ``commit``'s tree listed."""
    work = gitops.work_tree(repo)
    try:
        if _kind(work, ".git") is None:  # a repository kept elsewhere (GIT_DIR)
            return None
        differ = set(differ)
        wanted = differ | set(under_review)
        if listing is not None:  # the commit's tree, listed already
            entries = listing.blobs(wanted)
        else:
            entries = gitops.tree_blobs(repo, commit, wanted)
        private: dict[str, tuple[str, str]] = {}
        hidden_files: list[str] = []
        hidden_dirs: list[str] = []
        missing: list[str] = []
        links: dict[str, str] = {}
        for path in sorted(wanted):
            if path in entries:
                mode, oid = entries[path]
                kind = _kind(work, path)
                if kind is None:
                    missing.append(path)
                    if mode == "120000":
                        links[path] = oid
                elif mode not in REGULAR_MODES:  # a symbolic link: only where it is equal
                    if path in differ:
                        raise _NoView
                    continue
                elif kind != "file":
                    raise _NoView
                if mode in REGULAR_MODES:
                    private[path] = (mode, oid)
            elif path in differ:  # in the working tree (the index), not in the content
                kind = _kind(work, path)
                if kind == "file":
                    hidden_files.append(path)
                elif kind == "dir":
                    hidden_dirs.append(path)
        kept = set(untracked_kept)
        for path, kind in _untracked(untracked, work, kept):
            (hidden_dirs if kind == "dir" else hidden_files).append(path)
        whiteouts = (*hidden_files, *hidden_dirs)
        emptied: list[str] = []
        made_dirs: list[str] = []
        for path in submodules:
            kind = _kind(work, path)
            if kind == "dir":
                hidden_dirs.append(path)
                emptied.append(path)
            elif kind is None:
                missing.append(path)
                made_dirs.append(path)
            else:
                raise _NoView
        layered = layered_plan(private, whiteouts, links, made_dirs, emptied)
        rebuilt = _rebuilt_dirs(repo, commit, work, missing)
        hidden = [*hidden_files, *hidden_dirs]
        rebuilt.update(_rebuilt_to_hide(repo, commit, hidden, rebuilt))
        _check_rebuilt(work, rebuilt, private)
    except _NoView:
        return None
    hidden_files = [p for p in hidden_files if _parent(p) not in rebuilt]
    hidden_dirs = [p for p in hidden_dirs if _parent(p) not in rebuilt]
    return ViewPlan(private, tuple(hidden_files), tuple(hidden_dirs), rebuilt, layered)


def _rebuilt_to_hide(
    repo: git.Repo,
    commit: str,
    hidden: list[str],
    rebuilt: dict[str, list[tuple[str, str, str]]],
) -> dict[str, list[tuple[str, str, str]]]:
    """Directories to rebuild so that what they must hide is absent, not an empty entry:
    shallow ones first (the top of the tree is what everyone looks at), each while the
    mounts they add up to fit in :data:`REBUILD_BUDGET`; the rest is hidden under empty
    entries."""
    by_parent: dict[str, int] = {}
    for path in hidden:
        parent = _parent(path)
        if parent not in rebuilt:
            by_parent[parent] = by_parent.get(parent, 0) + 1
    candidates = sorted(by_parent, key=lambda d: (d.count("/") if d else -1, d))
    candidates = candidates[:_REBUILD_CANDIDATES]
    if not candidates:
        return {}
    listing = gitops.directory_entries(repo, commit, candidates)
    used = 0
    chosen: dict[str, list[tuple[str, str, str]]] = {}
    for directory in candidates:
        extra = len(listing[directory]) + 2 - by_parent[directory]
        if used + extra <= REBUILD_BUDGET:
            chosen[directory] = listing[directory]
            used += extra
    return chosen


def _check_rebuilt(
    work: Path, rebuilt: dict[str, list[tuple[str, str, str]]], private: Collection[str]
) -> None:
    """_NoView unless every entry a rebuilt directory takes from the working tree is there,
    of the same kind."""
    for directory, entries in rebuilt.items():
        for mode, _, name in entries:
            path = f"{directory}/{name}" if directory else name
            if path in rebuilt or path in private or mode in ("120000", "160000"):
                continue
            if _kind(work, path) != ("dir" if mode == "040000" else "file"):
                raise _NoView


def _rebuilt_dirs(
    repo: git.Repo, commit: str, work: Path, missing: list[str]
) -> dict[str, list[tuple[str, str, str]]]:
    """The directories to rebuild from the tree so that ``missing`` paths can appear: for
    each, the nearest one on disk and every one below it on the way."""
    dirs: set[str] = set()
    for path in missing:
        parts = path.split("/")[:-1]
        for depth in range(len(parts), -1, -1):
            directory = "/".join(parts[:depth])
            dirs.add(directory)
            if _kind(work, directory) == "dir":
                break
    if not dirs:
        return {}
    listing = gitops.directory_entries(repo, commit, sorted(dirs))
    return {d: listing.get(d, []) for d in dirs}


def _kind(work: Path, path: str) -> str | None:
    """ "file", "dir" or None (absent) for a path of the working tree; _NoView for a symbolic
    link or anything else a mount cannot go over or through."""
    current = work
    for part in path.split("/")[:-1] if path else []:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISDIR(mode):
            raise _NoView
    try:
        mode = os.lstat(work / path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    raise _NoView


def _untracked(entries: Iterable[str], work: Path, kept: set[str]) -> list[tuple[str, str]]:
    """Untracked and ignored entries of the working tree to hide, with their kind: whole
    directories where they hold nothing the content keeps."""
    kept_dirs = {p.rsplit("/", i)[0] for p in kept for i in range(1, p.count("/") + 1)}
    return _hidden(work, (entry.rstrip("/") for entry in entries), kept, kept_dirs)


def _hidden(
    work: Path, paths: Iterable[str], kept: set[str], kept_dirs: set[str]
) -> list[tuple[str, str]]:
    """Those of ``paths`` to hide; a directory that holds kept files is looked into, and its
    other entries hidden."""
    hidden: list[tuple[str, str]] = []
    for path in paths:
        if path in kept:
            continue
        if path in kept_dirs:
            inside = (f"{path}/{entry.name}" for entry in os.scandir(work / path))
            hidden += _hidden(work, inside, kept, kept_dirs)
            continue
        kind = _kind(work, path)
        if kind is not None:
            hidden.append((path, kind))
    return hidden


def build_view(
    plan: ViewPlan,
    repo: git.Repo,
    *,
    root: Path,
    private_dir: Path,
    git_directory: Path,
    overlay: bool = False,
    whiteouts: bool = False,
) -> View:
    """Write the plan's private copies under ``private_dir`` (read-only) and return the view
    of ``root``: the working tree, the snapshot's git directory as its ``.git``, then the
    copies and hidden entries. With ``overlay`` (the sandbox can mount one), the copies are
    written at their own paths in one directory, laid over the working tree by one overlay
    at the root, or, where the root is rebuilt, by one over each directory it binds that
    holds copies (see :attr:`ViewPlan.layerable`). With ``whiteouts`` too (they can be made:
    :func:`~.overlay.whiteouts_work`), what is hidden is in that layer as well (see
    :func:`_layered_view`)."""
    work = gitops.work_tree(repo)
    if overlay and whiteouts and plan.layered is not None:
        return _layered_view(plan, plan.layered, repo, work, root, private_dir, git_directory)
    empty = private_dir / "empty"
    empty.write_bytes(b"")
    empty.chmod(0o444)
    empty_dir = private_dir / "empty-dir"
    empty_dir.mkdir()
    empty_dir.chmod(0o555)
    layer = private_dir / "layer" if overlay and plan.layerable else None
    if layer is not None:
        copies = {path: layer / path for path in plan.private}
        make_parents(layer, plan.private)
    else:
        copies = {path: private_dir / str(n) for n, path in enumerate(plan.private)}
    gitops.write_blobs(repo, [(plan.private[p][1], copy) for p, copy in copies.items()])
    for path, copy in copies.items():
        copy.chmod(REGULAR_MODES[plan.private[path][0]])
    links = [
        (oid, private_dir / f"link{n}")
        for n, (mode, oid, _) in enumerate(e for es in plan.rebuilt.values() for e in es)
        if mode == "120000"
    ]
    gitops.write_blobs(repo, links)
    targets = {oid: path.read_bytes().decode("utf-8", "surrogateescape") for oid, path in links}

    def at(path: str) -> str:
        return str(root / path) if path else str(root)

    steps: list[Step] = []
    readonly: list[Step] = []
    done: set[str] = set()

    def rebuild(directory: str) -> None:
        for mode, oid, name in plan.rebuilt[directory]:
            path = f"{directory}/{name}" if directory else name
            done.add(path)
            if mode == "040000" and path in plan.rebuilt:
                steps.append(("dir", at(path)))
                rebuild(path)
            elif mode == "160000":
                steps.append(("dir", at(path)))
            elif mode == "040000" and layer is not None and (layer / path).is_dir():
                steps.append(("overlay", str(work / path), str(layer / path), at(path)))
            elif mode == "040000":
                steps.append(("bind", str(work / path), at(path)))
            elif mode == "120000":
                steps.append(("symlink", targets[oid], at(path)))
            elif path in copies:
                steps.append(("bind", str(copies[path]), at(path)))
            else:
                steps.append(("bind", str(work / path), at(path)))

    tops = sorted(d for d in plan.rebuilt if _parent(d) not in plan.rebuilt or d == "")
    if "" in plan.rebuilt:
        steps.append(("tmpfs", str(root)))
        readonly.append(("readonly", str(root)))
    elif layer is not None:
        steps.append(("overlay", str(work), str(layer), str(root)))
    else:
        steps.append(("bind", str(work), str(root)))
    git_steps, extra = _git_steps(work, root, private_dir, git_directory)
    steps += git_steps
    for directory in tops:
        if directory:
            steps.append(("tmpfs", at(directory)))
            readonly.append(("readonly", at(directory)))
        rebuild(directory)
    for path, copy in copies.items():
        # With a layer, every copy is shown: bound in a rebuilt directory, else in an overlay
        # (of the root, or of the nearest directory a rebuilt one binds).
        if path not in done and layer is None:
            steps.append(("bind", str(copy), at(path)))
    inside_rebuilt = {
        p for p in [*plan.hidden_files, *plan.hidden_dirs] if _parent(p) in plan.rebuilt
    }
    steps += [("bind", str(empty), at(p)) for p in plan.hidden_files if p not in inside_rebuilt]
    steps += [("bind", str(empty_dir), at(p)) for p in plan.hidden_dirs if p not in inside_rebuilt]
    extra += _object_dirs(gitops.objects_dir(repo))
    return View(root=root, steps=(*steps, *readonly), extra=tuple(extra))


def _git_steps(
    work: Path, root: Path, private_dir: Path, git_directory: Path
) -> tuple[list[Step], list[Path]]:
    """The mount that gives ``root`` the snapshot's git directory where the working tree has
    its ``.git`` (a directory, or a file naming one), and what it needs shown besides."""
    dot_git = work / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return [("bind", str(git_directory), str(root / ".git"))], []
    if dot_git.is_file() and not dot_git.is_symlink():
        gitfile = private_dir / "gitfile"
        gitfile.write_text(f"gitdir: {git_directory}\n", encoding="utf-8")
        gitfile.chmod(0o444)
        return [("bind", str(gitfile), str(root / ".git"))], [git_directory]
    raise FileNotFoundError(f"{dot_git} is neither a directory nor a file")


def _layered_view(
    plan: ViewPlan,
    layered: Layered,
    repo: git.Repo,
    work: Path,
    root: Path,
    private_dir: Path,
    git_directory: Path,
) -> View:
    """The content as one overlay at ``root``: the working tree below, and above it the
    layer :func:`~.overlay.write_layer` writes. Nothing else is mounted but the snapshot's
    ``.git`` and an empty directory over each submodule's checkout."""
    layer = private_dir / "layer"
    write_layer(repo, layer, private_dir, plan.private, layered)
    steps: list[Step] = [("overlay", str(work), str(layer), str(root))]
    git_steps, extra = _git_steps(work, root, private_dir, git_directory)
    if layered.emptied:
        empty_dir = private_dir / "empty-dir"
        empty_dir.mkdir()
        empty_dir.chmod(0o555)
        git_steps += [("bind", str(empty_dir), str(root / p)) for p in layered.emptied]
    extra += _object_dirs(gitops.objects_dir(repo))
    return View(root=root, steps=(*steps, *git_steps), extra=tuple(extra))


def farm_view(farm: Path, repo: git.Repo, *, root: Path, git_directory: Path) -> View:
    """The view of ``root`` that a tree made by :func:`~.farm.build_farm` at ``farm`` gives:
    the tree bound at ``root``, the snapshot's git directory at its ``.git``."""
    steps: tuple[Step, ...] = (
        ("bind", str(farm), str(root)),
        ("bind", str(git_directory), str(root / ".git")),
    )
    return View(root=root, steps=steps, extra=tuple(_object_dirs(gitops.objects_dir(repo))))


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _object_dirs(objects: Path) -> list[Path]:
    """The user's object directory and those it borrows from (one level, as git reads)."""
    found = [objects.resolve()]
    alternates = objects / "info" / "alternates"
    if alternates.is_file():
        for line in alternates.read_text("utf-8", "replace").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                other = (objects / line).resolve()
                if other.is_dir() and not any(other.is_relative_to(f) for f in found):
                    found.append(other)
    return found
