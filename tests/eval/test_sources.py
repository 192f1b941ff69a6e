"""A case's repository: a local folder as given, a URL cloned once and fetched on demand."""

from __future__ import annotations

from pathlib import Path

import pytest

from orch_review.errors import UsageError
from orch_review.eval.cases import Case
from orch_review.eval.sources import clone_folder, is_url, local_repository, refspec
from tests.conftest import GitRepoFactory, git, write


def test_urls_and_paths_are_told_apart() -> None:
    assert is_url("https://github.com/a/b.git") and is_url("file:///tmp/x")
    assert is_url("git@github.com:a/b.git")
    assert not is_url("../repo") and not is_url("/abs/repo") and not is_url("ext::sh -c x")


def test_what_is_fetched_for_a_missing_revision() -> None:
    assert refspec("origin/pull/12/head") == "+refs/pull/12/head:refs/remotes/origin/pull/12/head"
    assert refspec("a" * 40) == "a" * 40
    assert refspec("origin/pull/1/head:refs/heads/x") is None
    assert refspec("main") is None


def test_a_pull_request_head_is_fetched_into_the_cached_clone(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    upstream = git_repo({"a.py": "x = 1\n"})
    base = git(upstream, "rev-parse", "HEAD").strip()
    git(upstream, "checkout", "-q", "-b", "topic")
    write(upstream, {"a.py": "x = 2\n"})
    git(upstream, "commit", "-q", "-am", "a pull request")
    pull = git(upstream, "rev-parse", "HEAD").strip()
    git(upstream, "update-ref", "refs/pull/7/head", pull)
    git(upstream, "checkout", "-q", "main")
    git(upstream, "branch", "-q", "-D", "topic")  # reachable from refs/pull/7/head only
    case = Case("c", upstream.as_uri(), base, "origin/pull/7/head")
    cache = tmp_path / "cache"

    folder = local_repository(case, tmp_path, cache)

    assert folder == clone_folder(cache, upstream.as_uri())
    assert git(folder, "rev-parse", "origin/pull/7/head").strip() == pull
    assert local_repository(case, tmp_path, cache) == folder  # reused, not cloned again


def test_a_local_repository_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a folder"):
        local_repository(Case("c", "nowhere", "a", "b"), tmp_path, tmp_path / "cache")
