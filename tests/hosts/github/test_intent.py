"""A pull request's intent: its text, bounded, and the issues it links read through the
fake GitHub's "Get an issue"."""

from __future__ import annotations

from orch_review.hosts.github.event import GitHubContext, PullRequest
from orch_review.hosts.github.intent import pull_intent
from orch_review.scope.stated_intent import DESCRIPTION_LIMIT
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.github_issues import IssueTracker
from tests.hosts.github.conftest import REPOSITORY


def _pull(body: str) -> PullRequest:
    return PullRequest(7, "a" * 40, "b" * 40, "main", REPOSITORY, REPOSITORY, title="T", body=body)


def test_linked_issues_are_read_and_those_that_cannot_be_are_noted(
    github_api: FakeGitHubAPI,
) -> None:
    issues = IssueTracker(github_api)
    issues.add(12, title="Find users", body="Match names case-insensitively.")
    issues.add(13)
    issues.deleted.add(13)
    context = GitHubContext(REPOSITORY, api_url=github_api.base_url, token=WRITE_TOKEN,
                            server_url="https://github.test")  # fmt: skip
    body = (
        "Fixes #12, #13 and other/repo#5. Part of #7. Closes ../etc#3. "
        "See https://github.test/octo/demo/issues/12 and https://elsewhere.test/a/b/issues/9"
    )

    intent = pull_intent(context, _pull(body), other_projects=("other/repo", "../etc"))

    assert intent.source == "pull request #7"
    assert [(i.reference, i.title, i.body) for i in intent.read_issues] == [
        ("#12", "Find users", "Match names case-insensitively.")
    ]
    assert intent.notes == (
        "Linked issue #13 of pull request #7 was not read: this token cannot read it (410).",
        "Linked issue other/repo#5 of pull request #7 was not read: this token cannot read it "
        "(404).",
        "Linked issue ../etc#3 of pull request #7 was not read: not a repository name GitHub "
        "can have.",
    )
    asked = [r.path for r in github_api.requests]
    assert asked == [
        "/repos/octo/demo/issues/12",
        "/repos/octo/demo/issues/13",
        "/repos/other/repo/issues/5",
    ]  # the pull request itself (#7), a path outside the API and another host: never asked


def test_issues_of_another_repository_are_not_read_unless_a_setting_names_it(
    github_api: FakeGitHubAPI,
) -> None:
    context = GitHubContext(REPOSITORY, api_url=github_api.base_url, token=WRITE_TOKEN,
                            server_url="https://github.test")  # fmt: skip
    body = "Fixes #12 and Other/Repo#5; closes https://github.test/third/one/issues/2"

    intent = pull_intent(context, _pull(body), other_projects=("other/repo",))

    asked = [r.path for r in github_api.requests]
    assert asked == ["/repos/octo/demo/issues/12", "/repos/Other/Repo/issues/5"]
    assert intent.notes[-1] == (
        "Linked issue third/one#2 of pull request #7 was not read: it belongs to another "
        "project; name that project in the `issue-projects` setting to read its issues."
    )


def test_a_pull_request_without_links_asks_nothing_and_its_text_is_bounded(
    github_api: FakeGitHubAPI,
) -> None:
    context = GitHubContext(REPOSITORY, api_url=github_api.base_url, token=WRITE_TOKEN)

    intent = pull_intent(context, _pull("x\x1b[2J" * DESCRIPTION_LIMIT))

    assert github_api.requests == []
    assert len(intent.description) == DESCRIPTION_LIMIT and "\x1b" not in intent.description
