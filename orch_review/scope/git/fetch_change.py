"""Fetching a change under review: its head from a remote (``pr N``/``mr N``), and, in CI,
the history a shallow checkout lacks so the merge-base is present.

``actions/checkout`` fetches one commit by default (``fetch-depth: 1``): the PR's merge
commit, without the base or head commits' history. This fetches the base and head commits by
sha (GitHub serves any reachable commit), then deepens the history a few times until their
merge-base appears. Failing that, the error says to set ``fetch-depth: 0``.

Git runs with the token in an ``http.<server>/.extraheader`` given through ``GIT_CONFIG_*``
environment variables (never in argv, never written to ``.git/config``), so the workflow can
use ``persist-credentials: false`` and still fetch a private repository.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from orch_review.errors import GitError
from orch_review.scope.git.refs import has_commit, is_shallow, resolve_commit
from orch_review.scope.git.remote import fetch_isolated, remote_url

if TYPE_CHECKING:
    import git

FIRST_DEPTH = 50
DEEPEN_STEPS = (200, 1000, 5000)
FETCH_DEPTH_HINT = (
    "set `fetch-depth: 0` on the actions/checkout step so the pull request's history is there"
)


def auth_env(server_url: str, token: str | None, repo: git.Repo | None = None) -> dict[str, str]:
    """Environment for git that authenticates to ``server_url`` with ``token``; empty when
    there is no token or the checkout already persisted credentials for that server."""
    env = {"GIT_TERMINAL_PROMPT": "0"}
    if not token:
        return env
    key = f"http.{server_url.rstrip('/')}/.extraheader"
    if repo is not None and _config_has(repo, key):
        return env  # two Authorization headers would be refused
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        **env,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": key,
        "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
    }


def _config_has(repo: git.Repo, key: str) -> bool:
    import git

    try:
        return bool(str(repo.git.config("--get-all", key)).strip())
    except git.GitCommandError:
        return False


def fetch_head(
    repo: git.Repo, source_ref: str, local_ref: str, base_sha: str, remote: str = "origin"
) -> str:
    """Fetch ``source_ref`` from ``remote`` into ``local_ref`` and check ``base_sha`` is
    here (fetching it, else the remote's branches, if not); the head commit. The clone's
    own configuration plays no part in the fetch (see ``fetch_isolated``)."""
    url = remote_url(repo, remote)
    if url is None:
        raise GitError(f"this clone has no `{remote}` remote to fetch the change from.")
    fetch_isolated(repo, url, {source_ref: local_ref})
    if not has_commit(repo, base_sha):
        try:
            fetch_isolated(repo, url, {base_sha: None})
        except GitError:  # a server that serves no commit by its id
            fetch_isolated(repo, url, {"refs/heads/*": None})
    if not has_commit(repo, base_sha):
        raise GitError(
            f"the base commit {base_sha[:12]} is not on {remote}: fetch the base branch, or "
            "check that --repo names the repository of this clone."
        )
    return resolve_commit(repo, local_ref)


def has_merge_base(repo: git.Repo, base: str, head: str) -> bool:
    """Whether both commits and a common ancestor of them are present."""
    import git

    if not (has_commit(repo, base) and has_commit(repo, head)):
        return False
    try:
        return bool(str(repo.git.merge_base(base, head)).strip())
    except git.GitCommandError:
        return False


def ensure_history(
    repo: git.Repo,
    base: str,
    head: str,
    *,
    remote: str = "origin",
    env: Mapping[str, str] | None = None,
    first_depth: int = FIRST_DEPTH,
    deepen_steps: Sequence[int] = DEEPEN_STEPS,
) -> list[str]:
    """Fetch what the merge-base of ``base`` and ``head`` needs; returns the fetches run.

    Raises GitError (one sentence, naming ``fetch-depth: 0``) when it cannot.
    """
    import git

    if has_merge_base(repo, base, head):
        return []
    shallow = is_shallow(repo)
    runs: list[str] = []
    detail = ""

    def fetch(*args: str) -> None:
        command = ["--no-tags", "--no-recurse-submodules", *args, remote, base, head]
        runs.append("git fetch " + " ".join(command))
        repo.git.fetch(*command, env=dict(env or {}))

    try:
        if not (has_commit(repo, base) and has_commit(repo, head)):
            if shallow:
                fetch(f"--depth={first_depth}")
            else:
                fetch()
        for step in deepen_steps:
            if has_merge_base(repo, base, head) or not is_shallow(repo):
                break
            fetch(f"--deepen={step}")
    except git.GitCommandError as exc:
        detail = " ".join(str(exc.stderr or exc).split())[:300]
    if has_merge_base(repo, base, head):
        return runs
    why = f" (git said: {detail})" if detail else ""
    raise GitError(
        f"the checkout lacks the history between the pull request's base {base[:12]} and "
        f"head {head[:12]} and fetching it did not work{why}: {FETCH_DEPTH_HINT}."
    )
