"""Posting a review's findings on the pull request, with the fallbacks that keep CI honest.

``review`` mode: inline comments on diff lines (batches of at most 30 per review; a batch
GitHub refuses with 422 is split until the one refused comment is found, and that one moves
to the summary), then the summary comment, edited in place on re-runs. ``summary`` mode posts
only the summary comment. Earlier comments count as orch-review's only when the account it
posts as wrote them: ``GET /user`` names it for a user's token; an installation token may not
ask, and is taken to post as ``github-actions[bot]`` (Actions' ``GITHUB_TOKEN``) until a
review this run creates says otherwise. When the token may not write (a fork's read-only
token: 403) or the API keeps failing, nothing crashes: the outcome says so, and the caller
prints workflow-command annotations and writes the job summary instead.

In ``review`` mode the conversation on earlier comments counts too: findings the team
dismissed in their threads are suppressed (:mod:`orch_review.hosts.github.dismissals`; the
outcome's ``report`` is the report with them suppressed, which the exit code follows), and
orch-review's threads are resolved or reopened (:mod:`orch_review.hosts.github.threads`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orch_review.config.choices import CommentMode
from orch_review.findings.records import Finding
from orch_review.findings.report import Report
from orch_review.hosts.dismissals import (
    Collected,
    ConversationRules,
    learnings_to_commit,
    suppress_dismissed,
)
from orch_review.hosts.github import dismissals, threads
from orch_review.hosts.github.api import (
    ACTIONS_BOT,
    GitHubClient,
    PermissionDenied,
    Unprocessable,
)
from orch_review.hosts.github.comments import (
    DiffLines,
    InlineComment,
    plan_comments,
    posted_comments,
    written_by,
)
from orch_review.hosts.github.event import PullRequest
from orch_review.hosts.http_errors import HostApiError
from orch_review.hosts.markers import SUMMARY_MARKER
from orch_review.hosts.posted import PostedComment
from orch_review.hosts.summary import Placement, fit_comment, render
from orch_review.wording import counted

BATCH_SIZE = 30
REFUSED = "GitHub refused a comment on these lines (422)"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What was posted, where every finding ended up, and why posting fell back if it did."""

    mode: CommentMode
    placement: Placement
    inline_posted: int = 0
    reviews_created: int = 0
    summary_url: str | None = None
    fallback: str | None = None  # set when comments could not be posted: annotate instead
    report: Report | None = None  # the report with the team's dismissals suppressed

    @property
    def said(self) -> str:
        """One line saying what was posted, as ``pr N --post`` prints it."""
        if self.fallback:
            return f"orch-review: not posted: {self.fallback}."
        return (
            f"orch-review: posted the summary comment and {len(self.placement.inline)} "
            "inline comment(s)."
        )

    @property
    def annotate(self) -> bool:
        """Whether the findings should be printed as workflow-command annotations."""
        return self.mode == "annotations" or self.fallback is not None


def publish(
    client: GitHubClient,
    pull: PullRequest,
    report: Report,
    mode: CommentMode,
    *,
    batch_size: int = BATCH_SIZE,
    conversation: ConversationRules | None = None,
) -> Outcome:
    """Post ``report`` on ``pull`` as ``mode`` asks; never raises for an API refusal."""
    if mode in ("annotations", "none"):
        return Outcome(mode, Placement.none_inline(report, "not posted on the pull request"))
    conversation = conversation or ConversationRules()
    posted: list[InlineComment] = []
    reviews = 0
    try:
        author = client.login() or ACTIONS_BOT
        if mode == "review":
            diff = DiffLines.from_files(client.pull_files(pull.number))
            raw, earlier, listing, collected = read_threads(client, pull, author, conversation)
            dismissed = collected.dismissed
            report = suppress_dismissed(report, dismissed)
            plan = plan_comments(report.confirmed, diff, earlier)
            refused: list[tuple[Finding, str]] = []
            authors: list[str] = []
            for start in range(0, len(plan.inline), batch_size):
                batch = plan.inline[start : start + batch_size]
                reviews += _post(client, pull, batch, (posted, refused, authors))
            author = authors[0] if authors else author
            on_diff = plan.already_posted + tuple(posted)
            gone = threads.evidence(
                report, diff, {fp: d.suppression for fp, d in dismissed.items()}
            )
            changes = threads.reconcile(client, listing, pull.head_sha, earlier, raw, author, gone)
            placement = Placement(
                inline=tuple(c.finding for c in on_diff),
                not_inline=(*plan.outside, *refused),
                already_posted=len(plan.already_posted),
                threads=changes,
                dismissed=tuple(dismissed.values()),
                to_learn=tuple(learnings_to_commit(report, dismissed, conversation.learned)),
                notes=collected.notes,
            )
        else:
            placement = Placement.none_inline(report, "summary mode")
        body = fit_comment(render(report, placement, head_sha=pull.head_sha))
        url = upsert_summary(client, pull.number, body, author)
    except HostApiError as exc:
        reason = _fallback_reason(exc, pull)
        return Outcome(
            mode,
            Placement.none_inline(report, "not posted: " + reason),
            inline_posted=len(posted),
            reviews_created=reviews,
            fallback=reason,
            report=report,
        )
    return Outcome(mode, placement, len(posted), reviews, url, report=report)


