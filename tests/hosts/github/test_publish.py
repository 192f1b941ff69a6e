"""Posting a report on a pull request of the fake GitHub API: batches, 422 isolation, no
duplicates on re-runs, the summary edited in place, and the fallbacks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from orch_review.findings.coverage import LedgerFile, build_coverage
from orch_review.findings.records import Finding, ranked
from orch_review.findings.report import Report
from orch_review.hosts.github.api import GitHubClient
from orch_review.hosts.github.event import PullRequest
from orch_review.hosts.github.publish import REFUSED, CommentMode, publish
from tests.fakes.github_api import MAINTAINER_TOKEN, READ_TOKEN, WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.github_threads import install
from tests.hosts.github.conftest import NUMBER, REPOSITORY
from tests.hosts.github.test_comments import finding
from tests.reporters.sample import clean_report

HEAD = "h" * 40
BIG_PATCH = "@@ -0,0 +1,100 @@\n" + "".join(f"+line {i}\n" for i in range(1, 101))
FILES = [
    {"filename": "big.py", "status": "added", "patch": BIG_PATCH},
    {"filename": "small.py", "status": "modified", "patch": "@@ -10,3 +10,4 @@\n a\n+b\n c\n d"},
]
PULL = PullRequest(NUMBER, "b" * 40, HEAD, "main", REPOSITORY, REPOSITORY)


def report_of(findings: list[Finding]) -> Report:
    return replace(clean_report(), findings=tuple(ranked(findings)))


def covering(report: Report, *paths: str) -> Report:
    """``report`` whose review covered ``paths`` and nothing else."""
    files = [LedgerFile(path, 1) for path in paths]
    return replace(report, coverage=build_coverage(files, covered_by={p: [1] for p in paths}))


@pytest.fixture
def api(github_api: FakeGitHubAPI) -> FakeGitHubAPI:
    github_api.add_pull(NUMBER, base_sha="b" * 40, head_sha=HEAD, files=FILES)
    return github_api


@pytest.fixture
def client(api: FakeGitHubAPI) -> Iterator[GitHubClient]:
    with GitHubClient(api.base_url, REPOSITORY, WRITE_TOKEN, sleep=lambda _: None) as c:
        yield c


def test_inline_comments_go_in_batches_of_thirty(api: FakeGitHubAPI, client: GitHubClient) -> None:
    findings = [finding("big.py", i, fp=f"fp{i}") for i in range(1, 36)]
    findings.append(finding("small.py", 2, fp="outside"))

    outcome = publish(client, PULL, report_of(findings), "review")

    assert outcome.fallback is None and outcome.inline_posted == 35
    reviews = [r.body for r in api.writes() if r.path.endswith("/reviews")]
    assert [len(body["comments"]) for body in reviews] == [30, 5]
    assert all(body["event"] == "COMMENT" and body["commit_id"] == HEAD for body in reviews)
    assert [(f.path, why) for f, why in outcome.placement.not_inline] == [
        ("small.py", "lines outside the diff")
    ]
    (summary,) = api.pulls[NUMBER].issue_comments
    assert "| high | `small.py:2` |" in summary["body"]
    assert outcome.summary_url == summary["html_url"]


def test_a_refused_comment_moves_to_the_summary_and_the_rest_are_posted(
    api: FakeGitHubAPI, client: GitHubClient
) -> None:
    api.refuse_lines = {("big.py", 3)}
    findings = [finding("big.py", i, fp=f"fp{i}") for i in range(1, 6)]

    outcome = publish(client, PULL, report_of(findings), "review")

    posted = sorted(c["line"] for c in api.pulls[NUMBER].review_comments)
    assert posted == [1, 2, 4, 5]
    assert [(f.start_line, why) for f, why in outcome.placement.not_inline] == [(3, REFUSED)]
    assert "| high | `big.py:3` |" in api.pulls[NUMBER].issue_comments[0]["body"]


def test_rerun_posts_nothing_twice_and_resolves_the_gone_finding(
    api: FakeGitHubAPI, client: GitHubClient
) -> None:
    threads = install(api)
    api.contents_write.add(WRITE_TOKEN)
    findings = [finding("big.py", i, fp=f"fp{i}") for i in range(1, 6)]
    publish(client, PULL, covering(report_of(findings), "big.py"), "review")

    outcome = publish(client, PULL, covering(report_of(findings[1:]), "big.py"), "review")

    roots = [c for c in api.pulls[NUMBER].review_comments if "in_reply_to_id" not in c]
    assert len(roots) == 5
    assert len(api.pulls[NUMBER].reviews) == 1
    assert outcome.inline_posted == 0 and outcome.placement.already_posted == 4
    assert threads.mutations == [("resolveReviewThread", roots[0]["id"])]
    (summary,) = api.pulls[NUMBER].issue_comments
    assert "Resolved now: no longer found (1):" in summary["body"]
    assert "- ~~[`big.py:1`](https://github.test/" in summary["body"]


def test_summary_mode_posts_only_the_summary(api: FakeGitHubAPI, client: GitHubClient) -> None:
    outcome = publish(client, PULL, report_of([finding("big.py", 1)]), "summary")

    assert api.pulls[NUMBER].reviews == []
    assert (
        "| high | `big.py:1` | A claim. | summary mode |"
        in (api.pulls[NUMBER].issue_comments[0]["body"])
    )
    assert not outcome.annotate


def test_read_only_token_falls_back_without_raising(api: FakeGitHubAPI) -> None:
    fork = replace(PULL, head_repository="contributor/demo")
    with GitHubClient(api.base_url, REPOSITORY, READ_TOKEN) as client:
        outcome = publish(client, fork, report_of([finding("big.py", 1)]), "review")

    assert outcome.annotate and outcome.fallback is not None
    assert "a pull request from a fork gets a read-only token" in outcome.fallback
    assert outcome.placement.not_inline[0][1].startswith("not posted: ")


def test_a_marker_in_someone_elses_comment_is_not_edited(
    api: FakeGitHubAPI, client: GitHubClient
) -> None:
    api.add_issue_comment(NUMBER, "<!-- orch-review:summary --> pasted by a person")

    publish(client, PULL, report_of([finding("big.py", 1)]), "review")

    bodies = [c["body"] for c in api.pulls[NUMBER].issue_comments]
    assert bodies[0] == "<!-- orch-review:summary --> pasted by a person"
    assert len(bodies) == 2 and bodies[1].startswith("<!-- orch-review:summary -->\n## ")


def test_rate_limited_posting_is_retried(api: FakeGitHubAPI, client: GitHubClient) -> None:
    api.rate_limit(times=1, retry_after="0")

    outcome = publish(client, PULL, report_of([finding("big.py", 1)]), "review")

    assert outcome.fallback is None
    assert api.requests[0].status == 403 and len(api.pulls[NUMBER].review_comments) == 1


def test_annotations_and_none_modes_do_not_call_the_api(
    api: FakeGitHubAPI, client: GitHubClient
) -> None:
    modes: tuple[CommentMode, ...] = ("annotations", "none")
    for mode in modes:
        outcome = publish(client, PULL, report_of([finding("big.py", 1)]), mode)
        assert outcome.annotate is (mode == "annotations")
    assert api.requests == []


def test_a_spoofed_finding_marker_stops_nothing_and_resolves_nothing(
    api: FakeGitHubAPI, client: GitHubClient
) -> None:
    # Someone writes markers of their own: one for a real finding, one made up.
    api.add_review_comment(NUMBER, "<!-- orch-review:finding fp1 --> hush", "big.py", 1)
    api.add_review_comment(NUMBER, "<!-- orch-review:finding made-up --> fake", "big.py", 2)

    outcome = publish(client, PULL, report_of([finding("big.py", 1, fp="fp1")]), "review")

    assert outcome.inline_posted == 1 and outcome.placement.already_posted == 0
    (summary,) = api.pulls[NUMBER].issue_comments
    assert "Review threads" not in summary["body"]


def test_a_spoofed_summary_is_not_edited_even_when_the_token_could(api: FakeGitHubAPI) -> None:
    # A maintainer's token may edit anyone's comment: the author check must not rely on 403.
    api.add_issue_comment(NUMBER, "<!-- orch-review:summary --> planted", login="mallory")
    report = report_of([finding("big.py", 1)])

    with GitHubClient(api.base_url, REPOSITORY, MAINTAINER_TOKEN) as client:
        publish(client, PULL, report, "review")
        publish(client, PULL, report, "review")

    first, ours = api.pulls[NUMBER].issue_comments
    assert first["body"] == "<!-- orch-review:summary --> planted"
    assert ours["user"]["login"] == "octo-maintainer"
    # The re-run also queries its threads (GraphQL, a POST): only REST writes count here.
    writes = [r.method for r in api.writes() if r.path != "/graphql"]
    assert writes == ["POST", "POST", "PATCH"]  # edited in place
    assert len(api.pulls[NUMBER].review_comments) == 1  # its own marker recognised on re-run
