"""orch-review's own review threads: resolved when their finding is gone, reopened when it
comes back.

Only GraphQL can resolve a thread (``resolveReviewThread``; REST cannot). A thread is
orch-review's when its first comment is one of its finding comments (by the account it posts
as, starting with the finding marker: :func:`~orch_review.hosts.github.comments.posted_comments`),
matched by the comment's REST id; no other thread is ever touched.

A thread's finding is *gone* when this run's confirmed findings no longer hold its
fingerprint and the file that held it was covered by this run's verified review, or left the
pull request. An incomplete run that did not cover the file proves nothing: the thread is
left as it is. A finding the team dismissed resolves its thread too. A thread orch-review
resolved is reopened when its finding comes back; a thread a person resolved stays resolved.

Each change is announced once in the thread: the reply carries a hidden state marker, and no
reply is posted when orch-review's last state reply already says the same. GitHub lets a
token resolve threads only with ``contents: write`` (``pull-requests: write`` is not enough
for Actions' ``GITHUB_TOKEN``): without it the thread stays open, the reply says so, and the
summary tells how to allow it.

The listing is made once per run (:class:`Listing`) and, when a reaction dismisses findings,
carries each first comment's reactions of that content: the dismissals read them from it
rather than with one REST request per thread.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from orch_review.findings.coverage import COVERED
from orch_review.findings.report import Report
from orch_review.hosts.comment_body import safe_text
from orch_review.hosts.github.api import GitHubApiError, GitHubClient, PermissionDenied
from orch_review.hosts.github.comments import DiffLines, written_by
from orch_review.hosts.http_errors import HostApiError
from orch_review.hosts.markers import FINDING_MARKER, REPLY_MARKER
from orch_review.hosts.posted import PostedComment, ThreadChange

STATE_MARKER = "<!-- orch-review:thread {} -->"
_STATE_RE = re.compile(r"<!-- orch-review:thread (resolved|reopened|dismissed) -->")
MAX_PAGES = 50
NO_CONTENTS_WRITE = (
    "the token may not resolve review threads: GitHub requires `contents: write` for that "
    "(`pull-requests: write` is not enough for Actions' GITHUB_TOKEN); grant it, or pass a "
    "token that has it, to let orch-review resolve its threads"
)

# GraphQL's ReactionContent enum for each REST reaction content (``ignore-reaction``).
REACTION_ENUM = {
    "+1": "THUMBS_UP",
    "-1": "THUMBS_DOWN",
    "laugh": "LAUGH",
    "hooray": "HOORAY",
    "confused": "CONFUSED",
    "heart": "HEART",
    "rocket": "ROCKET",
    "eyes": "EYES",
}
REACTIONS_PER_COMMENT = 50  # the earliest; a comment with more is read through REST
_QUERY = """
query OrchReviewThreads($owner: String!, $name: String!, $number: Int!, $first: Int!,
                        $after: String<vars>) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: $first, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          isResolved
          viewerCanResolve
          viewerCanUnresolve
          comments(first: 1) {
            nodes {
              databaseId author { __typename login } body<reactions>
            }
          }
        }
      }
    }
  }
}
"""
THREADS_QUERY = _QUERY.replace("<vars>", "").replace("<reactions>", "")
# Reaction.user is a User: null for a bot (or a deleted account), which never counts.
THREADS_WITH_REACTIONS_QUERY = _QUERY.replace(
    "<vars>", ", $reaction: ReactionContent!, $reactions: Int!"
).replace(
    "<reactions>",
    """
              reactions(first: $reactions, content: $reaction,
                        orderBy: {field: CREATED_AT, direction: ASC}) {
                pageInfo { hasNextPage }
                nodes { createdAt user { login } }
              }""",
)
_MUTATION = """
mutation OrchReview{op}($threadId: ID!) {{
  {field}(input: {{threadId: $threadId}}) {{ thread {{ id isResolved }} }}
}}
"""


@dataclass(frozen=True, slots=True)
class Thread:
    """A review thread as GraphQL lists it, with its first comment."""

    id: str
    resolved: bool
    can_resolve: bool
    can_unresolve: bool
    comment_id: int | None
    author: str  # REST form: a bot's login ends "[bot]"
    body: str
    # The first comment's reactions of the content asked for, earliest first, in REST form
    # (``user`` None for a bot or a deleted account), when the listing asked for them.
    reactions: tuple[Mapping[str, Any], ...] = ()
    more_reactions: bool = False  # the comment has more of them than were listed


@dataclass(frozen=True, slots=True)
class Gone:
    """Why a thread's finding is gone (or not)."""

    dismissed: Mapping[str, str]  # fingerprint -> who dismissed it and why (for the reply)
    current: frozenset[str]  # fingerprints this run confirmed
    covered: frozenset[str]  # files this run covered with a verified review
    in_pull: frozenset[str]  # files of the pull request


