"""Review threads on the fake GitHub API: one review comment, and replies in its thread.

As GitHub documents them ("REST API endpoints for pull request review comments"):
``GET /repos/{o}/{r}/pulls/comments/{id}`` answers the comment or 404;
``POST /repos/{o}/{r}/pulls/{n}/comments/{id}/replies`` with ``{"body"}`` answers 201 with
the new comment, which carries ``in_reply_to_id`` and the thread's path and lines; the
comment must be a top-level review comment of pull request ``n`` (replies to replies are
not supported: 422 here) and the body is required (422)::

    install(gh)
    top = gh.pulls[7].review_comments[0]
    add_reply(gh, 7, top["id"], "@orch-review why?", login="octo-maintainer")
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.github_api import DOCS, Answer, FakeGitHubAPI, FakePull

REPLY_DOCS = f"{DOCS}/pulls/comments#create-a-reply-for-a-review-comment"
CREATED_AT = "2026-11-30T12:00:00Z"


def install(fake: FakeGitHubAPI) -> None:
    """Serve the endpoints on ``fake``."""
    fake.routes.append(_route)


def _route(
    fake: FakeGitHubAPI, method: str, rest: str, query: str, body: Any, user: dict[str, str]
) -> Answer | None:
    if (m := re.fullmatch(r"/pulls/comments/(\d+)", rest)) and method == "GET":
        found = _find(fake, int(m.group(1)))
        if found is None:
            return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
        return 200, found[1], {}
    m = re.fullmatch(r"/pulls/(\d+)/comments/(\d+)/replies", rest)
    if m is None or method != "POST":
        return None
    pull = fake.pulls.get(int(m.group(1)))
    found = _find(fake, int(m.group(2)))
    if pull is None or found is None or found[0] is not pull:
        return 404, {"message": "Not Found", "documentation_url": REPLY_DOCS}, {}
    if not isinstance(body, dict) or not isinstance(body.get("body"), str) or not body["body"]:
        return _invalid("body is missing")
    if found[1].get("in_reply_to_id") is not None:
        return _invalid("Replies to replies are not supported")
    return 201, reply(fake, pull, found[1], body["body"], user), {}


def reply(
    fake: FakeGitHubAPI, pull: FakePull, top: dict[str, Any], body: str, user: dict[str, str]
) -> dict[str, Any]:
    """Add a reply to the thread of ``top`` (a top-level comment of ``pull``)."""
    comment_id = next(fake._ids)  # the fake's own id sequence: ids stay unique
    comment = {
        "id": comment_id,
        "in_reply_to_id": top["id"],
        "pull_request_review_id": next(fake._ids),
        "path": top["path"],
        "line": top.get("line"),
        "original_line": top.get("original_line"),
        "start_line": top.get("start_line"),
        "side": top.get("side", "RIGHT"),
        "commit_id": top.get("commit_id"),
        "body": body,
        "user": dict(user),
        "created_at": CREATED_AT,
        "html_url": f"https://github.test/{fake.repository}/pull/{pull.number}"
        f"#discussion_r{comment_id}",
    }
    pull.review_comments.append(comment)
    return comment


def add_reply(
    fake: FakeGitHubAPI, number: int, top_id: int, body: str, login: str, kind: str = "User"
) -> dict[str, Any]:
    """A reply written by ``login`` (a ``kind`` account) in the thread of ``top_id``."""
    with fake._lock:
        pull = fake.pulls[number]
        top = next(c for c in pull.review_comments if c["id"] == top_id)
        return reply(fake, pull, top, body, {"login": login, "type": kind})


def thread(fake: FakeGitHubAPI, number: int, top_id: int) -> list[dict[str, Any]]:
    """The replies in the thread of ``top_id``, oldest first."""
    return [c for c in fake.pulls[number].review_comments if c.get("in_reply_to_id") == top_id]


def _find(fake: FakeGitHubAPI, comment_id: int) -> tuple[FakePull, dict[str, Any]] | None:
    for pull in fake.pulls.values():
        for comment in pull.review_comments:
            if comment["id"] == comment_id:
                return pull, comment
    return None


def _invalid(error: str) -> Answer:
    return (
        422,
        {
            "message": "Validation Failed",
            "errors": [error],
            "documentation_url": REPLY_DOCS,
            "status": "422",
        },
        {},
    )
