"""Reading the pull request and the repository from the environment GitHub Actions sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orch_review.github.event import (
    GitHubContext,
    GitHubEventError,
    PullRequest,
    load_event,
    pull_request_from_event,
)
from tests.github.conftest import EVENTS


@pytest.mark.parametrize(
    ("action", "fork"), [("opened", False), ("synchronize", True)], ids=["opened", "sync-fork"]
)
def test_payload_fixtures(action: str, fork: bool) -> None:
    path = EVENTS / f"pull_request.{action}.json"
    name, payload = load_event(
        {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(path)}
    )

    pull = pull_request_from_event(name, payload, "octo/demo")

    assert pull == PullRequest(
        number=0,
        base_sha="BASE_SHA",
        head_sha="HEAD_SHA",
        base_ref="main",
        head_repository="contributor/demo" if fork else "octo/demo",
        base_repository="octo/demo",
    )
    assert pull.from_fork is fork


def test_context_reads_the_actions_variables_and_hides_the_token() -> None:
    env = {
        "GITHUB_REPOSITORY": "octo/demo",
        "GITHUB_API_URL": "https://ghe.example/api/v3/",
        "GITHUB_SERVER_URL": "https://ghe.example",
        "GITHUB_TOKEN": "secret-token",
    }
    context = GitHubContext.from_env(env)
    assert context.api_url == "https://ghe.example/api/v3"
    assert context.token == "secret-token" and "secret-token" not in repr(context)
    assert GitHubContext.from_env({"GH_TOKEN": "t"}, "a/b").api_url == "https://api.github.com"


@pytest.mark.parametrize("repository", ["", "noslash", "a/b/c", "/b"])
def test_bad_repository(repository: str) -> None:
    with pytest.raises(GitHubEventError, match="owner/name"):
        GitHubContext.from_env({"GITHUB_REPOSITORY": repository})


def test_missing_or_broken_payloads(tmp_path: Path) -> None:
    with pytest.raises(GitHubEventError, match="GITHUB_EVENT_PATH is not set"):
        load_event({})
    broken = tmp_path / "event.json"
    broken.write_text("{not json")
    with pytest.raises(GitHubEventError, match="could not be read"):
        load_event({"GITHUB_EVENT_PATH": str(broken)})
    broken.write_text(json.dumps({"pull_request": {"number": 1, "head": {}}}))
    name, payload = load_event({}, broken)
    with pytest.raises(GitHubEventError, match="lacks 'base'"):
        pull_request_from_event(name, payload, "o/r")


def test_a_deleted_fork_counts_as_a_fork() -> None:
    pull = PullRequest.from_payload(
        {"number": 3, "head": {"sha": "h", "repo": None}, "base": {"sha": "b", "ref": "main"}},
        "o/r",
    )
    assert pull.head_repository is None and pull.from_fork
