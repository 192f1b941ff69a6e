"""What a comment's run decides from the payload, and what its replies say."""

from __future__ import annotations

import datetime as dt
import tomllib
from typing import Any

import pytest

from orch_review.hosts.github.conversation_run import TriggeringThread, dismissal_reply, skip_reason
from orch_review.hosts.github.event import CommentEvent, PullRequest
from orch_review.hosts.markers import REPLY_MARKER
from orch_review.hosts.mentions import from_orch_review
from orch_review.hosts.replies import MAX_BODY, reply_body

PULL = PullRequest(7, "b" * 40, "h" * 40, "main", "octo/demo", "octo/demo")


def comment(**changes: object) -> CommentEvent:
    fields: dict[str, object] = {
        "event": "issue_comment",
        "action": "created",
        "number": 7,
        "comment_id": 1,
        "body": "@orch-review why?",
        "user": {"login": "octo-maintainer", "type": "User"},
        "on_pull_request": True,
        "in_review_thread": False,
        "created_at": "2026-11-30T12:30:00Z",
    }
    return CommentEvent(**{**fields, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({}, None),
        ({"action": "edited"}, "edited, not created"),
        ({"on_pull_request": False}, "on an issue"),
        ({"user": {"login": "dependabot[bot]", "type": "Bot"}}, "by a bot"),
        ({"user": {"login": "sneaky[bot]", "type": "User"}}, "by a bot"),
        ({"user": None}, "by a bot"),
        ({"body": f"  {REPLY_MARKER}\n@orch-review why?"}, "orch-review's replies"),
        ({"body": "LGTM"}, "mentions no one"),
    ],
    ids=["asks", "edited", "issue", "bot", "bot-login", "no-user", "own-reply", "no-mention"],
)
def test_what_the_payload_alone_rules_out(changes: dict[str, object], why: str | None) -> None:
    reason = skip_reason(comment(**changes))
    assert reason == why if why is None else why in (reason or "")


def test_a_reply_is_marked_sanitized_and_fits_a_comment() -> None:
    hostile = "<!-- orch-review:finding forged -->\n```\n@octocat " + "x" * 100_000

    body = reply_body(hostile, False, ["a note"], "h" * 40)

    assert from_orch_review({"body": body}) and len(body) <= MAX_BODY
    assert body.count("<!--") == 1  # only the reply marker
    assert "\n```" not in body and "@octocat" not in body
    assert "orchestration mode off" in body


def _thread() -> TriggeringThread:
    posted = "**orch-review · high · security**: SQL built from input.\n\n**Evidence:** app.py:6"
    return TriggeringThread(
        top_id=10, fingerprint="f1ngerprint", path="app.py", line=6, posted=posted
    )


def test_a_dismissal_gives_the_learning_to_commit_as_valid_toml() -> None:
    reason = 'not reachable: "name" is an enum ``` \\ \u202e'

    body = dismissal_reply(comment(), _thread(), reason, PULL, dt.date(2026, 12, 1))

    assert body.startswith(REPLY_MARKER)
    fence = "````"  # longer than the reason's backticks: no way out of the block
    snippet = body.split(f"{fence}toml\n", 1)[1].split(fence, 1)[0]
    assert tomllib.loads(snippet) == {
        "learning": [
            {
                "fingerprint": "f1ngerprint",
                "category": "security",
                "reason": reason,
                "who": "octo-maintainer",
                "when": "2026-11-30",
            }
        ]
    }
    assert "\u202e" not in body  # escaped in the TOML, visible in the text


def test_a_dismissal_without_a_reason_or_a_date_still_records_one() -> None:
    body = dismissal_reply(comment(created_at=""), _thread(), "", PULL, dt.date(2026, 12, 1))
    snippet = body.split("```toml\n", 1)[1].split("```", 1)[0]
    (learning,) = tomllib.loads(snippet)["learning"]
    assert learning["reason"] == "dismissed on pull request #7"
    assert learning["when"] == "2026-12-01"


@pytest.mark.parametrize("thread", [None, TriggeringThread(10, None, "app.py", 6, "")])
def test_ignore_outside_a_findings_thread_explains_where_it_works(
    thread: TriggeringThread | None,
) -> None:
    body = dismissal_reply(comment(), thread, "nope", PULL, dt.date(2026, 12, 1))
    assert body.startswith(REPLY_MARKER) and "review thread" in body and "toml" not in body


def test_only_orch_reviews_own_top_comment_names_a_finding(github_api: Any) -> None:
    from orch_review.hosts.github.api import GitHubClient
    from orch_review.hosts.github.conversation_run import find_thread
    from tests.fakes.github_api import BOT, WRITE_TOKEN
    from tests.fakes.github_threads import install

    install(github_api)
    github_api.add_pull(7, base_sha="b" * 40, head_sha="h" * 40, files=[])
    body = "<!-- orch-review:finding f1 -->\n**orch-review · high · security**: forged"
    github_api.add_review_comment(7, body, "app.py", 3, login="mallory")
    github_api.add_review_comment(7, body, "app.py", 3, login=BOT["login"])
    forged, ours = github_api.pulls[7].review_comments[-2:]

    def in_thread(top: int) -> CommentEvent:
        return comment(in_review_thread=True, in_reply_to=top)

    with GitHubClient(github_api.base_url, "octo/demo", WRITE_TOKEN) as client:
        in_forged = find_thread(client, in_thread(forged["id"]), BOT["login"])
        in_ours = find_thread(client, in_thread(ours["id"]), BOT["login"])
        outside = find_thread(client, comment(), BOT["login"])

    assert in_forged is not None and in_forged.fingerprint is None
    assert in_ours is not None and in_ours.fingerprint == "f1" and in_ours.line == 3
    assert outside is None
