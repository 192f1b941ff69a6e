"""The REST client against the fake GitHub API over real HTTP: pagination, auth, rate limits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orch_review.hosts.github.api import GitHubClient, PermissionDenied, Unprocessable
from orch_review.hosts.http_errors import RateLimited, ServerError
from tests.fakes.github_api import READ_TOKEN, WRITE_TOKEN, FakeGitHubAPI
from tests.hosts.github.conftest import NUMBER, REPOSITORY

FILES = [
    {"filename": f"f{i}.py", "status": "added", "patch": "@@ -0,0 +1 @@\n+x = 1"} for i in range(5)
]


@pytest.fixture
def api(github_api: FakeGitHubAPI) -> FakeGitHubAPI:
    github_api.add_pull(NUMBER, base_sha="b" * 40, head_sha="h" * 40, files=FILES)
    return github_api


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def client(api: FakeGitHubAPI, sleeps: list[float]) -> Iterator[GitHubClient]:
    with GitHubClient(api.base_url, REPOSITORY, WRITE_TOKEN, sleep=sleeps.append) as c:
        yield c


def test_lists_follow_link_headers_across_pages(api: FakeGitHubAPI, client: GitHubClient) -> None:
    files = client.pull_files(NUMBER)

    assert [f["filename"] for f in files] == [f"f{i}.py" for i in range(5)]
    gets = [r for r in api.requests if r.path.endswith("/files")]
    assert len(gets) == 3  # two a page
    assert gets[0].query == {"per_page": ["30"]}
    assert gets[2].query == {"per_page": ["2"], "page": ["3"]}


def test_requests_carry_the_token_and_api_version(api: FakeGitHubAPI, client: GitHubClient) -> None:
    client.pull(NUMBER)

    (request,) = api.requests
    assert request.headers["authorization"] == f"Bearer {WRITE_TOKEN}"
    assert request.headers["x-github-api-version"] == "2022-11-28"
    assert request.headers["accept"] == "application/vnd.github+json"


@pytest.mark.slow
def test_enterprise_server_api_prefix_is_kept() -> None:
    with FakeGitHubAPI(REPOSITORY, page_size=2, prefix="/api/v3") as ghes:
        ghes.add_pull(1, base_sha="b", head_sha="h", files=FILES)
        assert ghes.base_url.endswith("/api/v3")
        with GitHubClient(ghes.base_url, REPOSITORY, WRITE_TOKEN) as client:
            assert len(client.pull_files(1)) == 5
        assert all(r.path.startswith("/api/v3/repos/") for r in ghes.requests)


def test_read_only_token_reads_but_may_not_write(api: FakeGitHubAPI) -> None:
    with GitHubClient(api.base_url, REPOSITORY, READ_TOKEN) as client:
        assert client.issue_comments(NUMBER) == []
        with pytest.raises(PermissionDenied) as raised:
            client.create_issue_comment(NUMBER, "hello")
    assert raised.value.status == 403
    assert "Resource not accessible by integration" in str(raised.value)


def test_bad_credentials(api: FakeGitHubAPI) -> None:
    with (
        GitHubClient(api.base_url, REPOSITORY, "wrong") as client,
        pytest.raises(PermissionDenied, match="401: Bad credentials"),
    ):
        client.pull(NUMBER)


def test_secondary_rate_limit_waits_as_long_as_retry_after_says(
    api: FakeGitHubAPI, client: GitHubClient, sleeps: list[float]
) -> None:
    api.rate_limit(times=2, status=403, retry_after="7")

    client.create_issue_comment(NUMBER, "hello")

    assert sleeps == [7.0, 7.0]
    assert [r.status for r in api.requests] == [403, 403, 201]
    assert len(api.pulls[NUMBER].issue_comments) == 1


def test_primary_rate_limit_waits_until_the_reset_time(
    api: FakeGitHubAPI, client: GitHubClient, sleeps: list[float]
) -> None:
    api.rate_limit(status=429, retry_after=None, reset_in=30)

    assert client.issue_comments(NUMBER) == []

    (waited,) = sleeps
    assert 25 <= waited <= 31


def test_a_wait_longer_than_the_bound_fails_at_once(api: FakeGitHubAPI) -> None:
    api.rate_limit(status=403, retry_after=None, reset_in=3600)
    sleeps: list[float] = []
    client = GitHubClient(api.base_url, REPOSITORY, WRITE_TOKEN, sleep=sleeps.append)
    with client, pytest.raises(RateLimited) as raised:
        client.issue_comments(NUMBER)
    assert sleeps == []
    assert raised.value.wait > 3000


def test_retries_are_bounded(api: FakeGitHubAPI, sleeps: list[float]) -> None:
    api.rate_limit(times=10, retry_after="1")
    with (
        GitHubClient(
            api.base_url, REPOSITORY, WRITE_TOKEN, max_attempts=3, sleep=sleeps.append
        ) as client,
        pytest.raises(RateLimited),
    ):
        client.review_comments(NUMBER)
    assert sleeps == [1.0, 1.0]
    assert len(api.requests) == 3


def test_review_outside_the_diff_is_unprocessable(api: FakeGitHubAPI, client: GitHubClient) -> None:
    comment = {"path": "f0.py", "line": 2, "side": "RIGHT", "body": "x"}
    with pytest.raises(Unprocessable, match="must be part of the diff"):
        client.create_review(NUMBER, "h" * 40, "body", [comment])
    assert api.pulls[NUMBER].reviews == []

    client.create_review(NUMBER, "h" * 40, "body", [{**comment, "line": 1}])
    assert [c["line"] for c in client.review_comments(NUMBER)] == [1]


def test_reads_are_retried_after_a_server_error_but_posts_are_not(
    api: FakeGitHubAPI, client: GitHubClient, sleeps: list[float]
) -> None:
    api.server_error(times=1)
    assert client.issue_comments(NUMBER) == []
    assert [r.status for r in api.requests] == [502, 200] and len(sleeps) == 1

    api.server_error(times=1)
    with pytest.raises(ServerError, match="502"):
        client.create_issue_comment(NUMBER, "maybe posted already")
    assert [r.status for r in api.requests][2:] == [502]


def test_write_access_is_the_base_role_github_reports(
    api: FakeGitHubAPI, client: GitHubClient
) -> None:
    api.roles |= {"keeper": "maintain", "helper": "triage", "author": "write"}
    api.unknown_logins.add("ghost")
    assert [client.permission(x) for x in ("keeper", "helper", "passer-by", "ghost")] == [
        "write",
        "read",
        "read",
        "none",
    ]
    assert client.may_write("keeper") and client.may_write("author")
    assert not client.may_write("helper") and not client.may_write("ghost")
    # A login is a path segment of its own, whatever it contains.
    assert not client.may_write("keeper/../../x")
    asked = [r.path for r in api.requests if "/collaborators/" in r.path]
    assert asked[-1] == f"/repos/{REPOSITORY}/collaborators/keeper%2F..%2F..%2Fx/permission"


def test_replies_go_under_a_threads_top_comment(api: FakeGitHubAPI, client: GitHubClient) -> None:
    from tests.fakes.github_threads import install

    install(api)
    api.add_review_comment(NUMBER, "a finding", "f1.py", 1)
    top = api.pulls[NUMBER].review_comments[-1]

    reply = client.reply_to_review_comment(NUMBER, top["id"], "an answer")

    assert reply["in_reply_to_id"] == top["id"] and reply["path"] == "f1.py"
    assert client.review_comment(reply["id"])["body"] == "an answer"
    with pytest.raises(Unprocessable, match=r"(?i)replies to replies"):
        client.reply_to_review_comment(NUMBER, reply["id"], "nested")
    with pytest.raises(PermissionDenied):
        client.reply_to_review_comment(NUMBER + 1, top["id"], "wrong pull request")


def test_an_artifact_download_is_bounded_and_must_redirect(
    api: FakeGitHubAPI, client: GitHubClient
) -> None:
    from orch_review.hosts.github.api import GitHubApiError
    from tests.fakes.github_artifacts import ArtifactStore

    with ArtifactStore(api) as store:
        artifact = store.add("a", b"x" * 1000, head_sha="h" * 40)

        assert client.download_artifact(artifact["id"], 1000) == b"x" * 1000
        with pytest.raises(GitHubApiError, match="larger than 999 bytes"):
            client.download_artifact(artifact["id"], 999)
        with pytest.raises(PermissionDenied):
            client.download_artifact(artifact["id"] + 1, 1000)

    assert [h.get("authorization") for h in store.downloads] == [None, None]
