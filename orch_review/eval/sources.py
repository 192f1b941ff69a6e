"""Where a case's repository is on disk: a local path as given, a URL cloned once into a cache.

A URL is fetched once into a bare mirror in the cache (``eval-mirrors/``): every case of that
repository, in this run and the next, reads the same objects, and each case is reviewed in
a worktree of the mirror checked out at its head (:func:`case_worktree`), removed after. The
mirror is fetched again only when a case names a revision it does not have, so a rerun
reviews exactly the same commits. The mirror keeps the remote's branches as ``origin/NAME``,
as a clone does.

URLs come from case files, which anyone may have written: no ``ext::`` transport (it runs
commands), no option disguised as a URL, no hooks, no password prompt.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.environment import blanked_secrets
from orch_review.errors import GitError, UsageError
from orch_review.eval.cases import Case
from orch_review.programs import require_git
from orch_review.scope import git as gitops

if TYPE_CHECKING:
    import git

# Every git command that talks to a case's remote: no `ext::` transport, no hooks.
_UNTRUSTED = ("-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null")
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
_PULL_HEAD = re.compile(r"^origin/pull/(\d+)/head$")
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def cache_dir(env: Mapping[str, str]) -> Path:
    """orch-review's cache folder: $ORCH_REVIEW_CACHE_DIR, else $XDG_CACHE_HOME/orch-review."""
    explicit = env.get("ORCH_REVIEW_CACHE_DIR")
    if explicit:
        return Path(explicit)
    home = env.get("HOME") or str(Path.home())
    return Path(env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), "orch-review")


def is_url(repo: str) -> bool:
    """True for a clone URL (``scheme://...`` or ``user@host:path``), False for a path."""
    return bool(_URL.match(repo))


def clone_folder(cache: Path, url: str) -> Path:
    """The cache folder a URL is mirrored into: readable, and unique per URL."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").rsplit("/", 1)[-1]).strip(".-")
    stem = stem.removesuffix(".git")
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return cache / "eval-mirrors" / f"{stem[:40] or 'repo'}-{digest}.git"


def local_repository(
    case: Case, base_dir: Path, cache: Path, notice: Callable[[str], None] | None = None
) -> Path:
    """The repository to review ``case`` in: a local folder as given, or the bare mirror of
    a URL, made (``notice`` says so) or fetched when needed."""
    if not is_url(case.repo):
        path = (base_dir / case.repo).resolve()
        if not path.is_dir():
            raise UsageError(f"case `{case.id}`: repository {case.repo!r} is not a folder")
        return path
    folder = clone_folder(cache, case.repo)
    if not (folder / "HEAD").is_file():
        if notice is not None:
            notice(f"cloning {case.repo} into {folder}")
        _mirror(case.repo, folder)
    import git

    repo = git.Repo(folder)  # bare: GitPython, not open_repo, which wants a working tree
    repo.git.update_environment(**blanked_secrets())
    try:
        missing = [rev for rev in (case.base, case.head) if not gitops.has_commit(repo, rev)]
        if missing:
            specs = [spec for rev in missing if (spec := refspec(rev))]
            _fetch(repo, folder, specs, f"cannot fetch {case.repo} into {folder}")
    finally:
        repo.close()
    return folder


def _mirror(url: str, folder: Path) -> None:
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
        repo = git.Repo(partial)
        repo.git.update_environment(**blanked_secrets())
        try:
            repo.git.execute(["git", "config", "remote.origin.url", url])
            spec = "+refs/heads/*:refs/remotes/origin/*"
            repo.git.execute(["git", "config", "remote.origin.fetch", spec])
            _fetch(repo, partial, [], f"cannot clone {url}")
        finally:
            repo.close()
        partial.rename(folder)
    finally:
        tempdirs.remove(partial)


def _fetch(repo: git.Repo, folder: Path, refspecs: list[str], failure: str) -> None:
    """``git fetch origin`` (then ``refspecs``) in the mirror, as untrusted input allows."""
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
def case_worktree(repository: Path, rev: str) -> Iterator[Path]:
    """The folder to review a case at ``rev`` in: for a bare mirror, a new worktree checked
    out there (no hooks run), removed afterwards; any other repository as it is."""
    import git

    if not (repository / "HEAD").is_file() or (repository / ".git").exists():
        yield repository
        return
    top = tempdirs.make("eval-worktree")
    top.chmod(0o755)
    folder = top / "work"
    hooks_off = ("-c", "core.hooksPath=/dev/null")
    try:
        with _WORKTREES:
            mirror = git.Repo(repository)
            mirror.git.update_environment(**blanked_secrets())
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
            mirror = git.Repo(repository)
            mirror.git.update_environment(**blanked_secrets())
            try:
                if folder.exists():
                    mirror.git.execute(["git", "worktree", "remove", "--force", str(folder)])
                mirror.git.execute(["git", "worktree", "prune"])
            except git.GitCommandError:
                pass  # removed below; prune finds it gone next time
            finally:
                mirror.close()
            tempdirs.remove(top)


def refspec(rev: str) -> str | None:
    """What to fetch for a revision no branch of the clone has: a pull request's head (as
    ``origin/pull/N/head``) or a commit by its id; None for anything else."""
    match = _PULL_HEAD.match(rev)
    if match is not None:
        return f"+refs/pull/{match.group(1)}/head:refs/remotes/origin/pull/{match.group(1)}/head"
    return rev if _SHA.match(rev) else None
