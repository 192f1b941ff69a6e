"""The agents' tree of links kept between reviews, so that it costs what changed since the
last review rather than a link and an unlink per file of the repository.

A change too large to mount file by file is shown to agents as a tree of hard links
(:mod:`.farm`). Made in the review's temporary directory and removed after it, that tree
costs about 1.8 s of CPU at 100,000 files, whatever the change. Kept in the working tree's
git directory (``orch-review-tree/``) and brought up to date by the next review, it costs a
read of each directory and a ``stat`` of each linked file (0.5 s at 100,000 files), and a
write only for what changed.

* **Nothing in it is trusted.** A link stays only where it is the working copy's own file
  (same device and inode); copies and symbolic links are written anew by every review;
  anything else is removed. A tree left half-made by a review that was killed, or changed by
  hand, is simply brought up to date.
* **A directory nothing happened to is not read.** Each directory's stamp (its tree's id,
  its private files, the (inode, modification time) of it and of the working tree's) is
  kept with the tree: a directory whose entries were not added, removed or replaced since,
  on either side, keeps its links unread. The stamps are hints checked against the live
  directories, whose times and inodes no restored cache can predict; a review killed midway
  changed the times of what it touched; a working tree whose git does not compare file
  modes (``core.fileMode`` false) gets every link checked.
* **One review at a time.** The tree is locked (``flock``) while a review shows it; a second
  review of the same working tree meanwhile makes its own in its temporary directory.
* **Only a real place.** The folder must be a real directory owned by the user (not a
  symbolic link, which a restored cache could plant), in a git directory that can be
  written, on the working tree's filesystem; otherwise the review makes its tree as before.
* **Not where the journal is cached.** The journal's folder (``orch-review/``) travels in CI
  caches; this tree, which would add a copy of every file to them, does not live there.

What a user sees of it: files of the working tree have a second link while the tree is
kept, and a file deleted from the working tree keeps its disk space until the next review
that brings the tree up to date, or that shows a large change as an overlay (bubblewrap 0.11
and later) and so removes the tree. Removing ``.git/orch-review-tree`` while no review runs is
safe: the next review that needs it makes it again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.scope import git as gitops
from orch_review.scope.farm import Stamp, update_farm
from orch_review.tempdirs import remove_tree

if TYPE_CHECKING:
    import git


def kept_place(git_directory: Path) -> Path:
    """Where the tree of the working tree whose own git directory is ``git_directory`` is
    kept, with its lock."""
    return git_directory / "orch-review-tree"


@contextlib.contextmanager
def kept_tree(
    repo: git.Repo,
    entries: list[tuple[str, str, str]],
    *,
    work: Path,
    git_directory: Path,
    private: Collection[str],
    root_tree: str,
) -> Iterator[Path | None]:
    """The kept tree of ``entries`` (as :func:`~.farm.build_farm` makes one), brought up to
    date and held for the block; None when it cannot be had (another review holds it, the
    git directory cannot be written, the working tree is on another filesystem).
    ``root_tree``: the id of the tree ``entries`` list."""
    place = kept_place(git_directory)
    lock = _locked(place)
    if lock is None:
        yield None
        return
    try:
        yield _brought_up_to_date(
            repo, entries, work=work, place=place, private=private, root_tree=root_tree
        )
    finally:
        os.close(lock)  # and with it the lock


def forget_kept_tree(git_directory: Path) -> None:
    """Remove the kept tree, once a review has shown a large change without it (as an
    overlay): its links would otherwise keep deleted files' space for good. Left alone while
    another review holds it, or where it is not a real directory of ours."""
    place = kept_place(git_directory)
    if not os.path.lexists(place / "tree"):
        return
    lock = _locked(place)
    if lock is None:
        return
    try:
        remove_tree(place / "tree")
        (place / "stamps.json").unlink(missing_ok=True)
    except OSError:
        pass  # a read-only git directory: the next review that can tries again
    finally:
        os.close(lock)


def _locked(place: Path) -> int | None:
    """The descriptor of ``place``'s lock file, locked; None when ``place`` is not a real
    directory of ours, cannot be made, or another review holds the lock."""
    try:
        with contextlib.suppress(FileExistsError):
            place.mkdir(mode=0o700)
        info = os.lstat(place)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            return None
        lock = _no_follow(str(place / "lock"), os.O_RDWR | os.O_CREAT)
    except OSError:
        return None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return None
    return lock


def _brought_up_to_date(
    repo: git.Repo,
    entries: list[tuple[str, str, str]],
    *,
    work: Path,
    place: Path,
    private: Collection[str],
    root_tree: str,
) -> Path | None:
    tree, kept = place / "tree", place / "stamps.json"
    try:
        if not tree.is_dir() or tree.is_symlink():
            remove_tree(tree)
            tree.mkdir()
        tree.chmod(0o755)
        stamps = _read_stamps(kept, work) if gitops.compares_file_modes(repo) else {}
        fresh = update_farm(
            repo,
            entries,
            work=work,
            farm=tree,
            private=private,
            root_tree=root_tree,
            stamps=stamps,
        )
        if fresh is not None:
            _write_stamps(kept, work, fresh)
            return tree
        remove_tree(tree)  # another filesystem: it would hold copies only
    except OSError:
        pass  # a full disk, a read-only directory: made in the temporary directory instead
    return None


def _read_stamps(kept: Path, work: Path) -> dict[str, Stamp]:
    """The stamps the last update wrote for ``work``; none when there are none to read."""
    try:
        with open(kept, encoding="ascii", opener=_no_follow) as stream:
            data = json.load(stream)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("work") != os.fsdecode(work):
        return {}
    stamps = data.get("stamps")
    if not isinstance(stamps, dict):
        return {}
    return {
        directory: (stamp[0], stamp[1], stamp[2], stamp[3], stamp[4], stamp[5], stamp[6])
        for directory, stamp in stamps.items()
        if isinstance(directory, str) and _is_stamp(stamp)
    }


def _is_stamp(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 7
        and all(isinstance(v, str) for v in value[:2])
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value[2:6])
        and isinstance(value[6], bool)
    )


def _write_stamps(kept: Path, work: Path, stamps: dict[str, Stamp]) -> None:
    # ASCII: a name that is not UTF-8 (a lone surrogate here) is escaped and comes back exact.
    text = json.dumps({"work": os.fsdecode(work), "stamps": stamps})
    partial = kept.with_name(f"{kept.name}.partial")
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()
    with open(partial, "w", encoding="ascii", opener=_no_follow) as stream:
        stream.write(text)
    os.replace(partial, kept)


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
