"""The steps every host's run takes around the review, parameterised by the adapter: fetch
the change's head into a clone and review it (``pr N``, ``mr N``), with the change's intent
read once the base revision's configuration says which other projects' issues may be read."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from orch_review.hosts.base import Echo
from orch_review.hosts.local import REMOTE, LocalRequest

if TYPE_CHECKING:
    import git

    from orch_review.core import PreparedReview
    from orch_review.events import EventSink
    from orch_review.findings.report import Report
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
    from orch_review.scope.git import work_tree
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
    prepared = core.prepare(work_tree(repo), options, env, warn=warn)
    # After prepare: the configuration (of the base revision) says which other projects'
    # issues may be read.
    prepared = with_intent(prepared, intent_of(prepared.config.issue_projects))
    report = core.run(prepared, events=events, notices=notices)
    return report, prepared, head
