"""Where a case's repository is on disk: a local path as given, a URL cloned once into a cache.

A URL is fetched once into a bare mirror in the cache (``eval-mirrors/``): every case of that
repository, in this run and the next, reads the same objects, and each case is reviewed in
a worktree of the mirror checked out at its head (:func:`case_worktree`), removed after. The
mirror is fetched again only when a case names a revision it does not have, so a rerun
reviews exactly the same commits. The mirror keeps the remote's branches as ``origin/NAME``,
as a clone does.

URLs come from case files, which anyone may have written: the git commands that fetch them
and check them out are in ``scope/git/mirror.py``, made safe for untrusted input.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from orch_review.errors import UsageError
from orch_review.eval.cases import Case
from orch_review.scope import git as gitops
from orch_review.scope.git.mirror import fetch_mirror, make_mirror, mirror_worktree, open_mirror

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
        make_mirror(case.repo, folder)
    repo = open_mirror(folder)
    try:
        missing = [rev for rev in (case.base, case.head) if not gitops.has_commit(repo, rev)]
        if missing:
            specs = [spec for rev in missing if (spec := refspec(rev))]
            fetch_mirror(repo, specs, f"cannot fetch {case.repo} into {folder}")
    finally:
        repo.close()
    return folder


@contextmanager
def case_worktree(repository: Path, rev: str) -> Iterator[Path]:
    """The folder to review a case at ``rev`` in: for a bare mirror, a new worktree checked
    out there (no hooks run), removed afterwards; any other repository as it is."""
    if not (repository / "HEAD").is_file() or (repository / ".git").exists():
        yield repository
        return
    with mirror_worktree(repository, rev) as folder:
        yield folder


def refspec(rev: str) -> str | None:
    """What to fetch for a revision no branch of the clone has: a pull request's head (as
    ``origin/pull/N/head``) or a commit by its id; None for anything else."""
    match = _PULL_HEAD.match(rev)
    if match is not None:
        return f"+refs/pull/{match.group(1)}/head:refs/remotes/origin/pull/{match.group(1)}/head"
    return rev if _SHA.match(rev) else None
