"""Objects orch-review writes: unreferenced snapshot commits, a private object directory."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.scope.git.repo import git_dir, work_tree
from orch_review.scope.git.trees import tree_entries

if TYPE_CHECKING:
    import git


# Commits orch-review writes for a snapshot are never referenced by a branch.
SNAPSHOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "orch-review",
    "GIT_AUTHOR_EMAIL": "orch-review@localhost",
    "GIT_COMMITTER_NAME": "orch-review",
    "GIT_COMMITTER_EMAIL": "orch-review@localhost",
}


FIXED_DATE = "946684800 +0000"  # 2000-01-01


def commit_tree(repo: git.Repo, tree: str, parent: str | None, message: str) -> str:
    """An unreferenced commit of ``tree`` on top of ``parent``."""
    args = ["git", "commit-tree", "--no-gpg-sign", tree, "-m", message]
    if parent is not None:
        args += ["-p", parent]
    return str(repo.git.execute(args, env=SNAPSHOT_IDENTITY)).strip()


def objects_dir(repo: git.Repo) -> Path:
    """The repository's own object directory (shared by its worktrees)."""
    return (git_dir(repo) / "objects").resolve()


def writing_objects_to(repo: git.Repo, objects: Path) -> git.Repo:
    """The same repository, opened again so that every object git writes for it lands in
    ``objects``; the repository's objects stay readable as alternates. A review adds nothing
    to ``.git/objects`` this way, and works when ``.git`` is read-only."""
    import git

    other = git.Repo(repo.git_dir, search_parent_directories=False)
    if other.working_tree_dir != repo.working_tree_dir:
        # A `.git` file (`git init --separate-git-dir`, a linked worktree): the git directory
        # alone does not say where the work tree is.
        other = git.Repo(work_tree(repo), search_parent_directories=False)
    # The inert settings of open_repo (no hook, no fsmonitor, no filter) come along.
    other.git.update_environment(**repo.git.environment())
    other.git.update_environment(
        GIT_OPTIONAL_LOCKS="0",
        GIT_OBJECT_DIRECTORY=str(objects),
        GIT_ALTERNATE_OBJECT_DIRECTORIES=str(objects_dir(repo)),
    )
    return other


def own_objects_pack(repo: git.Repo, objects: Path) -> bytes:
    """A pack of the loose objects in ``objects`` (a review's private object directory)."""
    ids = [
        f"{entry.name}{obj.name}"
        for entry in os.scandir(objects)
        if len(entry.name) == 2 and entry.is_dir()
        for obj in os.scandir(entry.path)
    ]
    listing = "".join(f"{oid}\n" for oid in ids).encode()
    with tempfile.TemporaryFile() as stdin:
        stdin.write(listing)
        stdin.seek(0)
        out = repo.git.execute(
            ["git", "pack-objects", "-q", "--stdout"],
            istream=stdin,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
    assert isinstance(out, bytes)
    return out


def unpack_into(repo: git.Repo, pack: bytes) -> None:
    """Add the objects of ``pack`` to the object directory ``repo`` writes to."""
    with tempfile.TemporaryFile() as stdin:
        stdin.write(pack)
        stdin.seek(0)
        repo.git.execute(["git", "unpack-objects", "-q"], istream=stdin)


def commit_with_file(repo: git.Repo, parent: str, path: str, content: bytes, message: str) -> str:
    """An unreferenced commit: ``parent``'s tree with ``path`` replaced by ``content``.

    Built in a private index, so neither the working tree nor the index is touched."""
    with tempdirs.directory("index") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp, "index"))}
        repo.git.execute(["git", "read-tree", parent], env=env)
        with tempfile.TemporaryFile() as stdin:
            stdin.write(content)
            stdin.seek(0)
            blob = str(repo.git.execute(["git", "hash-object", "-w", "--stdin"], istream=stdin))
        mode = tree_entries(repo, parent, [path]).get(path, ("100644", 0))[0]
        entry = f"{mode},{blob.strip()},{path}"
        repo.git.execute(["git", "update-index", "--cacheinfo", entry], env=env)
        tree = str(repo.git.execute(["git", "write-tree"], env=env)).strip()
    # Fixed dates: the same edit of the same parent is the same commit, run after run.
    dated = {**SNAPSHOT_IDENTITY, "GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}
    command = ["git", "commit-tree", "--no-gpg-sign", tree, "-p", parent, "-m", message]
    return str(repo.git.execute(command, env=dated)).strip()
