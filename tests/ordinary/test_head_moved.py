"""HEAD moving while a review runs (a commit, a checkout) is said, not passed over."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script


def test_a_commit_made_during_the_review_is_warned_about(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    before = git(repo, "rev-parse", "HEAD").strip()
    script = planted_script()
    committed: list[str] = []

    def policy(request: ModelRequest) -> Reply:
        if request.role == "main" and not committed:  # the user commits meanwhile
            git(repo, "commit", "-q", "--allow-empty", "-m", "meanwhile")
            committed.append(git(repo, "rev-parse", "HEAD").strip())
        return script(request)

    fake_api.policy = policy
    report = tmp_path / "report.json"

    result = run_cli(repo, api_env, "--all", "--no-progress", "--json", str(report))

    said = " ".join(result.stdout.split())
    assert result.returncode == 1, result.stderr
    assert f"HEAD moved during the review, from {before[:12]} to {committed[0][:12]}" in said
    warnings = json.loads(report.read_text())["warnings"]
    assert any("HEAD moved during the review" in w for w in warnings)


def test_no_warning_when_head_stays(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all", "--no-progress")

    assert result.returncode == 1, result.stderr
    assert "HEAD moved" not in result.stdout + result.stderr
