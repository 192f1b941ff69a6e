"""`verify = false`: the verification wave is skipped and the review says it is incomplete."""

from __future__ import annotations

from orch_review.errors import ExitCode
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script


def test_without_verification_no_verifier_runs_and_the_review_is_incomplete(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, {**api_env, "ORCH_REVIEW_VERIFY": "false"}, "--all")

    assert result.returncode == ExitCode.INCOMPLETE, result.stderr
    assert fake_api.requests_for("verifier") == []
    assert fake_api.requests_for("subagent")
    assert "verification off" in result.stdout + result.stderr


def test_with_verification_on_by_default_the_verifiers_run(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    assert fake_api.requests_for("verifier")
