"""The loop on the pull request, end to end through action.yml's review step: a push that
fixes a bug resolves its thread, a writer's `@orch-review ignore` keeps the finding from
being commented again and offers the learning to commit, and the learnings file reaches the
agents' prompts and suppresses what it names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orch_review.config.learnings import LEARNINGS_FILE
from tests.conftest import git
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.github_threads import ReviewThreads, install
from tests.fakes.messages_api import FakeMessagesAPI
from tests.gitrepos import commit
from tests.helpers import cli_launcher
from tests.hosts.github.conftest import NUMBER, PullRepo, event_payload, open_pull, with_event
from tests.hosts.github.test_action import run_step_in, steps
from tests.scripted import PLANTED_FILES

FIXED_APP = PLANTED_FILES["app.py"].replace(
    "cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")",
    'cursor.execute("SELECT * FROM users WHERE name = ?", (name,))',
)
INJECTION = "SQL query built with an f-string"


@pytest.fixture
def threads(github_api: FakeGitHubAPI) -> ReviewThreads:
    return install(github_api)


def review_step(
    env: dict[str, str], pull: PullRepo, github_api: FakeGitHubAPI, fake_api: FakeMessagesAPI
) -> Any:
    """Open (or push to) the pull request and run action.yml's review step on it."""
    open_pull(github_api, pull)
    git(pull.path, "checkout", "-q", pull.head)
    step_env = with_event(
        env, event_payload("synchronize", pull), Path(env["RUNNER_TEMP"]) / "event.json"
    )
    review = next(step for step in steps() if step.get("id") == "review")
    result = run_step_in(
        pull.path,
        review,
        {
            "anthropic-api-key": "test-key",
            "anthropic-base-url": fake_api.base_url,
            "fail-on": "high",
            "extra-args": "--no-progress --no-fetch",
            "sandbox": "auto",
        },
        step_env,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return result


@pytest.fixture
def step_env(
    actions_env: dict[str, str], github_api: FakeGitHubAPI, tmp_path: Path
) -> dict[str, str]:
    env = {k: v for k, v in actions_env.items() if not k.startswith(("ANTHROPIC_", "ORCH_"))}
    env.pop("GITHUB_TOKEN")  # the step passes the github-token input
    env["GITHUB_GRAPHQL_URL"] = github_api.graphql_url
    cli_launcher(Path(env["RUNNER_TEMP"]) / "orch-review-venv" / "bin", env)
    return env


def comments_on(github_api: FakeGitHubAPI, path: str) -> list[dict[str, Any]]:
    return [
        c
        for c in github_api.pulls[NUMBER].review_comments
        if c["path"] == path and "in_reply_to_id" not in c
    ]


def summary_comment(github_api: FakeGitHubAPI) -> str:
    (comment,) = github_api.pulls[NUMBER].issue_comments
    return str(comment["body"])


def test_a_push_that_fixes_the_bug_resolves_its_thread(
    step_env: dict[str, str],
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    threads: ReviewThreads,
    pull_repo: PullRepo,
) -> None:
    github_api.contents_write.add(WRITE_TOKEN)  # the workflow grants `contents: write`
    # A person's own thread on the same line: never orch-review's to resolve.
    first = review_step(step_env, pull_repo, github_api, fake_api)
    assert first.returncode == 1  # the injection is high
    (injection,) = comments_on(github_api, "app.py")
    assert INJECTION in injection["body"]
    github_api.add_review_comment(NUMBER, "nice catch", "app.py", injection["line"], "octo")

    fixed = pull_repo.push({"app.py": FIXED_APP}, "Use a query parameter")
    second = review_step(step_env, fixed, github_api, fake_api)

    assert second.returncode == 0, second.stdout + second.stderr
    assert threads.mutations == [("resolveReviewThread", injection["id"])]
    assert threads.resolved == {injection["id"]}
    (reply,) = threads.replies(NUMBER, injection["id"])
    assert f"No longer found at {fixed.head[:7]}" in reply["body"]
    text = summary_comment(github_api)
    assert "Resolved now: no longer found (1):" in text and "app.py:" in text
    assert len(comments_on(github_api, "app.py")) == 2  # orch-review's and the person's


@pytest.mark.parametrize("writer", [True, False], ids=["writer", "no-write-access"])
def test_ignore_by_a_writer_stops_the_comment_and_offers_the_learning(
    writer: bool,
    step_env: dict[str, str],
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    threads: ReviewThreads,
    pull_repo: PullRepo,
) -> None:
    login = "octo-maintainer" if writer else "drive-by"
    review_step(step_env, pull_repo, github_api, fake_api)
    (injection,) = comments_on(github_api, "app.py")
    threads.add_reply(NUMBER, injection["id"], "@orch-review ignore false alarm", login)

    # The next push moves the injection two lines down: same code, same fingerprint.
    moved = pull_repo.push({"app.py": "# a header\n\n" + PLANTED_FILES["app.py"]}, "header")
    result = review_step(step_env, moved, github_api, fake_api)

    text = summary_comment(github_api)
    report = json.loads(Path(step_env["RUNNER_TEMP"], "orch-review", "report.json").read_text())
    statuses = {f["claim"][:32]: f["status"] for f in report["findings"]}
    if writer:
        assert len(comments_on(github_api, "app.py")) == 1  # not commented again
        assert result.returncode == 0  # the team's decision does not fail the check
        assert statuses[INJECTION[:32]] == "suppressed"
        assert "### Dismissed in this pull request (1)" in text
        assert 'reason = "false alarm"' in text and f'who = "{login}"' in text
        assert f"`{LEARNINGS_FILE}`" in text
    else:
        assert len(comments_on(github_api, "app.py")) == 2  # the moved finding, commented
        assert result.returncode == 1
        assert statuses[INJECTION[:32]] == "confirmed"
        assert "Dismissed" not in text


def test_learnings_reach_the_prompts_and_suppress_what_they_name(
    step_env: dict[str, str],
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    threads: ReviewThreads,
    pull_repo: PullRepo,
) -> None:
    review_step(step_env, pull_repo, github_api, fake_api)
    report = json.loads(Path(step_env["RUNNER_TEMP"], "orch-review", "report.json").read_text())
    fingerprint = next(f["fingerprint"] for f in report["findings"] if INJECTION in f["claim"])
    # The team records the lesson on main; the pull request is reviewed against it.
    learned = (
        f'[[learning]]\nfingerprint = "{fingerprint}"\ncategory = "security"\n'
        'reason = "names come from an allow-list upstream"\nwho = "octo"\nwhen = "2026-11-30"\n'
        '\n[[learning]]\nglob = "calc.py"\nreason = "divisors are checked by callers"\n'
        'who = "octo"\nwhen = "2026-11-30"\n'
    )
    git(pull_repo.path, "checkout", "-q", "main")
    base = commit(pull_repo.path, {LEARNINGS_FILE: learned}, "Record what the team learned")
    git(pull_repo.path, "checkout", "-q", "feature")
    fake_api.reset()
    fake_api.policy = (opened_env and fake_api.policy) or fake_api.policy

    rebased = PullRepo(pull_repo.path, base, pull_repo.push({"README.md": "# demo!\n"}).head)
    review_step(step_env, rebased, github_api, fake_api)

    prompts = [json.dumps(r.body) for r in fake_api.requests_for("subagent")]
    prompts += [json.dumps(r.body) for r in fake_api.requests_for("main")]
    assert prompts and all("The team dismissed these findings before" in p for p in prompts)
    assert any("divisors are checked by callers" in p for p in prompts)
    report = json.loads(Path(step_env["RUNNER_TEMP"], "orch-review", "report.json").read_text())
    injection = next(f for f in report["findings"] if INJECTION in f["claim"])
    assert injection["status"] == "suppressed"
    assert "dismissed by a learning" in injection["suppressed"]
