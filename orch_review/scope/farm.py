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

import errno
import os
import stat
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.scope import git as gitops

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
    private = set(private)
    farm.mkdir()
    farm.chmod(0o755)
    (farm / ".git").mkdir()
    (farm / ".git").chmod(0o755)
    copies: list[tuple[str, Path]] = []
    modes: list[tuple[Path, int]] = []
    links: list[tuple[str, Path]] = []
    checked: dict[str, bool] = {"": True}
    top, source = str(farm), str(work)
    try:
        for mode, oid, path in entries:
            parts = path.split("/")
            if any(p in ("", ".", "..") for p in parts) or parts[0].lower() == ".git":
                continue  # no checkout writes these; neither does this
            target = f"{top}/{path}"
            if mode in ("040000", "160000"):
                os.mkdir(target)
                os.chmod(target, 0o755)
            elif mode == "120000":
                links.append((oid, Path(target)))
            elif mode in _MODES and (
                path in private or not _link(source, path, mode, target, checked)
            ):
                copies.append((oid, Path(target)))
                modes.append((Path(target), _MODES[mode]))
    except _OtherFilesystem:
        return False
    gitops.write_blobs(repo, copies)
    for copy, mode_bits in modes:
        copy.chmod(mode_bits)
    if links:
        scratch = farm.with_name(f"{farm.name}-links")
        scratch.mkdir()
        names = [(oid, scratch / str(n)) for n, (oid, _) in enumerate(links)]
        gitops.write_blobs(repo, names)
        for (_, link), (_, holder) in zip(links, names, strict=True):
            os.symlink(holder.read_bytes().decode("utf-8", "surrogateescape"), link)
    return True


def _link(work: str, path: str, mode: str, target: str, checked: dict[str, bool]) -> bool:
    """Hard-link the working copy of ``path`` at ``target`` when it is a regular file of
    ``mode`` reached through real directories only; False when it is not."""
    if not _real_directory(work, path.rpartition("/")[0], checked):
        return False
    source = f"{work}/{path}"
    try:
        st = os.lstat(source)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or bool(st.st_mode & stat.S_IXUSR) != (mode == "100755"):
        return False
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            raise _OtherFilesystem from None
        return False  # a file protected_hardlinks keeps from us, a full directory, ...
    return True


def _real_directory(work: str, directory: str, checked: dict[str, bool]) -> bool:
    """True when every component of ``directory`` in the working tree is a directory, not a
    symbolic link (so a link never reaches outside it)."""
    if directory in checked:
        return checked[directory]
    real = _real_directory(work, directory.rpartition("/")[0], checked)
    if real:
        try:
            real = stat.S_ISDIR(os.lstat(f"{work}/{directory}").st_mode)
        except OSError:
            real = False
    checked[directory] = real
    return real
