"""Reaching a remote: clone and fetch, the only git calls whose input may be a stranger's URL."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.errors import GitError
from orch_review.programs import require_git
from orch_review.scope.git.repo import work_tree

if TYPE_CHECKING:
    import git


# Cloning is the one git call whose input (a URL from an evaluation case file) is not ours:
# no `ext::` transport (it runs commands), no hooks, no password prompt.
_CLONE_CONFIG = ("-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null")


def clone(url: str, destination: Path) -> None:
    """Clone ``url`` into the new folder ``destination``; GitError naming the URL on failure."""
    import git

    if url.startswith("-"):
        raise GitError(f"not a repository URL: {url[:60]!r}")
    require_git()
    command = ["git", *_CLONE_CONFIG, "clone", "--quiet", "--", url, str(destination)]
    try:
        git.Git().execute(command, env={"GIT_TERMINAL_PROMPT": "0"})
    except git.GitCommandError as exc:
        raise GitError(f"cannot clone {url}: {str(exc.stderr).strip()[:300]}") from None
    except git.GitCommandNotFound:
        raise GitError("git is not installed or not on PATH: install git and try again.") from None


def fetch_origin(repo: git.Repo, refspecs: Collection[str] = ()) -> None:
    """Bring a clone's remote-tracking branches up to date (``git fetch origin``), then fetch
    ``refspecs`` too (pull request heads, commits no branch reaches)."""
    import git

    commands = [["git", *_CLONE_CONFIG, "fetch", "--quiet", "--", "origin"]]
    if refspecs:
        commands.append(["git", *_CLONE_CONFIG, "fetch", "--quiet", "--", "origin", *refspecs])
    for command in commands:
        try:
            repo.git.execute(command, env={"GIT_TERMINAL_PROMPT": "0"})
        except git.GitCommandError as exc:
            where = work_tree(repo)
            raise GitError(f"cannot fetch in {where}: {str(exc.stderr).strip()[:300]}") from None


def remote_url(repo: git.Repo, remote: str = "origin") -> str | None:
    """The URL of ``remote`` (hostile: it comes from .git/config), or None without one."""
    import git

    try:
        url = str(repo.git.remote("get-url", remote)).strip()
    except git.GitCommandError:
        return None
    return url or None


def fetch_refs(repo: git.Repo, remote: str, refspecs: Collection[str]) -> None:
    """Fetch ``refspecs`` from ``remote`` (no tags, no hooks, no ``ext::`` transport);
    GitError with git's words on failure."""
    import git

    command = ["git", *_CLONE_CONFIG, "fetch", "--quiet", "--no-tags", "--", remote, *refspecs]
    try:
        repo.git.execute(command, env={"GIT_TERMINAL_PROMPT": "0"})
    except git.GitCommandError as exc:
        detail = " ".join(str(exc.stderr).split())[:300]
        raise GitError(f"cannot fetch {' '.join(refspecs)} from {remote}: {detail}") from None
