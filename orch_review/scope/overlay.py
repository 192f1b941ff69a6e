"""The content under review as one overlay layer over the working tree (bubblewrap 0.11 and
later): what the layer holds, and writing it.

One directory, written by the review in its own temporary directory, holds the private
copies at their own paths, the symbolic links and submodules' directories the working tree
lacks, and a whiteout (a character device 0/0, which overlayfs shows as absent) for each
entry the content does not hold. Laid over the working tree, it shows the content with one
mount, whatever the change. Every path comes from git (a hostile tree): one no layer may
hold, named twice, or on the way to another, means no layer (see :func:`layered_plan`), and
:mod:`.view` shows the content with mounts instead.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.scope import git as gitops

if TYPE_CHECKING:
    import git

# The read-only mode of a private copy of each mode of file git records.
REGULAR_MODES = {"100644": 0o444, "100755": 0o555}


@dataclass(frozen=True)
class Layered:
    """What one overlay layer holds besides the private copies, to show the content over
    the working tree with no other mount but for submodules' checkouts."""

    whiteouts: tuple[str, ...]  # working tree entries the content does not hold
    links: dict[str, str]  # path -> blob id: a symbolic link the working tree lacks
    made_dirs: tuple[str, ...]  # a submodule's empty directory the working tree lacks
    emptied: tuple[str, ...]  # a submodule's checkout, shown empty (a mount each)


def layered_plan(
    private: Collection[str],
    whiteouts: tuple[str, ...],
    links: dict[str, str],
    made_dirs: list[str],
    emptied: list[str],
) -> Layered | None:
    """The plan as one layer, or None where a layer cannot hold it: a path no layer may
    hold, one named twice or on the way to another (a hostile tree may do both), or a
    submodule's checkout inside an entry of the layer."""
    # A submodule's checkout is shown as an empty directory mounted over it, not removed.
    shown = [p for p in whiteouts if p not in emptied]
    entries = [*private, *links, *made_dirs, *shown]
    if not all(layer_path(p) for p in [*entries, *emptied]) or len(set(entries)) < len(entries):
        return None
    above = {p.rsplit("/", i)[0] for p in [*entries, *emptied] for i in range(1, p.count("/") + 1)}
    if any(p in above for p in entries) or not set(entries).isdisjoint(emptied):
        return None
    return Layered(tuple(shown), dict(links), tuple(made_dirs), tuple(emptied))


def write_layer(
    repo: git.Repo,
    layer: Path,
    scratch: Path,
    private: Mapping[str, tuple[str, str]],
    layered: Layered,
) -> None:
    """Write the new directory ``layer``: the ``private`` copies (path -> (mode, blob id))
    read-only at their own paths, the symbolic links and submodules' directories the working
    tree lacks, and a whiteout for each entry the content does not hold. ``scratch`` holds
    the links' targets on their way."""
    make_parents(layer, [*private, *layered.links, *layered.whiteouts, *layered.made_dirs])
    gitops.write_blobs(repo, [(oid, layer / path) for path, (_, oid) in private.items()])
    for path, (mode, _) in private.items():
        os.chmod(layer / path, REGULAR_MODES[mode])
    targets = [(oid, scratch / f"link{n}") for n, oid in enumerate(layered.links.values())]
    gitops.write_blobs(repo, targets)
    for path, (_, target) in zip(layered.links, targets, strict=True):
        os.symlink(target.read_bytes(), layer / path)
    for path in layered.made_dirs:
        os.mkdir(layer / path, 0o555)
        os.chmod(layer / path, 0o555)
    for path in layered.whiteouts:
        os.mknod(layer / path, stat.S_IFCHR | 0o600, os.makedev(0, 0))


def whiteouts_work(directory: Path) -> bool:
    """Whether a whiteout (a character device 0/0, which an overlay takes for "absent") can
    be made in ``directory``: any user may since Linux 5.8, where the filesystem and the
    seccomp policy allow it."""
    test = directory / "whiteout-test"
    try:
        os.mknod(test, stat.S_IFCHR | 0o600, os.makedev(0, 0))
    except OSError:
        return False
    test.unlink()
    return True


def layer_path(path: str) -> bool:
    """Whether ``path`` (from a tree: hostile) names a file inside an overlay's layer."""
    parts = path.split("/")
    return all(part not in ("", ".", "..", ".git") for part in parts) and "\0" not in path


def make_parents(layer: Path, paths: Iterable[str]) -> None:
    """The directories of ``paths`` inside ``layer`` (new), readable by the sandbox's user
    whoever it is (whatever the umask)."""
    top = str(layer)
    os.mkdir(top, 0o755)
    os.chmod(top, 0o755)
    made: set[str] = set()
    for path in paths:
        missing = []
        parent = _parent(path)
        while parent and parent not in made:
            missing.append(parent)
            made.add(parent)
            parent = _parent(parent)
        for directory in reversed(missing):
            os.mkdir(f"{top}/{directory}", 0o755)
            os.chmod(f"{top}/{directory}", 0o755)


def _parent(path: str) -> str:
    return path.rpartition("/")[0]
