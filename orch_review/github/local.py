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
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from orch_review.errors import GitError, UsageError
from orch_review.github.api import GitHubClient
from orch_review.github.event import GitHubContext, PullRequest

if TYPE_CHECKING:
    import git

    from orch_review.core import PreparedReview, ReviewOptions
    from orch_review.events import EventSink
    from orch_review.findings.report import Report
    from orch_review.github.publish import Outcome

REMOTE = "origin"


@dataclass(frozen=True, slots=True)
class LocalRequest:
    """What ``pr N`` or ``mr N`` was asked to do."""

    number: int
    repository: str | None = None  # --repo; else from the remote's URL
    post: bool = False
    walkthrough: bool = True
    # The review's other options (paths, settings, report files); base and head are set here.
    options: ReviewOptions = field(default_factory=lambda: _default_options())


def _default_options() -> ReviewOptions:
    from orch_review.core import ReviewOptions

    return ReviewOptions()


def fetch_head(repo: git.Repo, source_ref: str, local_ref: str, base_sha: str) -> str:
    """Fetch ``source_ref`` from the remote into ``local_ref`` and check ``base_sha`` is
    here (fetching the remote's branches if not); the head commit."""
    from orch_review.scope import git as gitops

    gitops.fetch_refs(repo, REMOTE, [f"+{source_ref}:{local_ref}"])
    if not gitops.has_commit(repo, base_sha):
        gitops.fetch_origin(repo)
    if not gitops.has_commit(repo, base_sha):
        raise GitError(
            f"the base commit {base_sha[:12]} is not on {REMOTE}: fetch the base branch, or "
            "check that --repo names the repository of this clone."
        )
    return gitops.resolve_commit(repo, local_ref)


def repository_of(repo: git.Repo, given: str | None) -> str:
    """``--repo``, else ``owner/name`` from the ``origin`` remote's URL."""
    from orch_review.scope.git import remote_url
    from orch_review.scope.remotes import github_repository

    if given is not None:
        if github_repository(f"x/{given}") != given or given.count("/") != 1:
            raise UsageError(f"--repo {given[:80]!r}: give the repository as OWNER/NAME.")
        return given
    url = remote_url(repo, REMOTE)
    found = github_repository(url) if url else None
    if found is None:
        raise UsageError(
            "cannot tell the GitHub repository from the `origin` remote's URL: pass "
            "--repo OWNER/NAME."
        )
    return found


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
    from orch_review import core
    from orch_review.github.dismissals import Conversation
    from orch_review.github.intent import pull_intent
    from orch_review.github.publish import publish
    from orch_review.scope.git import work_tree

    context = GitHubContext.from_env(env, repository_of(repo, request.repository))
    if request.post and not context.token:
        raise UsageError("--post needs GITHUB_TOKEN (or GH_TOKEN): a token that may comment.")
    with GitHubClient(
        context.api_url, context.repository, context.token, graphql_url=context.graphql_url
    ) as client:
        pull = PullRequest.from_payload(client.pull(request.number), context.repository)
        local_ref = f"refs/orch-review/pull/{pull.number}/head"
        head = fetch_head(repo, f"refs/pull/{pull.number}/head", local_ref, pull.base_sha)
        if head != pull.head_sha and warn is not None:
            warn(
                f"orch-review: {REMOTE}'s refs/pull/{pull.number}/head is {head[:12]}, the API "
                f"says {pull.head_sha[:12]}: reviewing what was fetched."
            )
        options = replace(
            request.options,
            base=pull.base_sha,
            head=head,
            intent=pull_intent(context, pull),
            walkthrough=request.post and request.walkthrough,
        )
        prepared = core.prepare(work_tree(repo), options, env, warn=warn)
        report = core.run(prepared, events=events, notices=warn)
        if not request.post:
            return report, prepared, None
        conversation = Conversation(
            trigger=prepared.config.trigger,
            ignore_reaction=prepared.config.ignore_reaction,
            learned=frozenset(x.fingerprint for x in prepared.learnings if x.fingerprint),
        )
        fetched = replace(pull, head_sha=head)
        outcome = publish(client, fetched, report, "review", conversation=conversation)
    return outcome.report or report, prepared, outcome
