"""Posting a review's findings on the pull request, with the fallbacks that keep CI honest.

``review`` mode: inline comments on diff lines (batches of at most 30 per review; a batch
GitHub refuses with 422 is split until the one refused comment is found, and that one moves
to the summary), then the summary comment, edited in place on re-runs. ``summary`` mode posts
only the summary comment. When the token may not write (a fork's read-only token: 403) or the
API keeps failing, nothing crashes: the outcome says so, and the caller prints workflow-command
annotations and writes the job summary instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from orch_review.findings.records import Finding
from orch_review.findings.report import Report
from orch_review.github.api import GitHubApiError, GitHubClient, PermissionDenied, Unprocessable
from orch_review.github.comments import (
    DiffLines,
    InlineComment,
    plan_comments,
    posted_comments,
)
from orch_review.github.event import PullRequest
from orch_review.github.summary import SUMMARY_MARKER, Placement, fit_comment, render

CommentMode = Literal["review", "summary", "annotations", "none"]
COMMENT_MODES: tuple[CommentMode, ...] = ("review", "summary", "annotations", "none")
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
) -> Outcome:
    """Post ``report`` on ``pull`` as ``mode`` asks; never raises for an API refusal."""
    if mode in ("annotations", "none"):
        return Outcome(mode, Placement.none_inline(report, "not posted on the pull request"))
    posted: list[InlineComment] = []
    reviews = 0
    try:
        if mode == "review":
            diff = DiffLines.from_files(client.pull_files(pull.number))
            earlier = posted_comments(client.review_comments(pull.number))
            plan = plan_comments(report.confirmed, diff, earlier)
            refused: list[tuple[Finding, str]] = []
            for start in range(0, len(plan.inline), batch_size):
                batch = plan.inline[start : start + batch_size]
                reviews += _post(client, pull, batch, posted, refused)
            on_diff = plan.already_posted + tuple(posted)
            placement = Placement(
                inline=tuple(c.finding for c in on_diff),
                not_inline=(*plan.outside, *refused),
                resolved=plan.resolved,
                already_posted=len(plan.already_posted),
            )
        else:
            placement = Placement.none_inline(report, "summary mode")
        body = fit_comment(render(report, placement, head_sha=pull.head_sha))
        url = upsert_summary(client, pull.number, body)
    except GitHubApiError as exc:
        reason = _fallback_reason(exc, pull)
        return Outcome(
            mode,
            Placement.none_inline(report, "not posted: " + reason),
            inline_posted=len(posted),
            reviews_created=reviews,
            fallback=reason,
        )
    return Outcome(mode, placement, len(posted), reviews, url)


def _post(
    client: GitHubClient,
    pull: PullRequest,
    batch: Sequence[InlineComment],
    posted: list[InlineComment],
    refused: list[tuple[Finding, str]],
) -> int:
    """Post ``batch`` as one review; on 422 split it in halves until the refused comment is
    alone, and move that one to ``refused``. Returns how many reviews were created."""
    noun = "finding" if len(batch) == 1 else "findings"
    body = (
        f"orch-review: {len(batch)} verified {noun} on lines of this change; "
        "the overview is in the orch-review summary comment."
    )
    try:
        client.create_review(pull.number, pull.head_sha, body, [c.payload() for c in batch])
    except Unprocessable:
        if len(batch) == 1:
            refused.append((batch[0].finding, REFUSED))
            return 0
        middle = len(batch) // 2
        return _post(client, pull, batch[:middle], posted, refused) + _post(
            client, pull, batch[middle:], posted, refused
        )
    posted.extend(batch)
    return 1


def upsert_summary(client: GitHubClient, number: int, body: str) -> str | None:
    """Edit the summary comment an earlier run left (found by its marker), else create it."""
    for comment in client.issue_comments(number):
        if str(comment.get("body") or "").startswith(SUMMARY_MARKER):
            try:
                updated = client.update_issue_comment(int(comment["id"]), body)
            except PermissionDenied:
                break  # a marker in someone else's comment: post our own
            return updated.get("html_url")
    return client.create_issue_comment(number, body).get("html_url")


def _fallback_reason(exc: GitHubApiError, pull: PullRequest) -> str:
    if isinstance(exc, PermissionDenied) and exc.status == 403:
        who = "a pull request from a fork gets a read-only token" if pull.from_fork else ""
        why = f" ({who})" if who else " (it needs `pull-requests: write`)"
        return f"the token may not comment on this pull request{why}: {exc}"
    return f"posting to GitHub failed: {exc}"
