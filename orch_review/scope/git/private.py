"""A private repository borrowing the user's objects, for a view of a snapshot."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.environment import without_secrets
from orch_review.errors import GitError
from orch_review.scope.git.index import index_file
from orch_review.scope.git.objects import objects_dir

if TYPE_CHECKING:
    import git


def _private_repo_env(git_directory: Path, work: Path, alternate: Path) -> dict[str, str]:
    """Every git variable set, so a hook's ``GIT_DIR``/``GIT_INDEX_FILE`` cannot redirect a
    command about a private repository to the user's."""
    return {
        "GIT_DIR": str(git_directory),
        "GIT_WORK_TREE": str(work),
        "GIT_INDEX_FILE": str(git_directory / "index"),
        "GIT_OBJECT_DIRECTORY": str(git_directory / "objects"),
        "GIT_COMMON_DIR": str(git_directory),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(alternate),
    }


def init_private_repo(repo: git.Repo, git_directory: Path, work: Path) -> None:
    """Make ``git_directory`` an empty repository for the work tree ``work`` (which gets a
    ``.git`` file naming it), borrowing ``repo``'s objects through ``objects/info/alternates``.
    No ``core.worktree`` is recorded: whatever directory shows ``work``'s content with that
    ``.git`` in it is the work tree."""
    object_format = str(repo.git.rev_parse("--show-object-format")).strip()
    init = ["git", "init", "-q", f"--separate-git-dir={git_directory}", str(work)]
    if object_format == "sha256":  # older gits, SHA-1 only, echo the unknown option back
        init.insert(3, "--object-format=sha256")
    # Run without the variables a hook sets: they would make git init the user's repository.
    env = {k: v for k, v in without_secrets(os.environ).items() if not k.startswith("GIT_")}
    inert = repo.git.environment().get("GIT_CONFIG_PARAMETERS")
    if inert:
        env["GIT_CONFIG_PARAMETERS"] = inert

    done = subprocess.run(init, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"could not create the snapshot's repository: {said}")
    alternates = git_directory / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text(str(objects_dir(repo)) + "\n", encoding="utf-8")
    # `git status` in a tree of links would otherwise read every linked file again: linking
    # changed their change time since the index copied from the user's was written.
    with (git_directory / "config").open("a", encoding="utf-8") as config:
        config.write("[core]\n\ttrustctime = false\n")


def point_head(repo: git.Repo, git_directory: Path, work: Path, commit: str) -> None:
    """Set the private repository's HEAD to ``commit``."""
    env = _private_repo_env(git_directory, work, objects_dir(repo))
    repo.git.execute(["git", "update-ref", "--no-deref", "HEAD", commit], env=env)


def index_private(repo: git.Repo, git_directory: Path, work: Path, commit: str) -> None:
    """Give the private repository the index of ``commit``'s tree, keeping the stat data of
    the user's index wherever the content is the same: ``git status`` in a view of the
    working tree then hashes only what differs, not every file."""
    import git

    env = _private_repo_env(git_directory, work, objects_dir(repo))
    user_index = index_file(repo, os.environ)
    if user_index.is_file():
        shutil.copy2(user_index, git_directory / "index")
        try:
            repo.git.execute(["git", "read-tree", "-m", commit], env=env)
            return
        except git.GitCommandError:
            pass  # a split or sparse index: start from the tree alone
    (git_directory / "index").unlink(missing_ok=True)
    repo.git.execute(["git", "read-tree", commit], env=env)


def check_out_private(repo: git.Repo, git_directory: Path, work: Path, commit: str) -> None:
    """Write every file of ``commit`` into ``work``, the private repository's work tree."""
    env = _private_repo_env(git_directory, work, objects_dir(repo))
    # A copy of a sparse checkout's index marks the files kept off its disk skip-worktree;
    # read-tree would leave them out here too, where every file must be written.
    listing = str(repo.git.execute(["git", "ls-files", "-z", "-t"], env=env))
    if listing.startswith("S ") or "\0S " in listing:
        (git_directory / "index").unlink(missing_ok=True)
    # checkout.workers=0: write files with one worker per core (git 2.32+; older gits ignore it).
    checkout = ["git", "-c", "checkout.workers=0", "read-tree", "-u", "--reset", commit]
    repo.git.execute(checkout, env=env)
