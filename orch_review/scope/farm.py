"""One prepared directory for every agent of a review: the content under review as a tree of
hard links into the working tree, private copies where they differ.

A :class:`~.view.View` with many mounts slows every shell's start: bwrap walks the mount
table for each mount it makes, so a start costs more than linearly in the mounts, and
starts running at once contend for the kernel's mount lock. When a review's agents would pay
more for those mounts than the tree of links costs to make once, the view is the tree,
bound read-only at the content's root: two mounts per shell, however large the change.

The tree holds exactly the commit's entries: directories made here; a file equal to its
working copy (not under review, same kind and executable bit) as a hard link to it, so no
byte is copied; every other file (under review, differing, on no disk) a private read-only
copy written from git's blob; symbolic links and submodules as a checkout makes them. Like
the mounted view, a linked file is the user's own, live: an edit during the review shows,
while files under review and everything orch-review reads itself come from git. The links
are only ever seen through a read-only mount, and nothing here changes a linked file's mode.

It needs the working tree and the temporary directory on one filesystem; otherwise there is
no tree (see :func:`build_farm`). Making a link updates the linked file's change time
(ctime), which git's index records: the user's next ``git status`` reads those files once
to see that they are unchanged (nothing is reported as changed).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import time
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.scope import git as gitops
from orch_review.tempdirs import remove_tree

if TYPE_CHECKING:
    import git

# Measured on a 2-core machine (bench/sandbox_bench.py, and bwrap alone with N file mounts:
# 0.03 s at none, 0.07 s at 50, 0.16 s at 100, 0.25 s at 200, 0.98 s at 400): starting one
# sandbox costs about 0.8 ms per mount plus 4 µs per mount squared on top of its base,
# alone; more when shells start together. Making the tree costs up to LINK_SECONDS per
# entry (20-50 µs on an idle machine, 0.5 ms on a loaded one; the higher figure here, so
# the tree is chosen only where it wins clearly).
START_PER_MOUNT = 8e-4
START_PER_MOUNT_SQUARED = 4e-6
LINK_SECONDS = 2e-4
# Shells a review starts per file under review (agents, verifiers, retries), and at least.
SHELLS_PER_FILE = 0.5
MIN_SHELLS = 4
# Below this many seconds of mount cost in the whole review, the tree is not worth listing.
WORTH_LISTING = 0.5

_MODES = {"100644": 0o444, "100755": 0o555}
_DIRECTORY_MODES = ("040000", "160000")


def start_seconds(mounts: int) -> float:
    """What ``mounts`` add to the start of one sandbox, alone (the model above)."""
    return START_PER_MOUNT * mounts + START_PER_MOUNT_SQUARED * mounts * mounts


def mount_seconds(mounts: int, files: int) -> float:
    """What the mounts of a view cost the whole review of ``files`` files under review."""
    return max(MIN_SHELLS, files * SHELLS_PER_FILE) * start_seconds(mounts)


class _OtherFilesystem(Exception):
    """The working tree is not on the temporary directory's filesystem."""


def build_farm(
    repo: git.Repo,
    entries: list[tuple[str, str, str]],
    *,
    work: Path,
    farm: Path,
    private: Collection[str],
) -> bool:
    """Make the tree of ``entries`` (``gitops.whole_tree``) at the new directory ``farm``,
    with ``.git`` an empty directory to mount the snapshot's git directory on. ``private``
    paths are always copies. False (and ``farm`` left for the caller to remove) when no hard
    link can be made into ``work``, a folder on another filesystem."""
    farm.mkdir()
    farm.chmod(0o755)
    return update_farm(repo, entries, work=work, farm=farm, private=private) is not None


