"""Completing a shallow checkout: real clones with ``--depth 1`` of a real repository whose
pull request ref is fetched the way actions/checkout does it."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import pytest

from orch_review.errors import GitError
from orch_review.scope.git import is_shallow, open_repo
from orch_review.scope.git.fetch_change import auth_env, ensure_history, has_merge_base
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import commit


@dataclass(frozen=True)
class Origin:
    path: Path
    base: str  # the base branch's tip
    head: str  # the pull request's head
    fork_point: str


def make_origin(git_repo: GitRepoFactory, feature_commits: int = 6) -> Origin:
    """main with history, a feature branch of ``feature_commits`` commits, main moved on,
    and ``refs/pull/1/merge`` as GitHub creates it."""
    origin = git_repo({"README.md": "# demo\n", "app.py": "x = 1\n"})
    for i in range(3):
        commit(origin, {"app.py": f"x = {i + 2}\n"}, f"main {i}")
    fork_point = git(origin, "rev-parse", "HEAD").strip()
    git(origin, "checkout", "-q", "-b", "feature")
    for i in range(feature_commits):
        commit(origin, {f"feature{i}.py": f"y = {i}\n"}, f"feature {i}")
    head = git(origin, "rev-parse", "HEAD").strip()
    git(origin, "checkout", "-q", "main")
    base = commit(origin, {"README.md": "# demo, moved on\n"}, "main later")
    git(origin, "checkout", "-q", "--detach")
    git(origin, "merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    git(origin, "update-ref", "refs/pull/1/merge", "HEAD")
    git(origin, "checkout", "-q", "main")
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")  # as GitHub allows
    return Origin(origin, base, head, fork_point)


def checkout_like_actions(origin: Origin, where: Path) -> Path:
    """What actions/checkout does with the default fetch-depth 1 for a pull_request event."""
    where.mkdir()
    git(where, "init", "-q")
    git(where, "remote", "add", "origin", f"file://{origin.path}")
    git(where, "fetch", "-q", "--no-tags", "--depth=1", "origin", "+refs/pull/1/merge")
    git(where, "checkout", "-q", "--detach", "FETCH_HEAD")
    return where


def test_a_depth_1_checkout_gets_the_merge_base(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    origin = make_origin(git_repo)
    repo = open_repo(checkout_like_actions(origin, tmp_path / "work"))
    assert is_shallow(repo) and not has_merge_base(repo, origin.base, origin.head)

    runs = ensure_history(repo, origin.base, origin.head)

    assert has_merge_base(repo, origin.base, origin.head)
    assert git(tmp_path / "work", "merge-base", origin.base, origin.head).strip() == (
        origin.fork_point
    )
    assert runs[0].startswith("git fetch --no-tags --no-recurse-submodules --depth=50 origin")


def test_deepens_step_by_step_when_the_branch_is_long(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    origin = make_origin(git_repo, feature_commits=6)
    repo = open_repo(checkout_like_actions(origin, tmp_path / "work"))

    runs = ensure_history(repo, origin.base, origin.head, first_depth=2, deepen_steps=(2, 4, 8))

    assert has_merge_base(repo, origin.base, origin.head)
    assert [run.split()[4] for run in runs] == ["--depth=2", "--deepen=2", "--deepen=4"]


def test_fails_in_one_sentence_naming_fetch_depth_0(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    origin = make_origin(git_repo, feature_commits=6)
    repo = open_repo(checkout_like_actions(origin, tmp_path / "work"))

    with pytest.raises(GitError) as raised:
        ensure_history(repo, origin.base, origin.head, first_depth=1, deepen_steps=(1,))

    message = str(raised.value)
    assert "set `fetch-depth: 0` on the actions/checkout step" in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_unreachable_remote_fails_with_git_s_reason(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    origin = make_origin(git_repo)
    work = checkout_like_actions(origin, tmp_path / "work")
    git(work, "remote", "set-url", "origin", f"file://{tmp_path / 'gone'}")

    with pytest.raises(GitError, match=r"git said: .*fetch-depth: 0"):
        ensure_history(open_repo(work), origin.base, origin.head)


def test_a_full_clone_fetches_nothing(git_repo: GitRepoFactory) -> None:
    origin = make_origin(git_repo)
    assert ensure_history(open_repo(origin.path), origin.base, origin.head) == []


def test_auth_env_puts_the_token_in_an_extra_header_not_in_argv(
    git_repo: GitRepoFactory,
) -> None:
    env = auth_env("https://github.example/", "tok")
    assert env["GIT_CONFIG_KEY_0"] == "http.https://github.example/.extraheader"
    encoded = env["GIT_CONFIG_VALUE_0"].removeprefix("AUTHORIZATION: basic ")
    assert base64.b64decode(encoded) == b"x-access-token:tok"
    assert auth_env("https://github.example", None) == {"GIT_TERMINAL_PROMPT": "0"}
    # actions/checkout's persisted credentials already send the header: do not double it.
    repo = git_repo({"a": "a"})
    git(repo, "config", "http.https://github.example/.extraheader", "AUTHORIZATION: basic x")
    assert "GIT_CONFIG_COUNT" not in auth_env("https://github.example", "tok", open_repo(repo))
