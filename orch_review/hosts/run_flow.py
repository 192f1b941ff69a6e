"""The steps every host's run takes around the review, parameterised by the adapter: the
review prepared with the change's intent (read through the host once the base revision's
configuration says which other projects' issues may be read), the conversation rules that
configuration sets, and a change's head fetched into a clone and reviewed (``pr N``,
``mr N``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from orch_review.hosts.base import Echo
from orch_review.hosts.local import REMOTE, LocalRequest

if TYPE_CHECKING:
    import git

    from orch_review.core import PreparedReview, ReviewOptions
    from orch_review.events import EventSink
    from orch_review.findings.report import Report
    from orch_review.hosts.dismissals import ConversationRules
    from orch_review.scope.stated_intent import Intent


@dataclass(frozen=True, slots=True)
class FetchedChange:
    """Where a change's head is on the remote, and what the host's API says of it."""

    source_ref: str  # on the remote: refs/pull/N/head, refs/merge-requests/N/head
    local_ref: str  # where it is fetched to: refs/orch-review/...
    base_sha: str
    head_sha: str  # the head the API gave
    head_named: str  # how the warning names it: "the API says", "the latest diff version's head is"


def learned_fingerprints(prepared: PreparedReview) -> frozenset[str]:
    """The fingerprints the learnings file holds already (a dismissal of one is not offered
    again as a learning to commit)."""
    return frozenset(x.fingerprint for x in prepared.learnings if x.fingerprint)


def with_intent(prepared: PreparedReview, intent: Intent) -> PreparedReview:
    """``prepared`` reviewing against ``intent``."""
    return replace(prepared, options=replace(prepared.options, intent=intent))


def prepare_with_intent(
    repo: git.Repo,
    options: ReviewOptions,
    env: Mapping[str, str],
    intent_of: Callable[[Collection[str]], Intent],
    *,
    warn: Echo | None = None,
) -> PreparedReview:
    """The review of ``options`` prepared in ``repo``'s work tree, against the intent
    ``intent_of`` reads (a host's :meth:`~orch_review.hosts.base.Host.read_intent`): it is
    read after preparing, once the configuration (of the base revision) says which other
    projects' issues may be read. What ``core.prepare`` raises (NothingToReview) is raised
    before any intent is read."""
    from orch_review import core
    from orch_review.scope.git import work_tree

    prepared = core.prepare(work_tree(repo), options, env, warn=warn)
    return with_intent(prepared, intent_of(prepared.config.issue_projects))


def conversation_rules(prepared: PreparedReview) -> ConversationRules:
    """How people talk to orch-review on the change, from ``prepared``'s configuration."""
    from orch_review.hosts.dismissals import ConversationRules

    return ConversationRules(
        trigger=prepared.config.trigger,
        ignore_reaction=prepared.config.ignore_reaction,
        learned=learned_fingerprints(prepared),
    )


def review_fetched(
    repo: git.Repo,
    request: LocalRequest,
    env: Mapping[str, str],
    change: FetchedChange,
    intent_of: Callable[[Collection[str]], Intent],
    *,
    events: EventSink | None = None,
    warn: Echo | None = None,
    notices: Echo | None = None,
) -> tuple[Report, PreparedReview, str]:
    """Fetch ``change``'s head, review it against its base with the intent ``intent_of``
    reads (given the projects whose issues the configuration lets it read); the report, the
    prepared review and the head commit reviewed."""
    from orch_review import core
    from orch_review.scope.git.fetch_change import fetch_head

    head = fetch_head(repo, change.source_ref, change.local_ref, change.base_sha, REMOTE)
    if head != change.head_sha and warn is not None:
        warn(
            f"orch-review: {REMOTE}'s {change.source_ref} is {head[:12]}, {change.head_named} "
            f"{change.head_sha[:12]}: reviewing what was fetched."
        )
    options = replace(
        request.options,
        base=change.base_sha,
        head=head,
        walkthrough=request.post and request.walkthrough,
    )
    prepared = prepare_with_intent(repo, options, env, intent_of, warn=warn)
    report = core.run(prepared, events=events, notices=notices)
    return report, prepared, head