def update_farm(
    repo: git.Repo,
    entries: list[tuple[str, str, str]],
    *,
    work: Path,
    farm: Path,
    private: Collection[str],
    root_tree: str | None = None,
    stamps: Mapping[str, Stamp] | None = None,
) -> dict[str, Stamp] | None:
    """Bring the tree at ``farm`` (a directory, maybe empty) to exactly ``entries``: a link
    stays only where it is the working copy's own file (same device and inode, the right
    kind and executable bit); every copy and symbolic link is written anew, every other
    entry removed. Each directory is read once, here and in ``work``, so the links of an
    unchanged repository cost no write.

    ``root_tree`` (the id of the tree ``entries`` list; theirs are listed) and ``stamps``
    (what the last update returned) let a directory go unread: when its tree, its private
    files, and both its own directory and its working tree's (inode, modification time) are
    as stamped, no entry of either was added, removed or replaced since, and only its copies
    and symbolic links are written again. The stamps of this update, or None when no hard link
    can be made into ``work``, a folder on another filesystem."""
    children: dict[str, list[tuple[str, str, str]]] = {}
    # Directory -> its tree's id, in the listing's order: each after the one that holds it.
    directories: dict[str, str | None] = {"": root_tree}
    for mode, oid, path in entries:
        parent, _, name = path.rpartition("/")
        if name in ("", ".", "..") or name.lower() == ".git" or path[0] == "/":
            continue  # no checkout writes these; neither does this
        children.setdefault(parent, []).append((mode, oid, name))
        if mode in _DIRECTORY_MODES:
            directories[path] = oid
    copied: dict[str, set[str]] = {}
    for path in private:
        parent, _, name = path.rpartition("/")
        copied.setdefault(parent, set()).add(name)
    stamps = stamps or {}
    copies: list[tuple[str, Path]] = []
    modes: list[tuple[Path, int]] = []
    symlinks: list[tuple[str, Path]] = []
    made = {""}  # directories of the tree, made or kept
    real = {""}  # directories of the working tree reached through real directories only
    seen: dict[str, tuple[int, int] | None] = {}  # the working tree's directories, as read
    top, source = str(farm), str(work)
    device = os.lstat(work).st_dev
    nothing: set[str] = set()
    try:
        for directory in directories:
            if directory not in made:
                continue  # named as a file first, or inside one, or no checkout's
            at = f"{top}/{directory}" if directory else top
            ours = copied.get(directory, nothing)
            listed = directory in real and directory in children
            seen[directory] = _unchanging(f"{source}/{directory}") if listed else None
            known = stamps.get(directory)
            if known is not None and known == _stamp(
                directories[directory], ours, seen[directory], _unchanging(at, racy=False), known
            ):
                _rewrite(children.get(directory, ()), ours, at, copies, modes, symlinks)
                for mode, _, name in children.get(directory, ()):
                    path = f"{directory}/{name}" if directory else name
                    if mode in _DIRECTORY_MODES:
                        made.add(path)
                        if stamps.get(path, _NO_STAMP)[-1]:
                            real.add(path)
                continue
            there = _listing(at)
            here = _listing(f"{source}/{directory}") if listed else {}
            done: set[str] = set()
            for mode, oid, name in children.get(directory, ()):
                if name in done:
                    continue  # a tree naming an entry twice: the first one counts
                done.add(name)
                old = there.pop(name, None)
                if mode in _MODES:
                    mine = here.get(name) if name not in ours else None
                    if _same_file(old, mine, mode, device):
                        continue
                    _remove(old)
                    target = f"{at}/{name}"
                    if mine is not None and _link(mine, mode, target):
                        continue
                    copies.append((oid, Path(target)))
                    modes.append((Path(target), _MODES[mode]))
                elif mode in _DIRECTORY_MODES:
                    path = f"{directory}/{name}" if directory else name
                    if old is None or not old.is_dir(follow_symlinks=False):
                        _remove(old)
                        os.mkdir(f"{at}/{name}")
                        os.chmod(f"{at}/{name}", 0o755)
                    made.add(path)
                    mine = here.get(name)
                    if mine is not None and mine.is_dir(follow_symlinks=False):
                        real.add(path)
                elif mode == "120000":
                    _remove(old)
                    symlinks.append((oid, Path(f"{at}/{name}")))
                else:
                    _remove(old)  # a mode no checkout writes
            if not directory:
                there.pop(".git", None)  # where the snapshot's git directory is mounted
            for old in there.values():
                _remove(old)
    except _OtherFilesystem:
        return None
    git_mount = farm / ".git"
    if not git_mount.is_dir() or git_mount.is_symlink():
        remove_tree(git_mount)
        git_mount.mkdir()
    git_mount.chmod(0o755)
    gitops.write_blobs(repo, copies)
    for copy, mode_bits in modes:
        copy.chmod(mode_bits)
    if symlinks:
        scratch = farm.with_name(f"{farm.name}-links")
        remove_tree(scratch)
        scratch.mkdir()
        try:
            names = [(oid, scratch / str(n)) for n, (oid, _) in enumerate(symlinks)]
            gitops.write_blobs(repo, names)
            for (_, link), (_, holder) in zip(symlinks, names, strict=True):
                os.symlink(holder.read_bytes().decode("utf-8", "surrogateescape"), link)
        finally:
            remove_tree(scratch)
    fresh: dict[str, Stamp] = {}
    for directory in made:
        at = f"{top}/{directory}" if directory else top
        stamp = _stamp(
            directories.get(directory),
            copied.get(directory, nothing),
            seen.get(directory),
            _unchanging(at, racy=False),
            None,
            directory in real,
        )
        if stamp is not None:
            fresh[directory] = stamp
    return fresh


