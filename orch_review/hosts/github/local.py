"""``orch-review pr N``: review a GitHub pull request from a local clone.

The pull request is read through the API (its base and head commits, its title, its
description and the issues it links); its head is fetched from the clone's ``origin`` as
``refs/pull/N/head`` (GitHub keeps it for every pull request, forks' included) into
``refs/orch-review/pull/N/head``, nothing is checked out, and the review is the one of
``--base BASE --head HEAD``. With ``post`` the results are posted as ``orch-review github``
posts them: inline comments and the summary comment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from orch_review.errors import UsageError
from orch_review.hosts.github.api import GitHubClient, PermissionDenied
from orch_review.hosts.github.event import GitHubContext, PullRequest
from orch_review.hosts.local import REMOTE, LocalRequest

if TYPE_CHECKING:
    import git

    from orch_review.core import PreparedReview
    from orch_review.events import EventSink
    from orch_review.findings.report import Report
    from orch_review.hosts.github.publish import Outcome


def repository_of(repo: git.Repo, given: str | None, env: Mapping[str, str] | None = None) -> str:
    """``--repo``, else ``owner/name`` from the ``origin`` remote's URL, when that URL is on
    GitHub (github.com, or the host of ``GITHUB_SERVER_URL``/``GITHUB_API_URL``) or a local
    path; a remote on another host is not guessed into a repository name."""
    from orch_review.scope.git import remote_url
    from orch_review.scope.remotes import github_repository, remote_host

    if given is not None:
        if github_repository(f"x/{given}") != given or given.count("/") != 1:
            raise UsageError(f"--repo {given[:80]!r}: give the repository as OWNER/NAME.")
        return given
    url = remote_url(repo, REMOTE)
    host = remote_host(url) if url else None
    if host is not None and host not in _github_hosts(env or {}):
        raise UsageError(
            f"the `origin` remote is on {host}, not on GitHub: pass --repo OWNER/NAME (with "
            "GITHUB_API_URL for GitHub Enterprise Server), or use `orch-review mr N` for a "
            "GitLab merge request."
        )
    found = github_repository(url) if url else None
    if found is None:
        raise UsageError(
            "cannot tell the GitHub repository from the `origin` remote's URL: pass "
            "--repo OWNER/NAME."
        )
    return found


def _github_hosts(env: Mapping[str, str]) -> set[str]:
    """The host names a GitHub remote may have: github.com's, and the configured server's."""
    from urllib.parse import urlsplit

    hosts = {"github.com", "www.github.com", "ssh.github.com"}
    for name in ("GITHUB_SERVER_URL", "GITHUB_API_URL"):
        host = urlsplit(env.get(name) or "").hostname
        if host:
            hosts |= {host, host.removeprefix("api.")}
    return hosts


def _pull(client: GitHubClient, number: int, repository: str) -> dict[str, Any]:
    """The pull request's payload; a UsageError (exit 2) when it cannot be had: a pull
    request that does not exist, or a token GitHub rejects or that may not read it."""
    try:
        return client.pull(number)
    except PermissionDenied as exc:
        if exc.status == 401:
            raise UsageError(
                f"GitHub rejected the token (401) reading {repository}#{number}: check "
                "GITHUB_TOKEN (or GH_TOKEN)."
            ) from None
        if exc.status == 404:
            raise UsageError(
                f"pull request #{number} is not found in {repository}: check the number and "
                "--repo; for a private repository set GITHUB_TOKEN (or GH_TOKEN) to a token "
                "that may read it."
            ) from None
        raise UsageError(
            f"GitHub refused to show {repository}#{number} ({exc}): check that GITHUB_TOKEN "
            "(or GH_TOKEN) may read the repository."
        ) from None


def review_pull(
    repo: git.Repo,
    request: LocalRequest,
    env: Mapping[str, str],
    *,
    events: EventSink | None = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[Report, PreparedReview, Outcome | None]:
    """Review pull request ``request.number``; post the results if asked. The report, the
    prepared review (its configuration says what fails) and the posting's outcome."""
    from orch_review.hosts.github.host import GITHUB, GitHubConnection
    from orch_review.hosts.run_flow import FetchedChange, conversation_rules, review_fetched

    context = GitHubContext.from_env(env, repository_of(repo, request.repository, env))
    if request.post and not context.token:
        raise UsageError("--post needs GITHUB_TOKEN (or GH_TOKEN): a token that may comment.")
    with GitHubClient(
        context.api_url, context.repository, context.token, graphql_url=context.graphql_url
    ) as client:
        pull = PullRequest.from_payload(
            _pull(client, request.number, context.repository), context.repository
        )
        change = FetchedChange(
            source_ref=f"refs/pull/{pull.number}/head",
            local_ref=f"refs/orch-review/pull/{pull.number}/head",
            base_sha=pull.base_sha,
            head_sha=pull.head_sha,
            head_named="the API says",
        )
        report, prepared, head = review_fetched(
            repo,
            request,
            env,
            change,
            lambda projects: GITHUB.read_intent(GitHubConnection(client, context, pull), projects),
            events=events,
            warn=warn,
            notices=warn,
        )
        if not request.post:
            return report, prepared, None
        fetched = GitHubConnection(client, context, replace(pull, head_sha=head))
        outcome = GITHUB.publish(fetched, report, conversation_rules(prepared))
    return outcome.report or report, prepared, outcome
