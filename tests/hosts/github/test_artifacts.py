"""The review's conversation kept as an artifact: written by the review run, downloaded and
validated by a comment's run, which treats it as hostile data."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orch_review.hosts.github.api import GitHubClient
from orch_review.hosts.github.artifacts import (
    MAX_MEMBER_BYTES,
    MEMBER,
    ArtifactUnusable,
    StoredReview,
    artifact_name,
    candidates,
    fetch_review,
    parse,
    read_member,
    write,
)
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.github_artifacts import ArtifactStore, zipped
from tests.hosts.github.conftest import NUMBER, REPOSITORY
from tests.hosts.github.test_comments import finding

HEAD = "a" * 40
CONVERSATION = {
    "messages": [{"role": "user", "content": "review"}, {"role": "assistant", "content": "ok"}],
    "mode": {"enabled": True, "announced": True, "turns_since_notice": 0},
    "snapshot_commit": HEAD,
    "snapshot_objects": "",
    "scope": "aaaa against merge-base with main",
}


def stored(**changes: Any) -> dict[str, Any]:
    review = StoredReview(REPOSITORY, NUMBER, HEAD, CONVERSATION, (finding("app.py", 3),))
    return {**review.to_json(), **changes}


def raw(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode()


def test_written_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "conversation" / MEMBER
    review = StoredReview(REPOSITORY, NUMBER, HEAD, CONVERSATION, (finding("app.py", 3),))
    write(path, review)

    back = parse(read_member(zipped({MEMBER: path.read_bytes()})), REPOSITORY, NUMBER, HEAD)

    assert back.conversation == CONVERSATION
    assert back.finding("fp1") == finding("app.py", 3) and back.finding("other") is None


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (stored(format="something"), "no orch-review conversation"),
        (stored(version=2), "version 2"),
        (stored(pull_request=8), "another pull request"),
        (stored(repository="fork/demo"), "another pull request"),
        (stored(head_sha="b" * 40), "earlier head"),
        (stored(conversation={**CONVERSATION, "snapshot_commit": "c" * 40}), "other content"),
        (stored(conversation={**CONVERSATION, "messages": []}), "no messages"),
        (stored(conversation={**CONVERSATION, "messages": [{"role": "tool"}]}), "malformed"),
        (stored(conversation={**CONVERSATION, "messages": [{"role": "user"}]}), "malformed"),
        (stored(conversation={**CONVERSATION, "mode": "on"}), "malformed"),
        (stored(findings={"a": 1}), "not a list"),
        (stored(findings=[{"path": "x"}]), "finding is malformed"),
    ],
    ids=[
        "format",
        "version",
        "other-pull",
        "other-repository",
        "earlier-head",
        "other-commit",
        "no-messages",
        "bad-role",
        "no-content",
        "bad-mode",
        "findings-not-list",
        "bad-finding",
    ],
)
def test_content_is_validated_strictly(data: dict[str, Any], why: str) -> None:
    with pytest.raises(ArtifactUnusable, match=why):
        parse(raw(data), REPOSITORY, NUMBER, HEAD)


def test_not_json_is_unusable() -> None:
    with pytest.raises(ArtifactUnusable, match="not JSON"):
        parse(b"\xff{", REPOSITORY, NUMBER, HEAD)


def test_only_the_expected_member_is_read() -> None:
    with pytest.raises(ArtifactUnusable, match=f"no {MEMBER}"):
        read_member(zipped({f"../{MEMBER}": b"{}", "other.json": b"{}"}))
    with pytest.raises(ArtifactUnusable, match="not a readable zip"):
        read_member(b"PK\x03\x04 not really")


def test_a_member_larger_than_allowed_is_refused_without_reading_it_all() -> None:
    buffer = io.BytesIO()
    block = b"\0" * (1 << 20)
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open(MEMBER, "w", force_zip64=True) as member,
    ):
        for _ in range(MAX_MEMBER_BYTES // len(block) + 1):
            member.write(block)  # a zip bomb: a small archive of a huge member

    with pytest.raises(ArtifactUnusable, match="too large"):
        read_member(buffer.getvalue())


def _artifact(**changes: Any) -> dict[str, Any]:
    run = {"repository_id": 1, "head_repository_id": 1, "head_sha": HEAD}
    base = {
        "id": 1,
        "expired": False,
        "size_in_bytes": 100,
        "created_at": "2026-11-30T12:00:00Z",
        "workflow_run": run,
    }
    return {**base, **changes}


def test_candidates_are_this_repositorys_runs_for_the_head_newest_first() -> None:
    newer = _artifact(id=2, created_at="2026-11-30T13:00:00Z")
    listed = [
        _artifact(),
        newer,
        _artifact(id=3, expired=True),
        _artifact(
            id=4, workflow_run={"repository_id": 1, "head_repository_id": 9, "head_sha": HEAD}
        ),
        _artifact(
            id=5, workflow_run={"repository_id": 1, "head_repository_id": 1, "head_sha": "b"}
        ),
        _artifact(id=6, size_in_bytes=10**12),
        _artifact(id=7, workflow_run=None),
    ]

    assert [a["id"] for a in candidates(listed, HEAD)] == [2, 1]


@pytest.fixture
def store(github_api: FakeGitHubAPI) -> Iterator[ArtifactStore]:
    with ArtifactStore(github_api) as artifacts:
        yield artifacts


@pytest.fixture
def client(github_api: FakeGitHubAPI) -> Iterator[GitHubClient]:
    with GitHubClient(github_api.base_url, REPOSITORY, WRITE_TOKEN) as c:
        yield c


def test_the_newest_usable_artifact_is_downloaded_without_the_token(
    store: ArtifactStore, client: GitHubClient
) -> None:
    store.add(artifact_name(NUMBER), zipped({MEMBER: raw(stored())}), head_sha=HEAD)
    store.add(
        artifact_name(NUMBER),
        zipped({MEMBER: b"{}"}),
        head_sha=HEAD,
        created_at="2026-11-30T13:00:00Z",
    )
    store.add(artifact_name(NUMBER + 1), zipped({MEMBER: raw(stored())}), head_sha=HEAD)

    review = fetch_review(client, REPOSITORY, NUMBER, HEAD)

    assert review.head_sha == HEAD and review.conversation == CONVERSATION
    assert len(store.downloads) == 2  # the newest was unusable: the one before it was read
    assert all("authorization" not in headers for headers in store.downloads)


def test_no_artifact_for_the_head_says_so(store: ArtifactStore, client: GitHubClient) -> None:
    store.add(artifact_name(NUMBER), zipped({MEMBER: raw(stored())}), head_sha="b" * 40)

    with pytest.raises(ArtifactUnusable, match=f"no review of the head {HEAD[:12]}"):
        fetch_review(client, REPOSITORY, NUMBER, HEAD)
    assert store.downloads == []


def test_without_actions_read_the_reason_names_the_permission(
    store: ArtifactStore, client: GitHubClient
) -> None:
    store.actions_read = False

    with pytest.raises(ArtifactUnusable, match="actions: read"):
        fetch_review(client, REPOSITORY, NUMBER, HEAD)


def test_an_expired_artifact_is_not_downloaded(store: ArtifactStore, client: GitHubClient) -> None:
    store.add(artifact_name(NUMBER), zipped({MEMBER: raw(stored())}), head_sha=HEAD, expired=True)

    with pytest.raises(ArtifactUnusable, match="no review"):
        fetch_review(client, REPOSITORY, NUMBER, HEAD)
