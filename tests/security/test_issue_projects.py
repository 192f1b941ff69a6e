"""A description that links another project's issue (`Closes other-group/private#1`, or its
URL) would have orch-review read it with its token and hand it to the model: a confused
deputy, where the token is a group's or a person's. Contained means: no request for another
project's issue unless the `issue-projects` setting names that project; the report says
which issue was left unread and why; a setting that names no project is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from orch_review.errors import ExitCode
from tests.conftest import git
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.github_issues import IssueTracker
from tests.fakes.gitlab_api import BOT_TOKEN, FakeGitLabAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.hosts.github.conftest import NUMBER, PullRepo, open_pull, pull_script

pytestmark = pytest.mark.slow
SECRET = "the private roadmap of other-group"


def _clone(pull: PullRepo, tmp_path: Path, bare_path: str, ref: str) -> Path:
    bare = tmp_path / "remote" / bare_path
    bare.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(pull.path), str(bare))
    git(bare, "update-ref", ref, pull.head)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", "--branch", "main", str(bare), str(work))
    return work


@pytest.mark.parametrize("named", [False, True], ids=["default", "named-in-issue-projects"])
def test_pr_reads_no_issue_of_another_repository_unless_named(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    tmp_path: Path,
    named: bool,
) -> None:
    work = _clone(pull_repo, tmp_path, "octo/demo.git", f"refs/pull/{NUMBER}/head")
    open_pull(github_api, pull_repo)
    github_api.pulls[NUMBER].body = (
        "Fixes #12. Closes other-group/private#1, and "
        "https://github.com/other-group/private/issues/2 too."
    )
    IssueTracker(github_api).add(12, title="Find users by name", body="Match names.")
    fake_api.policy = pull_script()
    env = {**api_env, "GITHUB_API_URL": github_api.base_url, "GITHUB_TOKEN": WRITE_TOKEN}
    if named:
        env["ORCH_REVIEW_ISSUE_PROJECTS"] = "other-group/private"

    result = run_cli(work, env, "pr", str(NUMBER), "--no-progress")

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    asked = [r.path for r in github_api.requests if r.method == "GET"]
    assert "/repos/octo/demo/issues/12" in asked
    others = [p for p in asked if p.startswith("/repos/other-group/")]
    if named:
        assert others == [
            "/repos/other-group/private/issues/1",
            "/repos/other-group/private/issues/2",
        ]
    else:
        assert others == []
        shown = result.stdout + result.stderr
        assert "other-group/private#1" in shown and "issue-projects" in shown


@pytest.mark.parametrize("named", [False, True], ids=["default", "named-in-issue-projects"])
def test_mr_reads_no_issue_of_another_project_unless_named(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    pull_repo: PullRepo,
    tmp_path: Path,
    named: bool,
) -> None:
    work = _clone(pull_repo, tmp_path, "group/demo.git", "refs/merge-requests/3/head")
    fake_api.policy = pull_script()
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(3, pull_repo.path, pull_repo.base, pull_repo.head)
        server = gitlab.api_url.removesuffix("/api/v4")
        gitlab.mrs[3].description = (
            f"Closes #12 and other-group/private#1; see {server}/other-group/sub/private/-/issues/2"
        )
        gitlab.add_issue(12, title="Find users by name", description="Match names.")
        env = {**api_env, "CI_API_V4_URL": gitlab.api_url, "GITLAB_TOKEN": BOT_TOKEN}
        if named:
            env["ORCH_REVIEW_ISSUE_PROJECTS"] = "other-group/private, other-group/sub/private"

        result = run_cli(work, env, "mr", "3", "--no-progress")

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    paths = [r.path for r in gitlab.requests]
    assert "/api/v4/projects/7/issues/12" in paths
    others = [p for p in paths if "other-group" in p]
    if named:
        assert others == [
            "/api/v4/projects/other-group%2Fprivate/issues/1",
            "/api/v4/projects/other-group%2Fsub%2Fprivate/issues/2",
        ]
    else:
        assert others == []
        assert "other-group/private#1" in result.stdout + result.stderr


def test_a_setting_that_names_no_project_is_refused_before_any_request(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    tmp_path: Path,
) -> None:
    work = _clone(pull_repo, tmp_path, "octo/demo.git", f"refs/pull/{NUMBER}/head")
    open_pull(github_api, pull_repo)
    env = {**api_env, "GITHUB_API_URL": github_api.base_url, "GITHUB_TOKEN": WRITE_TOKEN}
    env["ORCH_REVIEW_ISSUE_PROJECTS"] = "octo/demo, ../etc"

    result = run_cli(work, env, "pr", str(NUMBER), "--no-progress")

    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "ORCH_REVIEW_ISSUE_PROJECTS" in result.stderr and "project paths" in result.stderr
    assert fake_api.message_requests == []