def evidence(report: Report, diff: DiffLines, dismissed: Mapping[str, str]) -> Gone:
    """What this run says about earlier findings."""
    coverage = report.coverage
    covered = frozenset(f.path for f in (coverage.files if coverage else ()) if f.status in COVERED)
    return Gone(
        dismissed=dismissed,
        current=frozenset(f.fingerprint for f in report.confirmed),
        covered=covered,
        in_pull=frozenset(diff.hunks) | diff.without_patch,
    )


def list_threads(
    client: GitHubClient, repository: str, number: int, reaction: str | None = None
) -> list[Thread]:
    """Every review thread of pull request ``number`` (paginated); with ``reaction`` (a REST
    reaction content) the first comment's reactions of that content too."""
    owner, name = repository.split("/", 1)
    query, extra = THREADS_QUERY, dict[str, Any]()
    if reaction is not None:
        query = THREADS_WITH_REACTIONS_QUERY
        extra = {"reaction": REACTION_ENUM[reaction], "reactions": REACTIONS_PER_COMMENT}
    threads: list[Thread] = []
    after: str | None = None
    for _ in range(MAX_PAGES):
        variables = {"owner": owner, "name": name, "number": number, "first": 100, "after": after}
        data = client.graphql(query, {**variables, **extra})
        connection = _dig(data, "repository", "pullRequest", "reviewThreads")
        if not isinstance(connection, Mapping):
            raise GitHubApiError("GraphQL listed no review threads for the pull request")
        threads += [_thread(node, reaction) for node in connection.get("nodes") or [] if node]
        page = connection.get("pageInfo") or {}
        after = page.get("endCursor")
        if not page.get("hasNextPage") or not after:
            break
    return threads


class Listing:
    """The review threads of one pull request, listed through GraphQL once, on first use, and
    shared by the dismissals and the reconciliation of threads (one listing per run)."""

    def __init__(
        self, client: GitHubClient, repository: str, number: int, reaction: str | None = None
    ) -> None:
        self.number = number
        self.reaction = reaction  # the REST reaction content listed with each thread, if any
        self._list = lambda: list_threads(client, repository, number, reaction)
        self._threads: dict[int, Thread] | None = None
        self._error: HostApiError | None = None

    def by_comment(self) -> dict[int, Thread]:
        """The threads by their first comment's REST id; raises the listing's error."""
        if self._threads is None and self._error is None:
            try:
                listed = self._list()
            except HostApiError as exc:
                self._error = exc
            else:
                self._threads = {t.comment_id: t for t in listed if t.comment_id is not None}
        if self._error is not None:
            raise self._error
        assert self._threads is not None
        return self._threads


def _thread(node: Mapping[str, Any], reaction: str | None = None) -> Thread:
    comments = _dig(node, "comments", "nodes") or []
    first = comments[0] if comments and isinstance(comments[0], Mapping) else {}
    author = first.get("author") or {}
    login = str(author.get("login") or "")
    if author.get("__typename") == "Bot" and not login.endswith("[bot]"):
        login += "[bot]"  # GraphQL names bots without the suffix REST uses
    database_id = first.get("databaseId")
    reactions = first.get("reactions")
    listed = reactions if isinstance(reactions, Mapping) and reaction is not None else {}
    return Thread(
        id=str(node.get("id") or ""),
        resolved=bool(node.get("isResolved")),
        can_resolve=bool(node.get("viewerCanResolve")),
        can_unresolve=bool(node.get("viewerCanUnresolve")),
        comment_id=database_id if isinstance(database_id, int) else None,
        author=login,
        body=str(first.get("body") or ""),
        reactions=tuple(
            _rest_reaction(r, str(reaction))
            for r in listed.get("nodes") or []
            if isinstance(r, Mapping)
        ),
        more_reactions=bool(_dig(listed, "pageInfo", "hasNextPage")),
    )


def _rest_reaction(node: Mapping[str, Any], content: str) -> Mapping[str, Any]:
    """A GraphQL reaction in the REST form dismissals read."""
    user = node.get("user")
    login = str(user.get("login") or "") if isinstance(user, Mapping) else ""
    return {
        "content": content,
        "created_at": str(node.get("createdAt") or ""),
        "user": {"login": login, "type": "User"} if login else None,
    }


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def reconcile(
    client: GitHubClient,
    listing: Listing,
    head_sha: str,
    posted: Sequence[PostedComment],
    raw_comments: Iterable[Mapping[str, Any]],
    author: str,
    gone: Gone,
) -> tuple[ThreadChange, ...]:
    """Resolve, reopen and announce orch-review's threads as ``gone`` says; one change per
    thread orch-review opened. Never raises for an API refusal: the change says what failed."""
    raw = list(raw_comments)
    last = {c.comment_id: _last_state(raw, c.comment_id, author) for c in posted}
    if not any(_needs_thread(c, last[c.comment_id], gone) for c in posted):
        return tuple(_change_without_thread(c, gone) for c in posted)
    listing_failed = ""
    try:
        threads = listing.by_comment()
    except HostApiError as exc:
        threads, listing_failed = {}, f"the review threads could not be listed: {exc}"
    changes = []
    for comment in posted:
        thread = threads.get(comment.comment_id)
        if thread is None and not listing_failed:
            continue  # not a thread GraphQL knows (deleted): nothing to do
        if thread is not None and not _ours(thread, comment, author):
            continue
        changes.append(
            _change(
                client, listing.number, head_sha, comment, thread, last[comment.comment_id],
                gone, listing_failed,
            )
        )  # fmt: skip
    return tuple(changes)


