"""Findings the team dismissed on the pull request, and what they teach.

In the thread of one of orch-review's finding comments, a reply that says ``@orch-review
ignore <reason>`` (the configured trigger) dismisses that finding's fingerprint for the rest
of the pull request; so does the configured reaction (``ignore-reaction``, ``-1`` by default)
on orch-review's comment itself. Either counts only from a person with write access, as
GitHub says through the permission endpoint (cached per login), never from a bot (orch-review
included). The earliest dismissal of a thread wins.

Reactions are read from the GraphQL listing of review threads the run makes anyway
(:class:`orch_review.hosts.github.threads.Listing`), not with one REST request per thread: Actions'
``GITHUB_TOKEN`` has 1,000 REST requests an hour per repository, shared by all its workflows.
When GraphQL cannot list the threads, or a comment has more reactions than the listing holds,
they are read through REST, for at most :data:`MAX_THREADS` threads a run, and the summary
says so.

A dismissed finding is suppressed (not commented again, listed as dismissed, not failing the
check: it is the team's decision about that finding), its thread is resolved, and the summary
shows it as a ready-to-commit learning for ``.orch-review/learnings.toml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from orch_review.config.learnings import MAX_REASON
from orch_review.hosts import mentions
from orch_review.hosts.dismissals import Collected, ConversationRules, Dismissal, valid_category
from orch_review.hosts.github.api import GitHubClient, PermissionDenied
from orch_review.hosts.github.threads import Listing, Thread
from orch_review.hosts.http_errors import HostApiError
from orch_review.hosts.posted import PostedComment
from orch_review.wording import counted

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_THREADS = 200  # threads whose reactions are read through REST in one run


class Writers:
    """Whether a login has write access, asked once per login; refusals count as no."""

    def __init__(self, client: GitHubClient) -> None:
        self._client = client
        self._known: dict[str, bool] = {}

    def __call__(self, login: str) -> bool:
        if login not in self._known:
            try:
                self._known[login] = self._client.may_write(login)
            except HostApiError:
                self._known[login] = False
        return self._known[login]


def collect(
    client: GitHubClient,
    raw_comments: Iterable[Mapping[str, Any]],
    posted: Sequence[PostedComment],
    conversation: ConversationRules,
    listing: Listing | None = None,
) -> Collected:
    """The dismissals in the threads of orch-review's comments ``posted``; reactions come from
    ``listing`` when it lists them."""
    replies: dict[int, list[Mapping[str, Any]]] = {}
    for raw in raw_comments:
        root = raw.get("in_reply_to_id")
        if isinstance(root, int):
            replies.setdefault(root, []).append(raw)
    may_write = Writers(client)
    reactions = _Reactions(client, listing, conversation.ignore_reaction)
    found: dict[str, Dismissal] = {}
    for comment in posted:
        if comment.fingerprint in found or not comment.comment_id:
            continue
        thread = sorted(replies.get(comment.comment_id, []), key=_created)
        dismissal = _by_reply(thread, comment, conversation.trigger, may_write)
        if dismissal is None and conversation.ignore_reaction != "none":
            dismissal = reactions.dismissal(comment, may_write)
        if dismissal is not None:
            found[comment.fingerprint] = dismissal
    return Collected(found, reactions.notes())


class _Reactions:
    """The dismissing reaction on orch-review's comments: from the threads' listing, else one
    REST request per comment, at most :data:`MAX_THREADS` a run."""

    def __init__(self, client: GitHubClient, listing: Listing | None, content: str) -> None:
        self._client = client
        self._listing = listing if listing is not None and listing.reaction == content else None
        self._content = content
        self._listing_failed = ""
        self._rest_reads = 0
        self._unread = 0

    def dismissal(self, comment: PostedComment, may_write: Writers) -> Dismissal | None:
        threads = self._threads()
        if threads is not None:
            thread = threads.get(comment.comment_id)
            if thread is None:
                return None  # GraphQL knows no such thread: the comment is gone
            found = _first_writer(thread.reactions, self._content, comment, may_write)
            if found is not None or not thread.more_reactions:
                return found
        return self._from_rest(comment, may_write)

    def _threads(self) -> dict[int, Thread] | None:
        if self._listing is None or self._listing_failed:
            return None
        try:
            return self._listing.by_comment()
        except HostApiError as exc:
            self._listing_failed = str(exc) or type(exc).__name__
            return None

    def _from_rest(self, comment: PostedComment, may_write: Writers) -> Dismissal | None:
        if self._rest_reads >= MAX_THREADS:
            self._unread += 1
            return None
        self._rest_reads += 1
        try:
            reactions = self._client.review_comment_reactions(comment.comment_id)
        except PermissionDenied as exc:
            self._unread += exc.status != 404  # 404: the comment is gone, nothing to read
            return None
        except HostApiError:
            self._unread += 1
            return None
        return _first_writer(reactions, self._content, comment, may_write)

    def notes(self) -> tuple[str, ...]:
        """What the summary should say about how the reactions were read."""
        notes = []
        if self._listing_failed:
            notes.append(
                f"GraphQL could not list the review threads ({self._listing_failed}): the "
                f"`{self._content}` reactions were read with one REST request per thread."
            )
        if self._unread:
            notes.append(
                f"The `{self._content}` reactions of {counted(self._unread, 'thread')} could "
                f"not be read (at most {MAX_THREADS} threads are read one by one in a run): a "
                "dismissal there counts from a later run."
            )
        return tuple(notes)


def _created(comment: Mapping[str, Any]) -> str:
    return str(comment.get("created_at") or "")


def _by_reply(
    thread: Sequence[Mapping[str, Any]],
    comment: PostedComment,
    trigger: str,
    may_write: Writers,
) -> Dismissal | None:
    for reply in thread:
        user = reply.get("user")
        if mentions.is_bot(user) or mentions.from_orch_review(reply):
            continue
        mention = mentions.parse(str(reply.get("body") or ""), trigger)
        if mention is None or mention.kind != "ignore":
            continue
        login = str(user.get("login")) if isinstance(user, Mapping) else ""
        if not may_write(login):
            continue
        reason = " ".join(mention.text.split())[:MAX_REASON] or "no reason given"
        return _dismissal(comment, reason, login, reply)
    return None


def _first_writer(
    reactions: Iterable[Mapping[str, Any]],
    content: str,
    comment: PostedComment,
    may_write: Writers,
) -> Dismissal | None:
    """The earliest ``content`` reaction by a person with write access, as a dismissal."""
    for reaction in sorted(reactions, key=_created):
        user = reaction.get("user")
        if reaction.get("content") != content or mentions.is_bot(user):
            continue
        login = str(user.get("login")) if isinstance(user, Mapping) else ""
        if may_write(login):
            return _dismissal(comment, f"dismissed with a {content} reaction", login, reaction)
    return None


def _dismissal(
    comment: PostedComment, reason: str, who: str, source: Mapping[str, Any]
) -> Dismissal:
    created = _created(source)[:10]
    return Dismissal(
        fingerprint=comment.fingerprint,
        reason=reason,
        who=who,
        when=created if _DATE.fullmatch(created) else "",
        path=comment.path,
        category=valid_category(comment.category),
        url=str(source.get("html_url") or comment.url),
    )