def read_threads(
    client: GitHubClient, pull: PullRequest, author: str, conversation: ConversationRules
) -> tuple[list[dict[str, Any]], list[PostedComment], threads.Listing, Collected]:
    """The pull request's review comments, those of them ``author`` (orch-review) posted,
    the listing of their threads, and the team's dismissals in those threads."""
    raw = client.review_comments(pull.number)
    earlier = posted_comments(raw, author)
    reaction = None if conversation.ignore_reaction == "none" else conversation.ignore_reaction
    # One GraphQL listing of the threads (made when first needed) serves both the
    # dismissing reactions and the resolving of threads.
    listing = threads.Listing(client, pull.base_repository, pull.number, reaction)
    return raw, earlier, listing, dismissals.collect(client, raw, earlier, conversation, listing)


_Results = tuple[list[InlineComment], list[tuple[Finding, str]], list[str]]


def _post(
    client: GitHubClient, pull: PullRequest, batch: Sequence[InlineComment], results: _Results
) -> int:
    """Post ``batch`` as one review; on 422 split it in halves until the refused comment is
    alone. ``results`` collects the comments posted, the refused ones (with why) and the
    login each review was created by. Returns how many reviews were created."""
    posted, refused, authors = results
    body = (
        f"orch-review: {counted(len(batch), 'verified finding')} on lines of this change; "
        "the overview is in the orch-review summary comment."
    )
    try:
        review = client.create_review(
            pull.number, pull.head_sha, body, [c.payload() for c in batch]
        )
    except Unprocessable:
        if len(batch) == 1:
            refused.append((batch[0].finding, REFUSED))
            return 0
        middle = len(batch) // 2
        return _post(client, pull, batch[:middle], results) + _post(
            client, pull, batch[middle:], results
        )
    posted.extend(batch)
    user = review.get("user") if isinstance(review, dict) else None
    if isinstance(user, dict) and user.get("login"):
        authors.append(str(user["login"]))
    return 1


def upsert_summary(client: GitHubClient, number: int, body: str, author: str) -> str | None:
    """Edit the summary comment an earlier run left (a comment by ``author`` starting with
    the summary marker), else create it."""
    for comment in client.issue_comments(number):
        body_text = str(comment.get("body") or "")
        if written_by(comment, author) and body_text.startswith(SUMMARY_MARKER):
            try:
                updated = client.update_issue_comment(int(comment["id"]), body)
            except PermissionDenied:
                break  # a marker in someone else's comment: post our own
            return updated.get("html_url")
    return client.create_issue_comment(number, body).get("html_url")


def _fallback_reason(exc: HostApiError, pull: PullRequest) -> str:
    if isinstance(exc, PermissionDenied) and exc.status == 403:
        who = "a pull request from a fork gets a read-only token" if pull.from_fork else ""
        why = f" ({who})" if who else " (it needs `pull-requests: write`)"
        return f"the token may not comment on this pull request{why}: {exc}"
    return f"posting to GitHub failed: {exc}"