# A directory's stamp: its tree's id, a digest of its private files' names, its working
# tree's directory and its own (inode, modification time in ns), whether the working tree's
# is reached through real directories only.
Stamp = tuple[str, str, int, int, int, int, bool]
_NO_STAMP: Stamp = ("", "", 0, 0, 0, 0, False)
# A directory modified this recently may change again within the same clock tick, which its
# modification time would not show: its stamp is not kept (as git treats "racy" files).
RACY_NS = 2_000_000_000


def _unchanging(directory: str, *, racy: bool = True) -> tuple[int, int] | None:
    """(inode, modification time in ns) of ``directory``, None when it is no directory (or,
    with ``racy``, was modified too recently to tell a later change by its time)."""
    try:
        st = os.lstat(directory)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or (racy and time.time_ns() - st.st_mtime_ns < RACY_NS):
        return None
    return st.st_ino, st.st_mtime_ns


def _stamp(
    tree: str | None,
    ours: Collection[str],
    work: tuple[int, int] | None,
    farm: tuple[int, int] | None,
    known: Stamp | None,
    real: bool | None = None,
) -> Stamp | None:
    """The stamp of a directory from what was just read, None when something is unknown.
    Compared with ``known``, the realness it recorded is taken as it was."""
    if tree is None or work is None or farm is None:
        return None
    names = hashlib.sha256("\0".join(sorted(ours)).encode("utf-8", "surrogateescape"))
    if real is None:
        real = known[-1] if known is not None else False
    return (tree, names.hexdigest(), *work, *farm, real)


def _rewrite(
    entries: Iterable[tuple[str, str, str]],
    ours: Collection[str],
    at: str,
    copies: list[tuple[str, Path]],
    modes: list[tuple[Path, int]],
    symlinks: list[tuple[str, Path]],
) -> None:
    """In a directory whose links need no look, remove its copies and symbolic links to be
    written again (nothing it holds but links is trusted)."""
    done: set[str] = set()
    for mode, oid, name in entries:
        if name in done or not ((mode in _MODES and name in ours) or mode == "120000"):
            continue
        done.add(name)
        target = f"{at}/{name}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        if mode == "120000":
            symlinks.append((oid, Path(target)))
        else:
            copies.append((oid, Path(target)))
            modes.append((Path(target), _MODES[mode]))


def _listing(directory: str) -> dict[str, os.DirEntry[str]]:
    """The entries of ``directory`` by name; none when it cannot be read (it is gone, or
    no directory)."""
    try:
        with os.scandir(directory) as entries:
            return {entry.name: entry for entry in entries}
    except OSError:
        return {}


def _same_file(
    old: os.DirEntry[str] | None, mine: os.DirEntry[str] | None, mode: str, device: int
) -> bool:
    """True when the tree's entry ``old`` is a link to the working copy ``mine`` (listed in
    the working tree, on ``device``) and that is a regular file of ``mode``'s executable
    bit. The inode numbers the directories list rule out most others without a ``stat``."""
    if old is None or mine is None or old.inode() != mine.inode():
        return False
    try:
        ours = old.stat(follow_symlinks=False)
    except OSError:
        return False
    return (
        ours.st_dev == device
        and ours.st_ino == mine.inode()
        and stat.S_ISREG(ours.st_mode)
        and bool(ours.st_mode & stat.S_IXUSR) == (mode == "100755")
    )


def _link(mine: os.DirEntry[str], mode: str, target: str) -> bool:
    """Hard-link the working copy ``mine`` (an entry of a real directory) at ``target``
    when it is a regular file of ``mode``; False when it is not, or cannot be linked."""
    try:
        st = mine.stat(follow_symlinks=False)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or bool(st.st_mode & stat.S_IXUSR) != (mode == "100755"):
        return False
    try:
        os.link(mine.path, target, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            raise _OtherFilesystem from None
        return False  # a file protected_hardlinks keeps from us, a full directory, ...
    return True


def _remove(entry: os.DirEntry[str] | None) -> None:
    """Remove what the tree holds at ``entry`` (nothing when None)."""
    if entry is None:
        return
    if entry.is_dir(follow_symlinks=False):
        remove_tree(Path(entry.path))
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.path)
