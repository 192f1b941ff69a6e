"""Private copies of a revision's files, for code that must run on them (proofs).

A copy is written from git objects, never from the user's working tree, into a directory of
its own that every uid may read (a sandbox may drop to another uid) and nobody but orch-review
may write. Links that would lead out of the copy are left out.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from orch_review.scope import git as gitops

if TYPE_CHECKING:
    import git

_READABLE_DIR = 0o755
_READABLE_FILE = 0o644


class ScratchPathError(ValueError):
    """A path given for a file of the copy is not a plain path inside it."""


def export_tree(repo: git.Repo, commit: str, destination: Path) -> None:
    """Write the files of ``commit`` under ``destination`` (an existing empty directory)."""
    data = gitops.tree_archive(repo, commit)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for member in archive:
            try:
                archive.extract(member, destination, filter="data")
            except (tarfile.FilterError, OSError):
                continue  # a link out of the tree, or a name this file system refuses
    make_readable(destination)


def make_readable(root: Path) -> None:
    """Let any uid read ``root`` and walk its directories (a sandbox's own uid must)."""
    root.chmod(_READABLE_DIR)
    for directory, subdirectories, files in os.walk(root):
        for name in subdirectories:
            (Path(directory) / name).chmod(_READABLE_DIR)
        for name in files:
            path = Path(directory) / name
            if not path.is_symlink():
                mode = path.stat().st_mode
                path.chmod(_READABLE_FILE | (mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)))


def checked_relative(path: str) -> str:
    """``path`` as a plain relative POSIX path; ScratchPathError when it is absolute, climbs
    out (``..``), is empty or names something under ``.git``."""
    if not path or "\\" in path or "\0" in path or path.startswith("/"):
        raise ScratchPathError(f"{path!r} is not a relative path")
    parts = PurePosixPath(path).parts
    if not parts or any(p in ("..", ".") for p in parts) or parts[0] == ".git":
        raise ScratchPathError(f"{path!r} is not a plain path inside the project")
    return str(PurePosixPath(*parts))


def write_file(root: Path, path: str, data: bytes) -> None:
    """Write ``data`` at ``path`` in the copy at ``root``: never through a link, never over a
    file or directory that is there (ScratchPathError)."""
    relative = checked_relative(path)
    target = root / relative
    current = root
    for part in PurePosixPath(relative).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            raise ScratchPathError(f"{path!r} leads through a link or a file of the project")
        current.mkdir(mode=_READABLE_DIR, exist_ok=True)
        current.chmod(_READABLE_DIR)
    if os.path.lexists(target):
        raise ScratchPathError(f"{path!r} is a file of the project, not a new test file")
    target.write_bytes(data)
    target.chmod(_READABLE_FILE)


def replace_file(root: Path, path: str, data: bytes) -> None:
    """Overwrite the regular file ``path`` of the copy at ``root`` (a patch applied)."""
    relative = checked_relative(path)
    target = root / relative
    if target.is_symlink() or not target.is_file():
        raise ScratchPathError(f"{path!r} is not a regular file of the copy")
    for parent in target.relative_to(root).parents:
        if (root / parent).is_symlink():
            raise ScratchPathError(f"{path!r} leads through a link")
    mode = target.stat().st_mode
    target.write_bytes(data)
    target.chmod(stat.S_IMODE(mode))
