"""End to end: `orch-review github` as a subprocess, against the fake Messages API and the
fake GitHub REST API, in a real repository with a pull request."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.fakes.github_api import READ_TOKEN, FakeGitHubAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.hosts.github.conftest import (
    NUMBER,
    PullRepo,
    event_payload,
    open_pull,
    pull_script,
    read_outputs,
    shallow_checkout,
    with_event,
)
from tests.scripted import is_intent


def _comments(api: FakeGitHubAPI) -> list[tuple[str, int]]:
    return sorted((c["path"], c["line"]) for c in api.pulls[NUMBER].review_comments)


def test_opened_pull_request_gets_inline_comments_on_diff_lines_and_one_summary(
    opened_env: dict[str, str], github_api: FakeGitHubAPI, pull_repo: PullRepo, tmp_path: Path
) -> None:
    env = opened_env
    sarif, report = tmp_path / "out" / "r.sarif", tmp_path / "out" / "r.json"

    result = run_cli(
        pull_repo.path,
        env,
        "github",
        "--filter-mode",
        "nofilter",
        "--sarif",
        str(sarif),
        "--json",
        str(report),
    )

    assert result.returncode == 0, result.stderr  # fail-on defaults to never
    # Inline: the two findings on added lines; calc.py:2 and lib.py:2 are outside the diff.
    assert _comments(github_api) == [("app.py", 6), ("calc.py", 30)]
    assert all(r.status != 422 for r in github_api.requests)
    (summary,) = github_api.pulls[NUMBER].issue_comments
    body = summary["body"]
    assert body.startswith("<!-- orch-review:summary -->")
    assert "**4 confirmed findings**: 1 high · 2 medium · 1 low · 0 info" in body
    assert "| medium | `calc.py:2` |" in body and "lines outside the diff" in body
    assert "| low | `lib.py:2` |" in body and "file not changed in this pull request" in body
    assert "Refuted findings (1)" in body
    # What plan estimates, against what the review cost: the numbers of the report.
    estimate = re.search(
        r"Estimated before the review: \$([\d.]+)-\$([\d.]+); actual \$([\d.]+)", body
    )
    assert estimate, body
    cost = json.loads(report.read_text())["usage"]["total"]["cost_usd"]
    assert float(estimate.group(3)) == pytest.approx(cost, rel=0.05)
    assert 0 < float(estimate.group(1)) < float(estimate.group(2))
    outputs = read_outputs(env)
    assert outputs["findings-count"] == "4" and outputs["high-count"] == "1"
    assert outputs["incomplete"] == "false"
    assert outputs["sarif-file"] == str(sarif) and outputs["json-file"] == str(report)
    assert float(outputs["cost-usd"]) > 0
    assert json.loads(sarif.read_text())["runs"][0]["results"]
    assert "::error" not in result.stdout  # comments were posted: no annotations
    step_summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "| high | `app.py:6` |" in step_summary and "inline comment" in step_summary
    # The review was the same as `--base BASE --head HEAD`: the head commit's content.
    assert pull_repo.head[:12] in json.loads(report.read_text())["scope"]


def test_works_in_a_depth_1_checkout(
    opened_env: dict[str, str], github_api: FakeGitHubAPI, pull_repo: PullRepo, tmp_path: Path
) -> None:
    work = shallow_checkout(pull_repo, tmp_path / "work")

    result = run_cli(work, opened_env, "github")

    assert result.returncode == 0, result.stderr
    assert "orch-review: git fetch --no-tags --no-recurse-submodules --depth=50" in result.stderr
    assert _comments(github_api) == [("app.py", 6), ("calc.py", 30)]


def test_second_run_adds_no_duplicates_and_edits_the_summary(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    actions_env: dict[str, str],
    pull_repo: PullRepo,
    tmp_path: Path,
) -> None:
    assert run_cli(pull_repo.path, opened_env, "github").returncode == 0
    # A push that touches README only: same findings, new head.
    pushed = pull_repo.push({"README.md": "# demo\n\nMore words.\n"})
    open_pull(github_api, pushed)
    fake_api.reset()
    fake_api.policy = pull_script()
    second = with_event(actions_env, event_payload("synchronize", pushed), tmp_path / "e2.json")

    result = run_cli(pushed.path, second, "github")

    assert result.returncode == 0, result.stderr
    assert _comments(github_api) == [("app.py", 6), ("calc.py", 30)]  # not posted again
    assert len(github_api.pulls[NUMBER].reviews) == 1
    (summary,) = github_api.pulls[NUMBER].issue_comments  # edited, not a second one
    assert pushed.head[:12] in summary["body"]
    assert "Commented inline on the diff: 2 (2 of them in an earlier run)." in summary["body"]
    # The push touched no file of the PR's concerns: the earlier review covers them.
    assert "3 of 3 changed files covered (2 reused from an earlier review)" in summary["body"]
    rerun = {r.model_request().first_user_text for r in fake_api.requests_for("subagent")}
    # (The intent check is about the whole change, README included: it runs again.)
    rerun = {task for task in rerun if not is_intent(task)}
    assert not any("app.py" in task or "calc.py" in task for task in rerun)


def test_fork_with_read_only_token_falls_back_to_annotations(
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    actions_env: dict[str, str],
    pull_repo: PullRepo,
    tmp_path: Path,
) -> None:
    fake_api.policy = pull_script()
    open_pull(github_api, pull_repo, fork=True)
    payload = event_payload("synchronize", pull_repo, fork=True)
    env = {**with_event(actions_env, payload, tmp_path / "e.json"), "GITHUB_TOKEN": READ_TOKEN}

    result = run_cli(pull_repo.path, env, "github", "--fail-on", "high")

    assert result.returncode == 1, result.stderr  # fail-on high, and a high finding
    assert "Traceback" not in result.stderr
    assert "read-only token" in result.stderr
    assert result.stdout.startswith("::error file=app.py,line=6")
    assert [r.status for r in github_api.writes()] == [403]
    assert github_api.pulls[NUMBER].review_comments == []
    step_summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "Not posted on the pull request" in step_summary
    assert "| high | `app.py:6` |" in step_summary
    assert read_outputs(env)["findings-count"] == "2"


def test_fork_without_secrets_skips_the_review(
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    actions_env: dict[str, str],
    pull_repo: PullRepo,
    tmp_path: Path,
) -> None:
    open_pull(github_api, pull_repo, fork=True)
    env = with_event(
        actions_env, event_payload("synchronize", pull_repo, fork=True), tmp_path / "e.json"
    )
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        env.pop(name)

    result = run_cli(pull_repo.path, env, "github")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("::warning title=orch-review::review skipped")
    assert fake_api.message_requests == [] and github_api.writes() == []
    assert read_outputs(env)["findings-count"] == "0"


def test_not_a_pull_request_event_is_a_usage_error(
    actions_env: dict[str, str], pull_repo: PullRepo, tmp_path: Path
) -> None:
    env = with_event(actions_env, {"ref": "refs/heads/main"}, tmp_path / "push.json")
    env["GITHUB_EVENT_NAME"] = "push"

    result = run_cli(pull_repo.path, env, "github")

    assert result.returncode == 2
    assert "the `push` event is not about a pull request" in result.stderr


def test_shard_reports_are_merged_and_posted_once(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    tmp_path: Path,
) -> None:
    shards = []
    for shard in ("1/2", "2/2"):
        out = tmp_path / f"shard-{shard[0]}.json"
        result = run_cli(
            pull_repo.path,
            opened_env,
            *("--base", pull_repo.base, "--head", pull_repo.head, "--shard", shard),
            *("--filter-mode", "nofilter", "--json", str(out)),
        )
        assert result.returncode in (0, 1), result.stderr
        shards.append(out)
    fake_api.reset()

    result = run_cli(
        pull_repo.path,
        opened_env,
        "github",
        *(arg for path in shards for arg in ("--from-reports", str(path))),
    )

    assert result.returncode == 0, result.stderr
    assert fake_api.message_requests == []  # posting merged reports reviews nothing again
    assert ("app.py", 6) in _comments(github_api)
    (summary,) = github_api.pulls[NUMBER].issue_comments
    assert "**2 of 2 changed files covered.**" in summary["body"]
    assert read_outputs(opened_env)["incomplete"] == "false"

    # One shard's report is missing: posted as incomplete, and the step fails.
    missing = run_cli(
        pull_repo.path, opened_env, "github", "--from-reports", str(shards[0]), "--fail-on", "never"
    )
    assert missing.returncode == 3, missing.stderr
    (summary,) = github_api.pulls[NUMBER].issue_comments  # edited in place, not a second one
    assert "shard 2/2 produced no report" in summary["body"]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
def test_a_paid_review_is_posted_even_when_its_report_file_hits_a_full_disk(
    opened_env: dict[str, str], github_api: FakeGitHubAPI, pull_repo: PullRepo, tmp_path: Path
) -> None:
    env = {**opened_env, "XDG_CACHE_HOME": str(tmp_path / "cache")}

    result = run_cli(
        pull_repo.path, env, "github", "--filter-mode", "nofilter", "--json", "/dev/full"
    )

    assert result.returncode == 2, result.stderr
    assert "No space left on device" in result.stderr
    assert ("app.py", 6) in _comments(github_api)  # posted all the same
    assert len(github_api.pulls[NUMBER].issue_comments) == 1
    assert list((tmp_path / "cache" / "orch-review" / "reports").glob("report-*.json"))


@pytest.mark.parametrize("flag", ["--json", "--sarif"])
def test_a_report_on_stdout_is_refused_before_anything_runs(flag: str) -> None:
    from click.testing import CliRunner

    from orch_review.cli import main

    result = CliRunner().invoke(main, ["github", flag, "-"])

    assert result.exit_code == 2, result.output
    assert f"{flag} -: `orch-review github` prints annotations on stdout" in result.output
    assert "Traceback" not in result.output
