"""The GitLab client against the fake GitLab: pagination by x-next-page, 429 with
Retry-After, the token sent to the API's own host only, and errors in GitLab's words."""

from __future__ import annotations

import pytest

from orch_review.hosts.gitlab.api import Forbidden, GitLabApiError, GitLabClient, NotFound
from tests.conftest import GitRepoFactory, git, write
from tests.fakes.gitlab_api import BOT_TOKEN, JOB_TOKEN, FakeGitLabAPI


def _mr(gitlab: FakeGitLabAPI, git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "x = 1\n"})
    base = git(repo, "rev-parse", "HEAD").strip()
    write(repo, {"a.py": "x = 2\n"})
    git(repo, "commit", "-qam", "change")
    gitlab.add_version(1, repo, base, git(repo, "rev-parse", "HEAD").strip())


def test_every_page_is_read_and_429_waits_as_told(git_repo: GitRepoFactory) -> None:
    waits: list[float] = []
    with FakeGitLabAPI() as gitlab:
        _mr(gitlab, git_repo)
        for n in range(250):
            gitlab.add_human_discussion(1, f"note {n}")
        gitlab.rate_limited, gitlab.retry_after = 2, "7"
        with GitLabClient(gitlab.api_url, 7, BOT_TOKEN, sleep=waits.append) as client:
            discussions = client.discussions(1)

    assert [d["notes"][0]["body"] for d in discussions] == [f"note {n}" for n in range(250)]
    pages = [r.query.get("page") for r in gitlab.requests if r.status == 200]
    assert pages == [["1"], ["2"], ["3"]]  # 100 a page, the most GitLab gives
    assert waits == [7.0, 7.0]


def test_a_wait_longer_than_allowed_fails_at_once(git_repo: GitRepoFactory) -> None:
    waits: list[float] = []
    with FakeGitLabAPI() as gitlab:
        _mr(gitlab, git_repo)
        gitlab.rate_limited, gitlab.retry_after = 1, "3600"
        client = GitLabClient(gitlab.api_url, 7, BOT_TOKEN, sleep=waits.append, max_wait=60)
        with client, pytest.raises(GitLabApiError, match="asks to wait 3600 s"):
            client.discussions(1)
    assert waits == []


def test_the_job_token_cannot_write_notes_and_unknown_things_are_not_found(
    git_repo: GitRepoFactory,
) -> None:
    with FakeGitLabAPI() as gitlab:
        _mr(gitlab, git_repo)
        job = GitLabClient(gitlab.api_url, 7, None, job_token=JOB_TOKEN)
        with job, pytest.raises(Forbidden, match="403"):
            job.create_note(1, "hello")
        with GitLabClient(gitlab.api_url, 7, BOT_TOKEN) as client:
            with pytest.raises(NotFound):
                client.merge_request(404)
            assert client.access_level(12345) == 0  # not a member
    sent = gitlab.requests[0].headers
    assert sent.get("job-token") == JOB_TOKEN and "private-token" not in sent


def test_pages_follow_x_next_page_on_the_apis_own_host_never_a_link_header(
    git_repo: GitRepoFactory,
) -> None:
    # GitLab sends a Link header with every page ("REST API", "Pagination Link header"); one
    # that names another host (a proxy's mistake, a hostile server) must get no request.
    with FakeGitLabAPI() as gitlab, FakeGitLabAPI() as elsewhere:
        _mr(gitlab, git_repo)
        for n in range(150):
            gitlab.add_human_discussion(1, f"note {n}")
        gitlab.link_base = elsewhere.api_url.removesuffix("/api/v4")
        with GitLabClient(gitlab.api_url, 7, BOT_TOKEN) as client:
            discussions = client.discussions(1)
        first = next(r for r in gitlab.requests if r.path.endswith("/discussions"))

    assert len(discussions) == 150
    assert elsewhere.requests == []
    assert [r.query["page"] for r in gitlab.requests] == [["1"], ["2"]]
    assert first.status == 200


def test_the_summary_note_is_found_whatever_order_gitlab_lists_notes_in(
    git_repo: GitRepoFactory,
) -> None:
    from orch_review.hosts.gitlab.publish import upsert_summary
    from tests.fakes.gitlab_api import BOT

    # GitLab lists a merge request's notes newest first ("Notes API", sort defaults to desc).
    with FakeGitLabAPI() as gitlab:
        _mr(gitlab, git_repo)
        with GitLabClient(gitlab.api_url, 7, BOT_TOKEN) as client:
            summary = upsert_summary(client, 1, "<!-- orch-review:summary -->\nfirst", BOT["id"])
            gitlab.add_human_discussion(1, "<!-- orch-review:summary -->\na person's copy")
            again = upsert_summary(client, 1, "<!-- orch-review:summary -->\nsecond", BOT["id"])

    assert again == summary
    bodies = [n["body"] for n in gitlab.notes_of(1)]
    assert bodies == [
        "<!-- orch-review:summary -->\nsecond",
        "<!-- orch-review:summary -->\na person's copy",
    ]


def test_a_429_without_retry_after_waits_a_minute(git_repo: GitRepoFactory) -> None:
    waits: list[float] = []
    with FakeGitLabAPI() as gitlab:
        _mr(gitlab, git_repo)
        gitlab.rate_limited, gitlab.retry_after = 1, None
        with GitLabClient(gitlab.api_url, 7, BOT_TOKEN, sleep=waits.append) as client:
            assert client.discussions(1) == []
    assert waits == [60.0]
