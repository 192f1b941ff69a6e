"""Where a case's repository is on disk: a local path as given, a URL cloned once into a cache.

A clone is reused across runs; it is fetched again only when a case names a revision it does
not have, so a rerun reviews exactly the same commits.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from orch_review.errors import UsageError
from orch_review.eval.cases import Case
from orch_review.scope import git as gitops

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
    """The cache folder a URL is cloned into: readable, and unique per URL."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").rsplit("/", 1)[-1]).strip(".-")
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return cache / "eval-clones" / f"{stem[:40] or 'repo'}-{digest}"


def local_repository(case: Case, base_dir: Path, cache: Path) -> Path:
    """The local work tree to review ``case`` in, cloning or fetching a URL when needed."""
    if not is_url(case.repo):
        path = (base_dir / case.repo).resolve()
        if not path.is_dir():
            raise UsageError(f"case `{case.id}`: repository {case.repo!r} is not a folder")
        return path
    folder = clone_folder(cache, case.repo)
    if not (folder / ".git").exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        gitops.clone(case.repo, folder)
    repo = gitops.open_repo(folder)
    try:
        missing = [rev for rev in (case.base, case.head) if not gitops.has_commit(repo, rev)]
        if missing:
            gitops.fetch_origin(repo, [spec for rev in missing if (spec := refspec(rev))])
    finally:
        repo.close()
    return folder


def refspec(rev: str) -> str | None:
    """What to fetch for a revision no branch of the clone has: a pull request's head (as
    ``origin/pull/N/head``) or a commit by its id; None for anything else."""
    match = _PULL_HEAD.match(rev)
    if match is not None:
        return f"+refs/pull/{match.group(1)}/head:refs/remotes/origin/pull/{match.group(1)}/head"
    return rev if _SHA.match(rev) else None
