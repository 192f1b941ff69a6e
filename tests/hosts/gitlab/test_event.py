"""GitLab CI's variables: where the API is and which CA signs it, read the same way by
`orch-review gitlab`, `orch-review mr` and `eval mine`."""

from __future__ import annotations

import pytest

from orch_review.hosts.gitlab.event import (
    DEFAULT_API_URL,
    GitLabEventError,
    MergeRequestJob,
    api_url_from_env,
    ca_file_from_env,
)


def test_the_api_address_defaults_to_gitlab_com_and_loses_its_trailing_slash() -> None:
    assert api_url_from_env({}) == DEFAULT_API_URL == "https://gitlab.com/api/v4"
    assert api_url_from_env({"CI_API_V4_URL": " https://git.example/api/v4/ "}) == (
        "https://git.example/api/v4"
    )


@pytest.mark.parametrize("url", ["file:///etc/passwd", "git.example/api/v4", "ftp://x/api/v4"])
def test_an_api_address_that_is_not_http_is_refused_before_any_request(url: str) -> None:
    with pytest.raises(GitLabEventError, match="not an http"):
        api_url_from_env({"CI_API_V4_URL": url})


def test_the_ca_file_is_read_only_when_it_is_set() -> None:
    assert ca_file_from_env({"CI_SERVER_TLS_CA_FILE": "  "}) is None
    assert ca_file_from_env({"CI_SERVER_TLS_CA_FILE": "/ca.pem"}) == "/ca.pem"


def test_a_merge_request_job_needs_the_api_address_gitlab_ci_sets() -> None:
    env = {
        "CI_MERGE_REQUEST_PROJECT_ID": "7",
        "CI_MERGE_REQUEST_IID": "3",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": "a" * 40,
        "CI_COMMIT_SHA": "b" * 40,
    }
    with pytest.raises(GitLabEventError, match="CI_API_V4_URL"):
        MergeRequestJob.from_env(env)
    job = MergeRequestJob.from_env(
        {**env, "CI_API_V4_URL": "http://127.0.0.1:1/api/v4/", "CI_SERVER_TLS_CA_FILE": "/c"}
    )
    assert (job.api_url, job.ca_file) == ("http://127.0.0.1:1/api/v4", "/c")
