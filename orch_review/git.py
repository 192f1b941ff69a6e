"""Every git operation orch-review performs, through GitPython."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.errors import GitError

if TYPE_CHECKING:
    import git


def open_repo(cwd: Path, env: Mapping[str, str] | None = None) -> git.Repo:
    """The repository containing ``cwd`` (honouring ``GIT_DIR`` when a hook sets it)."""
    import git

    git_dir = (env or {}).get("GIT_DIR")
    try:
        if git_dir:
            repo = git.Repo(Path(cwd, git_dir), search_parent_directories=False)
        else:
            repo = git.Repo(cwd, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(
            f"{cwd} is not inside a git repository: run orch-review from a repository "
            "(or `git init` one first)."
        ) from None
    except git.GitCommandNotFound:
        raise GitError("git is not installed or not on PATH: install git and try again.") from None
    if repo.bare:
        raise GitError(
            f"{repo.git_dir} is a bare repository: orch-review needs a working tree; run it in a "
            "clone with a checkout."
        )
    return repo


def work_tree(repo: git.Repo) -> Path:
    """The repository's top-level directory."""
    assert repo.working_tree_dir is not None  # open_repo refuses bare repositories
    return Path(repo.working_tree_dir)


def git_dir(repo: git.Repo) -> Path:
    """The common git directory (shared by worktrees), where orch-review keeps its journal."""
    return Path(repo.common_dir)


def tracked_files(repo: git.Repo, pathspecs: tuple[str, ...] = ()) -> list[str]:
    """Tracked files (repository-relative), narrowed by git pathspecs relative to the top."""
    out = repo.git.ls_files("-z", "--cached", "--full-name", "--", *pathspecs)
    return [p for p in out.split("\0") if p]


def head_description(repo: git.Repo) -> str:
    """The branch name, or the short commit for a detached HEAD, or "no commits yet"."""
    if not repo.head.is_valid():
        return "no commits yet"
    if repo.head.is_detached:
        return f"detached at {repo.head.commit.hexsha[:12]}"
    return f"{repo.active_branch.name} at {repo.head.commit.hexsha[:12]}"


def index_entries(repo: git.Repo) -> str:
    """``git ls-files -s`` output: mode, blob id and path of every index entry."""
    return str(repo.git.ls_files("-s", "-z"))


def modified_files(repo: git.Repo) -> list[str]:
    """Tracked files whose working copy differs from the index."""
    out = repo.git.diff("--name-only", "-z")
    return [p for p in out.split("\0") if p]
