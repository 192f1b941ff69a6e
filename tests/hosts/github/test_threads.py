"""orch-review's review threads on the fake GitHub API: resolved when the finding is gone
from a covered file, left alone otherwise, reopened when it comes back, announced once."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import get_args

import pytest

from orch_review.config.choices import Reaction
from orch_review.hosts.github.api import GitHubApiError, GitHubClient, PermissionDenied
from orch_review.hosts.github.publish import publish
from orch_review.hosts.github.threads import (
    NO_CONTENTS_WRITE,
    THREADS_WITH_REACTIONS_QUERY,
    list_threads,
)
from orch_review.hosts.http_errors import RateLimited
from tests.fakes.github_api import MAINTAINER_TOKEN, READ_TOKEN, WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.github_threads import ReviewThreads, install
from tests.hosts.github.conftest import NUMBER, REPOSITORY
from tests.hosts.github.test_comments import finding
from tests.hosts.github.test_publish import FILES, HEAD, PULL, covering, report_of

FIRST = [finding("big.py", 1, fp="fp1"), finding("big.py", 2, fp="fp2")]


@pytest.fixture
def api(github_api: FakeGitHubAPI) -> FakeGitHubAPI:
    github_api.add_pull(NUMBER, base_sha="b" * 40, head_sha=HEAD, files=FILES)
    return github_api


@pytest.fixture
def threads(api: FakeGitHubAPI) -> ReviewThreads:
    api.contents_write.add(WRITE_TOKEN)  # the workflow grants `contents: write`
    return install(api)


@pytest.fixture
def client(api: FakeGitHubAPI) -> Iterator[GitHubClient]:
    with GitHubClient(api.base_url, REPOSITORY, WRITE_TOKEN, sleep=lambda _: None) as c:
        yield c


def roots(api: FakeGitHubAPI) -> list[dict[str, object]]:
    return [c for c in api.pulls[NUMBER].review_comments if "in_reply_to_id" not in c]


def summary(api: FakeGitHubAPI) -> str:
    (comment,) = api.pulls[NUMBER].issue_comments
    return str(comment["body"])


def test_a_gone_finding_resolves_its_thread_and_says_so_once(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")
    gone, kept = roots(api)

    for _ in range(2):  # the next push, and one more: nothing said twice
        publish(client, PULL, covering(report_of(FIRST[1:]), "big.py"), "review")

    assert threads.mutations == [("resolveReviewThread", gone["id"])]
    assert threads.resolved == {gone["id"]}
    (reply,) = threads.replies(NUMBER, int(str(gone["id"])))
    assert reply["body"].startswith("<!-- orch-review:reply -->")
    assert f"No longer found at {HEAD[:7]}: fixed or no longer applies." in reply["body"]
    assert threads.replies(NUMBER, int(str(kept["id"]))) == []
    assert "1 thread resolved in an earlier run stays resolved." in summary(api)


def test_an_uncovered_file_keeps_its_thread_open(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")

    publish(client, PULL, covering(report_of([]), "small.py"), "review")  # big.py not covered

    assert threads.mutations == [] and len(api.pulls[NUMBER].review_comments) == 2
    assert "Left open: its file was not covered by this run (2):" in summary(api)


def test_a_file_gone_from_the_pull_request_resolves_its_thread(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")
    api.add_pull(NUMBER, base_sha="b" * 40, head_sha="n" * 40, files=FILES[1:])
    pushed = replace(PULL, head_sha="n" * 40)

    publish(client, pushed, covering(report_of([]), "small.py"), "review")

    assert [m for m, _ in threads.mutations] == ["resolveReviewThread"] * 2
    assert (
        "its file is no longer changed" in threads.replies(NUMBER, roots(api)[0]["id"])[0]["body"]
    )  # type: ignore[arg-type]


def test_threads_orch_review_did_not_open_are_never_touched(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    # A person's thread, and one that copies orch-review's marker: neither is orch-review's.
    api.add_review_comment(NUMBER, "please rename this", "big.py", 1, login="octo")
    api.add_review_comment(NUMBER, "<!-- orch-review:finding fp9 --> copied", "big.py", 3)
    publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")

    publish(client, PULL, covering(report_of([]), "big.py"), "review")

    ours = {c["id"] for c in roots(api) if c["user"]["login"] == "github-actions[bot]"}  # type: ignore[index]
    assert len(ours) == 2 and {root for _, root in threads.mutations} == ours
    others = [c for c in roots(api) if c["id"] not in ours]
    assert all(threads.replies(NUMBER, int(str(c["id"]))) == [] for c in others)


def test_a_finding_that_comes_back_reopens_the_thread_it_resolved(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")
    publish(client, PULL, covering(report_of(FIRST[1:]), "big.py"), "review")
    gone = roots(api)[0]

    publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")

    assert threads.mutations == [
        ("resolveReviewThread", gone["id"]),
        ("unresolveReviewThread", gone["id"]),
    ]
    assert threads.resolved == set()
    said = [r["body"] for r in threads.replies(NUMBER, int(str(gone["id"])))]
    assert len(said) == 2 and f"Found again at {HEAD[:7]}" in said[1]
    assert "Reopened: found again (1):" in summary(api)
    assert len(roots(api)) == 2  # the finding keeps its thread: no second comment


def test_a_thread_a_person_resolved_stays_resolved_while_the_finding_stands(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")
    threads.resolved.add(int(str(roots(api)[0]["id"])))

    publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")

    assert threads.mutations == []


def test_without_contents_write_the_thread_stays_open_and_the_summary_says_why(
    api: FakeGitHubAPI, client: GitHubClient
) -> None:
    threads = install(api)  # Actions' token with `pull-requests: write` only
    publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")

    for _ in range(2):
        publish(client, PULL, covering(report_of(FIRST[1:]), "big.py"), "review")

    assert threads.mutations == [] and threads.resolved == set()
    (reply,) = threads.replies(NUMBER, int(str(roots(api)[0]["id"])))
    assert "This thread stays open: orch-review may not resolve it." in reply["body"]
    text = summary(api)
    assert "No longer found, but the thread could not be resolved (1):" in text
    assert "`contents: write`" in text


def test_a_maintainer_token_resolves(api: FakeGitHubAPI) -> None:
    threads = install(api)
    with GitHubClient(api.base_url, REPOSITORY, MAINTAINER_TOKEN) as client:
        publish(client, PULL, covering(report_of(FIRST), "big.py"), "review")
        publish(client, PULL, covering(report_of([]), "big.py"), "review")

    assert len(threads.mutations) == 2


def test_graphql_errors_map_to_the_rest_exceptions(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    publish(client, PULL, covering(report_of(FIRST[:1]), "big.py"), "review")
    thread = threads.thread_of(int(str(roots(api)[0]["id"])))
    mutation = (
        "mutation M($threadId: ID!) { resolveReviewThread(input: {threadId: $threadId}) "
        "{ thread { id } } }"
    )
    with GitHubClient(api.base_url, REPOSITORY, READ_TOKEN) as reader:
        assert len(list_threads(reader, REPOSITORY, NUMBER)) == 1  # a read-only token may query
        with pytest.raises(PermissionDenied) as forbidden:
            reader.graphql(mutation, {"threadId": thread})
    with pytest.raises(PermissionDenied) as missing:
        client.graphql(mutation, {"threadId": "PRRT_424242"})
    with pytest.raises(PermissionDenied):
        list_threads(client, "octo/elsewhere", NUMBER)
    assert forbidden.value.status == 403 and missing.value.status == 404
    assert threads.resolved == set()


def test_a_graphql_rate_limit_is_waited_out_then_retried(
    api: FakeGitHubAPI, threads: ReviewThreads
) -> None:
    waits: list[float] = []
    answers = iter(
        [
            (
                200,
                {"errors": [{"type": "RATE_LIMIT", "message": "API rate limit already exceeded"}]},
                {"retry-after": "7"},
            )
        ]
    )
    real = threads.graphql

    def limited(fake: FakeGitHubAPI, token: str, body: object) -> object:
        return next(answers, None) or real(fake, token, body)

    api.graphql = limited  # type: ignore[assignment]
    with GitHubClient(api.base_url, REPOSITORY, WRITE_TOKEN, sleep=waits.append) as client:
        assert list_threads(client, REPOSITORY, NUMBER) == []
    assert waits == [7.0]
    with GitHubClient(api.base_url, REPOSITORY, WRITE_TOKEN, max_wait=1) as client:
        api.graphql = lambda *_: (
            200,
            {"errors": [{"type": "RATE_LIMIT", "message": "x"}]},
            {"retry-after": "90"},
        )  # type: ignore[assignment]
        with pytest.raises(RateLimited):
            list_threads(client, REPOSITORY, NUMBER)


def test_threads_are_read_page_by_page(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    findings = [finding("big.py", i, fp=f"fp{i}") for i in range(1, 6)]
    publish(client, PULL, covering(report_of(findings), "big.py"), "review")

    listed = list_threads(client, REPOSITORY, NUMBER)  # the fake's pages hold 2

    assert [t.comment_id for t in listed] == [c["id"] for c in roots(api)]
    assert {t.author for t in listed} == {"github-actions[bot]"}
    graphql = [r for r in api.requests if r.path == "/graphql"]
    assert len(graphql) == 3


def test_ghes_graphql_lives_next_to_the_rest_base() -> None:
    from orch_review.hosts.github.api import default_graphql_url

    assert default_graphql_url("https://api.github.com") == "https://api.github.com/graphql"
    assert default_graphql_url("https://ghe.test/api/v3/") == "https://ghe.test/api/graphql"


def test_the_forbidden_note_names_the_permission() -> None:
    assert "contents: write" in NO_CONTENTS_WRITE


@pytest.mark.parametrize("content", [c for c in get_args(Reaction) if c != "none"])
def test_each_ignore_reaction_is_listed_with_the_threads(
    content: str, api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    publish(client, PULL, covering(report_of(FIRST[:1]), "big.py"), "review")
    root = int(str(roots(api)[0]["id"]))
    other = "heart" if content != "heart" else "eyes"
    threads.add_reaction(root, "octo", other)
    threads.add_reaction(root, "renovate[bot]", content, bot=True)
    threads.add_reaction(root, "octo", content, created_at="2026-11-30T12:34:56Z")

    (listed,) = list_threads(client, REPOSITORY, NUMBER, content)

    assert listed.reactions == (
        {"content": content, "created_at": "2026-11-30T11:00:00Z", "user": None},  # the bot
        {
            "content": content,
            "created_at": "2026-11-30T12:34:56Z",
            "user": {"login": "octo", "type": "User"},
        },
    )
    assert not listed.more_reactions
    assert list_threads(client, REPOSITORY, NUMBER)[0].reactions == ()  # not asked: not read


def test_a_reaction_content_outside_the_enum_is_a_graphql_error(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    owner, name = REPOSITORY.split("/")
    variables = {"owner": owner, "name": name, "number": NUMBER, "first": 10, "after": None}
    with pytest.raises(GitHubApiError, match="ReactionContent"):
        client.graphql(
            THREADS_WITH_REACTIONS_QUERY, {**variables, "reaction": "-1", "reactions": 5}
        )
    literal = THREADS_WITH_REACTIONS_QUERY.replace("content: $reaction", "content: MINUS_ONE")
    with pytest.raises(GitHubApiError, match="invalid value \\(MINUS_ONE\\)"):
        client.graphql(literal, {**variables, "reaction": "THUMBS_DOWN", "reactions": 5})
