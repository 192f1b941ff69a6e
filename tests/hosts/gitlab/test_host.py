"""GitLab's steps driven through the Host interface alone, against the fake GitLab: the
job's merge request, its intent, placement on the diff, publishing, the team's dismissals
the one summary note and the answers to the questions asked in its threads."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from git import Repo as GitPythonRepo

from orch_review.config.settings import Config
from orch_review.findings.coverage import LedgerFile, build_coverage
from orch_review.findings.records import Status
from orch_review.hosts import registry
from orch_review.hosts.base import Asking, DiffPlace
from orch_review.hosts.dismissals import ConversationRules
from orch_review.hosts.markers import REPLY_MARKER, SUMMARY_MARKER
from tests.conftest import GitRepoFactory, git
from tests.fakes.gitlab_api import BOT_TOKEN, DEVELOPER, FakeGitLabAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.hosts.github.test_comment_run import answering
from tests.hosts.github.test_comments import finding
from tests.hosts.gitlab.test_publish import _merge_request as merge_request
from tests.reporters.sample import clean_report


def test_gitlab_read_intent_dismissals_and_publish_through_the_interface(
    git_repo: GitRepoFactory,
) -> None:
    host = registry.host("gitlab")
    added, far = finding("a.py", 21, fp="added"), finding("a.py", 40, fp="far")
    spanning = finding("a.py", 20, 22, fp="spanning")  # placed only, never posted
    report = replace(
        clean_report(),
        findings=(added, far),
        coverage=build_coverage([LedgerFile("a.py", 1, ((21, 21),))], covered_by={"a.py": [1]}),
    )
    with FakeGitLabAPI() as gitlab:
        repo = merge_request(gitlab, git_repo)
        gitlab.mrs[1].title, gitlab.mrs[1].description = "Add a line", "Closes #3."
        gitlab.add_issue(3, title="A line is missing")
        env = {
            "CI_API_V4_URL": gitlab.api_url,
            "CI_MERGE_REQUEST_PROJECT_ID": "7",
            "CI_MERGE_REQUEST_IID": "1",
            "CI_MERGE_REQUEST_DIFF_BASE_SHA": git(repo, "rev-parse", "HEAD~1").strip(),
            "CI_COMMIT_SHA": git(repo, "rev-parse", "HEAD").strip(),
            "GITLAB_TOKEN": BOT_TOKEN,
        }

        change = host.read_event(env, warn=pytest.fail)
        with host.connect(env, change) as connection:
            intent = host.read_intent(connection)
            placed = [host.place(connection, f) for f in (added, spanning, far)]
            first = host.publish(connection, report, ConversationRules())
        (thread,) = gitlab.diff_threads(1)
        gitlab.reply_as(1, thread["id"], "@orch-review ignore the line is wanted", DEVELOPER)
        # A run reads the discussions once: the next run sees the reply.
        with host.connect(env, change) as connection:
            dismissals = host.read_dismissals(connection, ConversationRules())
            second = host.publish(connection, report, ConversationRules())
            host.keep_summary(connection, f"{SUMMARY_MARKER}\nkept in place")
        notes = gitlab.notes_of(1)

    assert (change.number, change.from_fork) == (1, False)
    assert (intent.source, intent.title, intent.description) == (
        "merge request !1", "Add a line", "Closes #3."
    )  # fmt: skip
    assert [(i.reference, i.title) for i in intent.read_issues] == [("#3", "A line is missing")]
    assert placed == [
        DiffPlace("a.py", None, 21), DiffPlace("a.py", 20, 22), "lines outside the diff"
    ]  # fmt: skip
    assert first.said == (
        "orch-review: 1 new discussion(s), 0 already posted, 1 in the summary only, 0 resolved."
    )
    assert [(d.fingerprint, d.who, d.reason) for d in dismissals.dismissed.values()] == [
        ("added", "dev", "the line is wanted")
    ]
    assert second.report is not None
    (suppressed,) = second.report.with_status(Status.SUPPRESSED)
    assert suppressed.fingerprint == "added"
    assert [n["body"] for n in notes] == [f"{SUMMARY_MARKER}\nkept in place"]


def test_gitlab_answers_pending_questions_through_the_interface(
    git_repo: GitRepoFactory, fake_api: FakeMessagesAPI, api_env: dict[str, str]
) -> None:
    from tests.fakes.gitlab_api import REPORTER

    host = registry.host("gitlab")
    added = finding("a.py", 21, fp="added")
    report = replace(
        clean_report(),
        findings=(added,),
        coverage=build_coverage([LedgerFile("a.py", 1, ((21, 21),))], covered_by={"a.py": [1]}),
    )
    fake_api.policy = answering("Because the line is read before it is set.")
    with FakeGitLabAPI() as gitlab:
        repo = merge_request(gitlab, git_repo)
        env = {
            **api_env,
            "CI_API_V4_URL": gitlab.api_url,
            "CI_MERGE_REQUEST_PROJECT_ID": "7",
            "CI_MERGE_REQUEST_IID": "1",
            "CI_MERGE_REQUEST_DIFF_BASE_SHA": git(repo, "rev-parse", "HEAD~1").strip(),
            "CI_COMMIT_SHA": git(repo, "rev-parse", "HEAD").strip(),
            "GITLAB_TOKEN": BOT_TOKEN,
        }
        change = host.read_event(env, warn=pytest.fail)
        with host.connect(env, change) as connection:
            host.publish(connection, report, ConversationRules())
        (thread,) = gitlab.diff_threads(1)
        gitlab.reply_as(1, thread["id"], "@orch-review is this reachable?", REPORTER)
        gitlab.reply_as(1, thread["id"], "@orch-review why is this a problem?", DEVELOPER)
        asking = Asking(GitPythonRepo(repo), Config(sandbox="off"), env, findings={"added": added})
        with host.connect(env, change) as connection:
            answered = host.answer_questions(connection, asking)
        with host.connect(env, change) as connection:
            again = host.answer_questions(connection, asking)  # answered: nothing pending
        replies = [n["body"] for n in thread["notes"] if n["body"].startswith(REPLY_MARKER)]

    assert (answered.count, again.count) == (1, 0)
    assert replies == [r.strip() for r in answered.replies]  # GitLab trims a note
    assert "Because the line is read before it is set." in replies[0]
    assert "orchestration mode off" in replies[0]
    (request,) = fake_api.message_requests
    assert "dev asks on merge request !1" in json.dumps(request.body)
    assert "why is this a problem?" in json.dumps(request.body)
