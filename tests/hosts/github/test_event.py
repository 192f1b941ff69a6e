"""Reading the pull request and the repository from the environment GitHub Actions sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orch_review.hosts.github.event import (
    GitHubContext,
    GitHubEventError,
    PullRequest,
    comment_from_event,
    load_event,
    pull_request_from_event,
)
from tests.hosts.github.conftest import EVENTS


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
        title="Add user lookup",
        body="" if fork else "Adds find_user().",  # a null body reads as empty
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


def _comment_payload(name: str) -> dict[str, object]:
    payload: dict[str, object] = json.loads((EVENTS / f"{name}.created.json").read_text())
    return payload


def test_an_issue_comment_on_a_pull_request() -> None:
    payload = _comment_payload("issue_comment")
    payload["issue"]["number"] = 7  # type: ignore[index]
    payload["comment"].update(id=42, body="@orch-review why?")  # type: ignore[attr-defined]

    comment = comment_from_event("issue_comment", payload, "octo/demo")

    assert (comment.number, comment.comment_id, comment.body) == (7, 42, "@orch-review why?")
    assert comment.on_pull_request and not comment.in_review_thread
    assert comment.thread_top is None and comment.pull is None  # read from GET /pulls/7
    assert comment.login == "octo-maintainer" and comment.action == "created"
    assert comment.created_at == "2026-11-30T12:30:00Z"


def test_an_issue_comment_on_an_issue_is_not_on_a_pull_request() -> None:
    payload = _comment_payload("issue_comment")
    payload["issue"]["number"] = 3  # type: ignore[index]
    payload["comment"]["id"] = 5  # type: ignore[index]
    del payload["issue"]["pull_request"]  # type: ignore[attr-defined]

    assert not comment_from_event("issue_comment", payload, "octo/demo").on_pull_request


@pytest.mark.parametrize(("reply_to", "top"), [(None, 42), (40, 40)], ids=["top", "reply"])
def test_a_review_comment_names_its_threads_top_comment(reply_to: int | None, top: int) -> None:
    payload = _comment_payload("pull_request_review_comment")
    payload["comment"].update(id=42, in_reply_to_id=reply_to)  # type: ignore[attr-defined]
    payload["pull_request"]["number"] = 7  # type: ignore[index]

    comment = comment_from_event("pull_request_review_comment", payload, "octo/demo")

    assert comment.in_review_thread and comment.thread_top == top
    assert comment.pull is not None and comment.pull.head_sha == "HEAD_SHA"
    assert comment.number == 7


@pytest.mark.parametrize(
    "broken",
    [
        lambda p: p["comment"].pop("id"),
        lambda p: p["comment"].update(id="42"),
        lambda p: p["comment"].update(id=True),
        lambda p: p.pop("issue"),
    ],
    ids=["no-id", "string-id", "bool-id", "no-issue"],
)
def test_a_malformed_comment_payload_is_a_clear_error(broken: object) -> None:
    payload = _comment_payload("issue_comment")
    payload["issue"]["number"] = 7  # type: ignore[index]
    payload["comment"]["id"] = 42  # type: ignore[index]
    broken(payload)  # type: ignore[operator]

    with pytest.raises(GitHubEventError, match="issue_comment"):
        comment_from_event("issue_comment", payload, "octo/demo")


def test_a_pull_request_event_is_not_a_comment() -> None:
    with pytest.raises(GitHubEventError, match="no comment"):
        comment_from_event("pull_request", {"pull_request": {}}, "octo/demo")
