"""Linked issues, bounds and cleaning of what a change says it does (scope/stated_intent.py), and
the repository named by a remote's URL (scope/remotes.py)."""

from __future__ import annotations

import pytest

from orch_review.scope.remotes import github_repository, gitlab_project
from orch_review.scope.stated_intent import (
    CUT,
    DESCRIPTION_LIMIT,
    Intent,
    IssueRef,
    LinkedIssue,
    clean,
    from_text,
    linked_issues,
    url_pattern,
)


def test_closing_keywords_and_lists_link_issues_in_order_without_repeats() -> None:
    text = "Fixes #12, #13 and group/sub/proj#3.\nCloses: #12\nrelated to octo/demo#4; see #99x"
    assert linked_issues(text, own_project="octo/demo") == [
        IssueRef(None, 12),
        IssueRef(None, 13),
        IssueRef("group/sub/proj", 3),
        IssueRef(None, 4),
    ]


def test_a_bare_number_is_no_link() -> None:
    assert linked_issues("Step #2 of the plan; PR #5 is related.") == []


def test_full_urls_on_the_same_host_only() -> None:
    github = url_pattern("https://github.test", "/issues/")
    text = "See https://github.test/octo/other/issues/7 and https://evil.test/octo/demo/issues/8"
    assert linked_issues(text, issue_url=github) == [IssueRef("octo/other", 7)]
    gitlab = url_pattern("https://gitlab.test", "/-/issues/")
    assert linked_issues("https://gitlab.test/a/b/c/-/issues/5", issue_url=gitlab) == [
        IssueRef("a/b/c", 5)
    ]


def test_clean_strips_controls_and_bounds_the_size() -> None:
    text = "a\x1b]0;title\x07b\r\nc\u202ed\u2028e\x00"
    assert clean(text, 100) == "a]0;titleb\ncde"
    long = clean("x" * (DESCRIPTION_LIMIT + 10), DESCRIPTION_LIMIT)
    assert len(long) == DESCRIPTION_LIMIT and long.endswith(CUT)
    assert clean(None, 10) == "" and clean(5, 10) == ""


def test_unread_issues_are_notes_and_stay_out_of_the_data() -> None:
    intent = Intent(
        "pull request #7",
        "Title",
        "",
        (LinkedIssue("#1", "One", "Body"), LinkedIssue("o/p#2", unread="404")),
    )
    assert intent.notes == ("Linked issue o/p#2 of pull request #7 was not read: 404.",)
    assert intent.as_data() == {
        "source": "pull request #7",
        "title": "Title",
        "linked_issues": [{"reference": "#1", "title": "One", "body": "Body"}],
    }
    assert Intent("x", "  ", "\n").empty and not from_text("do it").empty


@pytest.mark.parametrize(
    ("url", "github", "gitlab"),
    [
        ("https://github.com/octo/demo.git", "octo/demo", "octo/demo"),
        ("git@gitlab.com:group/sub/proj.git", "sub/proj", "group/sub/proj"),
        ("ssh://git@host:22/group/sub/proj", "sub/proj", "group/sub/proj"),
        ("/srv/git/group/demo.git", "group/demo", "group/demo"),
        ("file:///srv/git/group/demo.git", "group/demo", "group/demo"),
        ("ext::sh -c touch% /tmp/x", None, None),
        ("https://host/../../etc", None, None),
        ("https://host/demo", None, None),
        ("https://host/a/b\x1b[31m", None, None),
    ],
)
def test_the_repository_of_a_remote_url(url: str, github: str | None, gitlab: str | None) -> None:
    assert github_repository(url) == github
    assert gitlab_project(url) == gitlab


def test_only_the_first_ten_linked_issues_are_read_and_the_rest_are_noted() -> None:
    from orch_review.scope.stated_intent import IssueRef, LinkedIssue, read_linked

    asked: list[int] = []

    def read(ref: IssueRef) -> LinkedIssue:
        asked.append(ref.number)
        return LinkedIssue(str(ref), title=f"issue {ref.number}")

    issues = read_linked([IssueRef(None, n) for n in range(1, 13)], read)

    assert asked == list(range(1, 11))
    assert [i.title for i in issues[:10]] == [f"issue {n}" for n in range(1, 11)]
    assert [(i.reference, i.unread) for i in issues[10:]] == [
        ("#11", "more than 10 linked"),
        ("#12", "more than 10 linked"),
    ]