def _needs_thread(comment: PostedComment, last: str | None, gone: Gone) -> bool:
    """Whether the thread of ``comment`` may have to be resolved or reopened."""
    if comment.fingerprint in gone.dismissed:
        return True
    if comment.fingerprint in gone.current:
        return last == "resolved"
    return not (comment.path in gone.in_pull and comment.path not in gone.covered)


def _change_without_thread(comment: PostedComment, gone: Gone) -> ThreadChange:
    if comment.fingerprint in gone.current:
        return ThreadChange(comment, "open")
    return ThreadChange(comment, "not-reviewed", "its file was not covered by this run")


def _ours(thread: Thread, comment: PostedComment, author: str) -> bool:
    """The thread opened with orch-review's comment: same id, author and marker."""
    return (
        thread.comment_id == comment.comment_id
        and thread.author == author
        and thread.body.startswith(FINDING_MARKER.format(comment.fingerprint))
    )


def _last_state(raw: Sequence[Mapping[str, Any]], root: int, author: str) -> str | None:
    """The state orch-review's last state reply in the thread of ``root`` announced."""
    state = None
    for comment in raw:
        if comment.get("in_reply_to_id") != root or not written_by(comment, author):
            continue
        match = _STATE_RE.search(str(comment.get("body") or ""))
        if match:
            state = match.group(1)
    return state


def _change(
    client: GitHubClient,
    number: int,
    head_sha: str,
    comment: PostedComment,
    thread: Thread | None,
    last: str | None,
    gone: Gone,
    listing_failed: str,
) -> ThreadChange:
    short = head_sha[:7]
    fingerprint = comment.fingerprint
    if fingerprint in gone.dismissed:
        why = safe_text(gone.dismissed[fingerprint], 600)
        text = f"Dismissed ({why}): orch-review does not raise it again in this pull request."
        return _close(client, number, comment, thread, last, "dismissed", text, listing_failed)
    if fingerprint in gone.current:
        if thread is None or not thread.resolved or last != "resolved":
            return ThreadChange(comment, "open")
        text = f"Found again at {short}: orch-review reopened this thread."
        return _reopen(client, number, comment, thread, text)
    if comment.path in gone.in_pull and comment.path not in gone.covered:
        return ThreadChange(comment, "not-reviewed", "its file was not covered by this run")
    where = "its file is no longer changed" if comment.path not in gone.in_pull else ""
    text = f"No longer found at {short}: fixed or no longer applies" + (
        f" ({where})." if where else "."
    )
    return _close(client, number, comment, thread, last, "resolved", text, listing_failed)


def _close(
    client: GitHubClient,
    number: int,
    comment: PostedComment,
    thread: Thread | None,
    last: str | None,
    state: Literal["resolved", "dismissed"],
    text: str,
    listing_failed: str,
) -> ThreadChange:
    if thread is not None and thread.resolved and last in ("resolved", "dismissed"):
        return ThreadChange(comment, "earlier")
    problem = listing_failed
    if thread is not None and not thread.resolved:
        problem = _mutate(client, thread, "resolveReviewThread") if thread.can_resolve else ""
        if not thread.can_resolve:
            problem = NO_CONTENTS_WRITE
    if last not in ("resolved", "dismissed"):
        left_open = " This thread stays open: orch-review may not resolve it." if problem else ""
        problem = _reply(client, number, comment, state, text + left_open) or problem
    return ThreadChange(comment, "stuck" if problem else state, problem)


def _reopen(
    client: GitHubClient, number: int, comment: PostedComment, thread: Thread, text: str
) -> ThreadChange:
    problem = (
        _mutate(client, thread, "unresolveReviewThread")
        if thread.can_unresolve
        else NO_CONTENTS_WRITE
    )
    if problem:
        return ThreadChange(comment, "stuck", problem)
    return ThreadChange(comment, "reopened", _reply(client, number, comment, "reopened", text))


def _mutate(client: GitHubClient, thread: Thread, field: str) -> str:
    """Run the mutation; '' when done, else why not."""
    op = "Resolve" if field == "resolveReviewThread" else "Unresolve"
    try:
        client.graphql(_MUTATION.format(op=op, field=field), {"threadId": thread.id})
    except PermissionDenied as exc:
        return NO_CONTENTS_WRITE if exc.status == 403 else f"{field} failed: {exc}"
    except HostApiError as exc:
        return f"{field} failed: {exc}"
    return ""


def _reply(client: GitHubClient, number: int, comment: PostedComment, state: str, text: str) -> str:
    """Post a state reply in the thread; '' when done, else why not."""
    body = f"{REPLY_MARKER}\n{STATE_MARKER.format(state)}\n{text}\n"
    try:
        client.reply_to_review_comment(number, comment.comment_id, body)
    except HostApiError as exc:
        return f"the reply could not be posted: {exc}"
    return ""
