"""Bare mirrors of a remote repository, fetched as untrusted input allows, and throwaway
worktrees of them (``eval`` reviews the cases of a repository named by URL in these).

URLs come from case files, which anyone may have written: no ``ext::`` transport (it runs
commands), no option disguised as a URL, no hooks, no password prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.environment import blanked_secrets
from orch_review.errors import GitError
from orch_review.programs import require_git

if TYPE_CHECKING:
    import git

# Every git command that talks to a case's remote: no `ext::` transport, no hooks.
_UNTRUSTED = ("-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null")


def open_mirror(folder: Path) -> git.Repo:
    """The bare mirror at ``folder``, its git commands started with no secret in their
    environment (GitPython, not ``open_repo``, which wants a working tree)."""
    import git

    repo = git.Repo(folder)
    repo.git.update_environment(**blanked_secrets())
    return repo


def make_mirror(url: str, folder: Path) -> None:
    """A bare repository at ``folder`` holding ``url``'s branches as ``origin/NAME``; made
    aside and moved in place only once fetched, so a failed clone leaves nothing behind."""
    import git

    if url.startswith("-"):
        raise GitError(f"not a repository URL: {url[:60]!r}")
    require_git()
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempdirs.make("eval-mirror", str(folder.parent)))
    partial.chmod(0o755)  # as a clone is: a sandbox's other uid reads its objects
    try:
        git.Git().execute(["git", "init", "--quiet", "--bare", str(partial)], env=blanked_secrets())
        repo = open_mirror(partial)
        try:
            repo.git.execute(["git", "config", "remote.origin.url", url])
            spec = "+refs/heads/*:refs/remotes/origin/*"
            repo.git.execute(["git", "config", "remote.origin.fetch", spec])
            fetch_mirror(repo, [], f"cannot clone {url}")
        finally:
            repo.close()
        partial.rename(folder)
    finally:
        tempdirs.remove(partial)


def fetch_mirror(repo: git.Repo, refspecs: list[str], failure: str) -> None:
    """``git fetch origin`` (then ``refspecs``) in the mirror, as untrusted input allows;
    GitError starting with ``failure`` when it fails."""
    import git

    commands = [["git", *_UNTRUSTED, "fetch", "--quiet", "--", "origin"]]
    if refspecs:
        commands.append(commands[0] + refspecs)
    for command in commands:
        try:
            repo.git.execute(command, env={"GIT_TERMINAL_PROMPT": "0"})
        except git.GitCommandError as exc:
            raise GitError(f"{failure}: {str(exc.stderr).strip()[:300]}") from None


# `git worktree add` and `remove` change the mirror's worktree list: one at a time.
_WORKTREES = threading.Lock()


@contextmanager
def mirror_worktree(repository: Path, rev: str) -> Iterator[Path]:
    """A new worktree of the bare mirror ``repository`` checked out at ``rev`` (no hooks
    run), removed afterwards."""
    import git

    top = tempdirs.make("eval-worktree")
    top.chmod(0o755)
    folder = top / "work"
    hooks_off = ("-c", "core.hooksPath=/dev/null")
    try:
        with _WORKTREES:
            mirror = open_mirror(repository)
            try:
                add = ["git", *hooks_off, "worktree", "add", "--quiet", "--detach", "--"]
                mirror.git.execute([*add, str(folder), rev])
            except git.GitCommandError as exc:
                raise GitError(
                    f"cannot check out {rev} of {repository}: {str(exc.stderr).strip()[:300]}"
                ) from None
            finally:
                mirror.close()
        yield folder
    finally:
        with _WORKTREES:
            mirror = open_mirror(repository)
            try:
                if folder.exists():
                    mirror.git.execute(["git", "worktree", "remove", "--force", str(folder)])
                mirror.git.execute(["git", "worktree", "prune"])
            except git.GitCommandError:
                pass  # removed below; prune finds it gone next time
            finally:
                mirror.close()
            tempdirs.remove(top)
