"""Fetching a change into a clone through a scratch repository (``fetch_isolated``)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from orch_review.errors import GitError
from orch_review.scope.git import fetch_isolated, has_commit, open_repo
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import commit


def test_a_shallow_clone_gets_the_whole_history_of_the_change(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    origin = git_repo({"a.txt": "1\n"})
    for n in range(2, 6):
        commit(origin, {"a.txt": f"{n}\n"})
    git(origin, "checkout", "-q", "-b", "change", "HEAD~2")
    head = commit(origin, {"b.txt": "the change\n"})
    git(origin, "update-ref", "refs/pull/1/head", head)
    git(origin, "checkout", "-q", "main")
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(work))
    repo = open_repo(work)

    fetch_isolated(repo, f"file://{origin}", {"refs/pull/1/head": "refs/orch-review/pull/1/head"})

    assert git(work, "rev-parse", "refs/orch-review/pull/1/head").strip() == head
    assert has_commit(repo, git(origin, "rev-parse", "change~1").strip())
    assert git(work, "fsck", "--connectivity-only").strip() == ""


def test_a_failed_fetch_never_shows_the_password_in_the_url(git_repo: GitRepoFactory) -> None:
    repo = open_repo(git_repo({"a.txt": "1\n"}))
    with socket.socket() as probe:  # a port nothing listens on: refused at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(GitError) as failed:
        fetch_isolated(repo, f"http://someone:s3cret@127.0.0.1:{port}/x.git", {"HEAD": None})

    assert "s3cret" not in str(failed.value)
    assert f"http://***@127.0.0.1:{port}/x.git" in str(failed.value)
