"""GitHub's steps driven through the Host interface alone, against the fake GitHub: the
event, the pull request's intent, placement on the diff, publishing, the team's dismissals
and the one summary comment."""

from __future__ import annotations

import json
from pathlib import Path

from orch_review.findings.records import Status
from orch_review.hosts import registry
from orch_review.hosts.base import DiffPlace
from orch_review.hosts.dismissals import ConversationRules
from orch_review.hosts.markers import SUMMARY_MARKER
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.github_issues import IssueTracker
from tests.fakes.github_threads import install
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
