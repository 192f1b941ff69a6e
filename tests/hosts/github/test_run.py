"""Pieces of `orch-review github` that need no review: finding the pull request, outputs."""

from __future__ import annotations

from pathlib import Path

from orch_review.hosts.github.event import GitHubContext
from orch_review.hosts.github.outputs import OUTPUT_NAMES, output_values, write_outputs
from orch_review.hosts.github.run import PR_TARGET_WARNING, GitHubRun, find_pull_request
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI
from tests.hosts.github.conftest import EVENTS, NUMBER, REPOSITORY, read_outputs
from tests.reporters.sample import sample_report


def test_pr_number_reads_the_pull_request_from_the_api(github_api: FakeGitHubAPI) -> None:
    github_api.add_pull(NUMBER, base_sha="b" * 40, head_sha="h" * 40, files=[])
    context = GitHubContext(REPOSITORY, github_api.base_url, token=WRITE_TOKEN)

    pull = find_pull_request(GitHubRun(pr_number=NUMBER), context, {}, print)

    assert (pull.number, pull.base_sha, pull.head_sha) == (NUMBER, "b" * 40, "h" * 40)
    assert not pull.from_fork


def test_pull_request_target_gets_a_warning() -> None:
    warnings: list[str] = []
    env = {
        "GITHUB_EVENT_NAME": "pull_request_target",
        "GITHUB_EVENT_PATH": str(EVENTS / "pull_request.opened.json"),
    }

    find_pull_request(GitHubRun(), GitHubContext(REPOSITORY), env, warnings.append)

    assert warnings == [f"::warning title=orch-review::{PR_TARGET_WARNING}"]


def test_outputs_cannot_be_injected_through_a_value(tmp_path: Path) -> None:
    env = {"GITHUB_OUTPUT": str(tmp_path / "out")}
    values = output_values(sample_report(), tmp_path / "x\nincomplete=false.sarif", None)
    assert list(values) == list(OUTPUT_NAMES)

    write_outputs(env, values)

    outputs = read_outputs(env)
    assert outputs["incomplete"] == "true"  # the sample report is incomplete
    assert outputs["sarif-file"].endswith("x\nincomplete=false.sarif")
    assert outputs["findings-count"] == "4" and outputs["high-count"] == "1"
    assert outputs["json-file"] == "" and outputs["cost-usd"] == "1.9625"


def test_outside_actions_nothing_is_written() -> None:
    assert write_outputs({}, {"findings-count": "0"}) is None


def test_no_conversation_leaves_no_file_not_even_a_stale_one(tmp_path: Path) -> None:
    from orch_review.hosts.github.artifacts import MEMBER, parse
    from orch_review.hosts.github.event import PullRequest
    from orch_review.hosts.github.run import keep_conversation

    pull = PullRequest(NUMBER, "b" * 40, "a" * 40, "main", REPOSITORY, REPOSITORY)
    path = tmp_path / "conversation" / MEMBER
    conversation = {
        "messages": [{"role": "user", "content": "review"}],
        "mode": {"enabled": True, "announced": True, "turns_since_notice": 0},
        "snapshot_commit": "a" * 40,
        "snapshot_objects": "",
        "scope": "the pull request",
    }
    report = sample_report()

    keep_conversation(path, conversation, report, pull)
    kept = parse(path.read_bytes(), REPOSITORY, NUMBER, "a" * 40)
    assert kept.conversation == conversation and len(kept.findings) == len(report.findings)

    keep_conversation(path, None, report, pull)  # a later review that left none
    assert not path.exists()
