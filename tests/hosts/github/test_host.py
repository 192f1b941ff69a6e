"""GitHub's steps driven through the Host interface alone, against the fake GitHub: the
event, the pull request's intent, placement on the diff, publishing, the team's dismissals,
the one summary comment and the answer to the comment that started a run."""

from __future__ import annotations

import json
from pathlib import Path

import git

from orch_review.config.settings import Config
from orch_review.findings.records import Status
from orch_review.hosts import registry
from orch_review.hosts.base import Asking, DiffPlace
from orch_review.hosts.dismissals import ConversationRules
from orch_review.hosts.github.event import CommentEvent, PullRequest
from orch_review.hosts.github.host import GitHubConnection
from orch_review.hosts.markers import FINDING_MARKER, REPLY_MARKER, SUMMARY_MARKER
from tests.fakes.github_api import BOT, WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.github_issues import IssueTracker
from tests.fakes.github_threads import install, thread
from tests.hosts.github.conftest import NUMBER, REPOSITORY
from tests.hosts.github.test_comments import finding
from tests.hosts.github.test_dismissals import FINDINGS, WRITER
from tests.hosts.github.test_publish import FILES, HEAD, covering, report_of


def test_github_read_intent_dismissals_and_publish_through_the_interface(
    github_api: FakeGitHubAPI, tmp_path: Path
) -> None:
    host = registry.host("github")
    pull = github_api.add_pull(NUMBER, base_sha="b" * 40, head_sha=HEAD, files=FILES)
    pull.title, pull.body = "Find users", "Fixes #12."
    IssueTracker(github_api).add(12, title="Lookups fail", body="Names differ in case.")
    threads = install(github_api)
    event = tmp_path / "event.json"
    payload = {"action": "opened", "number": NUMBER, "pull_request": github_api.pull_json(NUMBER)}
    event.write_text(json.dumps(payload), encoding="utf-8")
    env = {
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_API_URL": github_api.base_url,
        "GITHUB_SERVER_URL": "https://github.test",
        "GITHUB_TOKEN": WRITE_TOKEN,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
    }
    report = covering(report_of(list(FINDINGS)), "big.py")
    warned: list[str] = []

    change = host.read_event(env, warn=warned.append)
    with host.connect(env, change) as connection:
        intent = host.read_intent(connection)
        placed = [host.place(connection, f) for f in (FINDINGS[0], finding("small.py", 2))]
        first = host.publish(connection, report, ConversationRules())
        root = int(github_api.pulls[NUMBER].review_comments[0]["id"])
        threads.add_reply(NUMBER, root, "@orch-review ignore false alarm", WRITER)
        dismissals = host.read_dismissals(connection, ConversationRules())
        second = host.publish(connection, report, ConversationRules())
        host.keep_summary(connection, f"{SUMMARY_MARKER}\nkept in place")

    assert (change.number, change.head_sha, change.from_fork, warned) == (NUMBER, HEAD, False, [])
    assert (intent.source, intent.title, intent.description) == (
        "pull request #7", "Find users", "Fixes #12."
    )  # fmt: skip
    assert [(i.reference, i.title) for i in intent.read_issues] == [("#12", "Lookups fail")]
    assert placed == [DiffPlace("big.py", None, 1), "lines outside the diff"]
    assert first.said == "orch-review: posted the summary comment and 2 inline comment(s)."
    assert [(d.fingerprint, d.who, d.reason) for d in dismissals.dismissed.values()] == [
        (FINDINGS[0].fingerprint, WRITER, "false alarm")
    ]
    assert second.report is not None
    (suppressed,) = second.report.with_status(Status.SUPPRESSED)
    assert suppressed.fingerprint == FINDINGS[0].fingerprint
    (summary,) = github_api.pulls[NUMBER].issue_comments  # one summary, edited each time
    assert summary["body"] == f"{SUMMARY_MARKER}\nkept in place"


def test_github_answers_the_comment_that_started_the_run_through_the_interface(
    github_api: FakeGitHubAPI, tmp_path: Path
) -> None:
    host = registry.host("github")
    install(github_api)
    github_api.add_pull(NUMBER, base_sha="b" * 40, head_sha=HEAD, files=FILES)
    marked = f"{FINDING_MARKER.format('f1')}\n**orch-review · high · security**: SQL from input."
    github_api.add_review_comment(NUMBER, marked, "big.py", 1, login=BOT["login"])
    top = github_api.pulls[NUMBER].review_comments[-1]
    asked = CommentEvent(
        event="pull_request_review_comment",
        action="created",
        number=NUMBER,
        comment_id=99,
        body="@orch-review ignore the input is an enum",
        user={"login": WRITER, "type": "User"},
        on_pull_request=True,
        in_review_thread=True,
        in_reply_to=int(top["id"]),
        created_at="2026-11-30T12:30:00Z",
    )
    env = {
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_API_URL": github_api.base_url,
        "GITHUB_TOKEN": WRITE_TOKEN,
    }
    pull = PullRequest.from_payload(github_api.pull_json(NUMBER), REPOSITORY)
    asking = Asking(git.Repo.init(tmp_path / "clone"), Config(), env)

    with host.connect(env, pull) as connection:
        nothing = host.answer_questions(connection, asking)  # a review's run: no comment
        assert isinstance(connection, GitHubConnection)
        connection.comment = asked
        answered = host.answer_questions(connection, asking)

    assert (nothing.count, answered.count) == (0, 1)
    (reply,) = thread(github_api, NUMBER, int(top["id"]))
    assert reply["body"] == answered.replies[0]
    assert reply["body"].startswith(REPLY_MARKER)
    assert "Dismissed for this pull request: the input is an enum." in reply["body"]
    assert 'fingerprint = "f1"' in reply["body"] and 'when = "2026-11-30"' in reply["body"]
