"""`orch-review github` (the Action) adds the walkthrough to the summary comment and the job
summary, marked unverified; `--no-walkthrough` leaves it out."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.github_api import FakeGitHubAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.hosts.github.conftest import NUMBER, PullRepo, pull_script
from tests.intent_model import walkthrough_of, with_walkthrough


def test_the_summary_comment_has_the_walkthrough(
    opened_env: dict[str, str], fake_api: FakeMessagesAPI, github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
) -> None:  # fmt: skip
    fake_api.policy = with_walkthrough(pull_script())

    result = run_cli(pull_repo.path, opened_env, "github", "--no-progress")

    assert result.returncode == 0, result.stderr
    assert "orch-review: sandbox: " in result.stderr  # the job log says what confines agents
    (summary,) = github_api.pulls[NUMBER].issue_comments
    section, diagram = walkthrough_of(summary["body"])
    assert "`app.py`" in section and diagram is not None and len(diagram.nodes) == 3
    walkthrough_of(Path(opened_env["GITHUB_STEP_SUMMARY"]).read_text())


def test_no_walkthrough_leaves_it_out(
    opened_env: dict[str, str], fake_api: FakeMessagesAPI, github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
) -> None:  # fmt: skip
    fake_api.policy = with_walkthrough(pull_script())

    result = run_cli(pull_repo.path, opened_env, "github", "--no-walkthrough", "--no-progress")

    assert result.returncode == 0, result.stderr
    (summary,) = github_api.pulls[NUMBER].issue_comments
    assert "Walkthrough" not in summary["body"]
    assert len(fake_api.requests_for("main")) == 3
