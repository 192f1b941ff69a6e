"""`orch-review gitlab` end to end: GitLab CI's variables, a real git repository, the fake
GitLab REST API and the fake Messages API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orch_review.errors import ExitCode
from orch_review.hosts.gitlab.run import JOB_TOKEN_ONLY
from tests.conftest import GitRepoFactory, git, write
from tests.fakes.gitlab_api import BOT, BOT_TOKEN, JOB_TOKEN, FakeGitLabAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.scripted import PLANTED_FILES, planted_script

pytestmark = pytest.mark.slow
IID = 3
SAFE_APP = PLANTED_FILES["app.py"].replace(
    "cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")",
    'cursor.execute("SELECT * FROM users WHERE name = ?", (name,))',
)


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _merge_request(git_repo: GitRepoFactory) -> tuple[Path, str, str]:
    """main with a safe app.py; the merge request's branch plants the injection."""
    repo = git_repo({"app.py": SAFE_APP, "README.md": "# demo\n"})
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    head = _commit(repo, {"app.py": PLANTED_FILES["app.py"], "calc.py": PLANTED_FILES["calc.py"]},
                   "Look users up by name")  # fmt: skip
    return repo, base, head


def _ci_env(api_env: dict[str, str], gitlab: FakeGitLabAPI, base: str, head: str) -> dict[str, str]:
    return {
        **api_env,
        "GITLAB_CI": "true",
        "CI": "true",
        "CI_API_V4_URL": gitlab.api_url,
        "CI_SERVER_URL": gitlab.api_url.removesuffix("/api/v4"),
        "CI_PROJECT_ID": "7",
        "CI_MERGE_REQUEST_PROJECT_ID": "7",
        "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "7",
        "CI_MERGE_REQUEST_IID": str(IID),
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": base,
        "CI_COMMIT_SHA": head,
        "CI_JOB_TOKEN": JOB_TOKEN,
        "GITLAB_TOKEN": BOT_TOKEN,
    }


def _bodies(gitlab: FakeGitLabAPI) -> list[str]:
    return [json.dumps(r.body) for r in gitlab.requests if r.body is not None]


def test_a_first_run_a_push_and_a_fix(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo, base, head = _merge_request(git_repo)
    fake_api.policy = planted_script()
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(IID, repo, base, head)
        env = _ci_env(api_env, gitlab, base, head)

        first = run_cli(repo, env, "gitlab", "--no-progress")

        assert first.returncode == ExitCode.FINDINGS, first.stderr  # high, at --fail-on high
        (thread,) = gitlab.diff_threads(IID)
        note = thread["notes"][0]
        assert note["author"]["id"] == BOT["id"]
        assert note["body"].startswith("<!-- orch-review:finding ")
        assert note["position"]["new_path"] == "app.py" and note["position"]["new_line"] == 6
        assert "old_line" not in note["position"]  # an added line
        (summary,) = gitlab.notes_of(IID)
        assert summary["body"].startswith("<!-- orch-review:summary -->")
        report = json.loads((repo / "gl-code-quality-report.json").read_text())
        assert [e["location"]["path"] for e in report] == ["app.py"]

        # A push that does not touch the finding: no duplicate, the same summary note.
        head2 = _commit(repo, {"README.md": "# demo\n\nMore.\n"}, "Document")
        gitlab.add_version(IID, repo, base, head2)
        fake_api.reset()
        fake_api.policy = planted_script()
        second = run_cli(repo, {**env, "CI_COMMIT_SHA": head2}, "gitlab", "--no-progress")

        assert second.returncode == ExitCode.FINDINGS, second.stderr
        assert len(gitlab.diff_threads(IID)) == 1
        assert [n["id"] for n in gitlab.notes_of(IID)] == [summary["id"]]
        assert head2[:12] in gitlab.notes_of(IID)[0]["body"]

        # The fix: the thread is resolved, with one reply.
        head3 = _commit(repo, {"app.py": SAFE_APP + "# parameterised\n"}, "Use a parameter")
        gitlab.add_version(IID, repo, base, head3)
        fake_api.reset()
        fake_api.policy = planted_script()
        third = run_cli(repo, {**env, "CI_COMMIT_SHA": head3}, "gitlab", "--no-progress")

        assert third.returncode == ExitCode.CLEAN, third.stderr
        (thread,) = gitlab.diff_threads(IID)
        assert thread["notes"][0]["resolved"] is True
        assert [n["body"][:40] for n in thread["notes"][1:]] == [
            f"orch-review: this finding is gone in {head3[:12]}"[:40]
        ]
        assert gitlab.refused == []  # no position GitLab refused, in any run
        for text in [*_bodies(gitlab), first.stdout, first.stderr, third.stderr]:
            assert BOT_TOKEN not in text and JOB_TOKEN not in text


def test_with_only_the_job_token_the_findings_go_to_the_log_and_code_quality(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo, base, head = _merge_request(git_repo)
    fake_api.policy = planted_script()
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(IID, repo, base, head)
        env = _ci_env(api_env, gitlab, base, head)
        del env["GITLAB_TOKEN"]

        result = run_cli(repo, env, "gitlab", "--no-progress")

        posts = [r for r in gitlab.requests if r.method != "GET"]

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    assert JOB_TOKEN_ONLY in " ".join(result.stderr.split())
    assert "orch-review: sandbox: " in result.stderr  # the job log says what confines agents
    assert posts == [] and gitlab.requests == []  # no API call the job token cannot make
    report = json.loads((repo / "gl-code-quality-report.json").read_text())
    assert [e["severity"] for e in report] == ["critical"]
    assert "SQL query built with an f-string" in result.stdout  # the job log


def test_a_merge_request_from_a_fork_falls_back_to_the_report(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo, base, head = _merge_request(git_repo)
    fake_api.policy = planted_script()
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(IID, repo, base, head, source=99)
        env = {**_ci_env(api_env, gitlab, base, head), "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "99"}

        result = run_cli(repo, env, "gitlab", "--no-progress")
        writes = [r for r in gitlab.requests if r.method != "GET"]

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    assert "comes from a fork" in result.stderr
    assert writes == []
    assert (repo / "gl-code-quality-report.json").exists()


def test_outside_a_merge_request_pipeline_it_says_what_to_add(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo, _, _ = _merge_request(git_repo)

    result = run_cli(repo, api_env, "gitlab")

    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "merge_request_event" in result.stderr and "Traceback" not in result.stderr


def test_a_dismissal_counts_only_from_a_developer_or_above(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    from tests.fakes.gitlab_api import DEVELOPER, REPORTER

    repo, base, head = _merge_request(git_repo)
    fake_api.policy = planted_script()
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(IID, repo, base, head)
        env = _ci_env(api_env, gitlab, base, head)
        assert run_cli(repo, env, "gitlab", "--no-progress").returncode == ExitCode.FINDINGS
        (thread,) = gitlab.diff_threads(IID)

        # A Reporter's "ignore" is not a dismissal.
        gitlab.reply_as(IID, thread["id"], "@orch-review ignore it is fine", REPORTER)
        fake_api.reset()
        fake_api.policy = planted_script()
        kept = run_cli(repo, env, "gitlab", "--no-progress")

        assert kept.returncode == ExitCode.FINDINGS, kept.stderr
        assert thread["notes"][0]["resolved"] is False

        # A Developer's thumbs-down is.
        thread["notes"][0]["award_emoji"] = [
            {"id": 1, "name": "thumbsdown", "user": dict(DEVELOPER), "created_at": "2026-12-01"}
        ]
        fake_api.reset()
        fake_api.policy = planted_script()
        dismissed = run_cli(repo, env, "gitlab", "--no-progress")

    assert dismissed.returncode == ExitCode.CLEAN, dismissed.stderr
    assert thread["notes"][0]["resolved"] is True
    assert "dismissed" in thread["notes"][-1]["body"]
    assert len(gitlab.diff_threads(IID)) == 1  # not posted again
    (summary,) = gitlab.notes_of(IID)
    assert "learnings.toml" in summary["body"] and "dev" in summary["body"]


def test_pending_questions_in_its_threads_are_answered_once(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    from tests.fakes.gitlab_api import DEVELOPER, REPORTER

    repo, base, head = _merge_request(git_repo)
    fake_api.policy = planted_script()
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(IID, repo, base, head)
        env = _ci_env(api_env, gitlab, base, head)
        assert run_cli(repo, env, "gitlab", "--no-progress").returncode == ExitCode.FINDINGS
        (thread,) = gitlab.diff_threads(IID)
        gitlab.reply_as(IID, thread["id"], "@orch-review is this reachable?", REPORTER)
        gitlab.reply_as(IID, thread["id"], "@orch-review why is this a problem?", DEVELOPER)

        fake_api.reset()
        fake_api.policy = planted_script(summary="Because `name` reaches the SQL text.")
        asked = run_cli(repo, env, "gitlab", "--no-progress")
        replies = [n for n in thread["notes"] if n["body"].startswith("<!-- orch-review:reply")]

        again = run_cli(repo, env, "gitlab", "--no-progress")
        replies_after = [
            n for n in thread["notes"] if n["body"].startswith("<!-- orch-review:reply")
        ]

    assert asked.returncode == ExitCode.FINDINGS, asked.stderr
    assert "1 question(s) answered" in asked.stderr
    (reply,) = replies
    assert "Because `name` reaches the SQL text." in reply["body"]
    assert "orchestration mode off" in reply["body"]
    assert again.returncode == ExitCode.FINDINGS and len(replies_after) == 1


def test_a_verified_fix_is_a_gitlab_suggestion_over_a_line_range(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    from tests.cli.test_cli_fix import SAFE_QUERY as safe
    from tests.scripted import Concern, ReviewScript

    repo, base, head = _merge_request(git_repo)
    fake_api.policy = ReviewScript(
        [
            Concern(
                "injection",
                "Check app.py for SQL injection.",
                "grep -n 'execute(f' app.py",
                path="app.py",
                category="security",
                claim="The query interpolates `name`.",
                replacement=lambda _: safe,
                span=2,
            )
        ]
    )
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(IID, repo, base, head)
        env = {
            **_ci_env(api_env, gitlab, base, head),
            "ORCH_REVIEW_SUGGESTION_CHECK": "python3 -m py_compile {path}",
        }

        result = run_cli(repo, env, "gitlab", "--no-progress")

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    (thread,) = gitlab.diff_threads(IID)
    note = thread["notes"][0]
    assert note["position"]["new_line"] == 7
    assert note["position"]["line_range"]["start"]["new_line"] == 6
    assert "```suggestion:-1+0\n" + safe + "\n```" in note["body"]
    assert gitlab.refused == []


def test_hostile_model_text_triggers_no_quick_action_or_mention(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    import dataclasses

    from tests.scripted import PLANTED_INJECTION, ReviewScript

    hostile = "Injection.\n/merge\n/approve\n  /close\n@all @group/team #12 !45 <img src=x>"
    repo, base, head = _merge_request(git_repo)
    fake_api.policy = ReviewScript([dataclasses.replace(PLANTED_INJECTION, claim=hostile)])
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(IID, repo, base, head)

        result = run_cli(repo, _ci_env(api_env, gitlab, base, head), "gitlab", "--no-progress")

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    bodies = [n["body"] for d in gitlab.mrs[IID].discussions for n in d["notes"]]
    assert bodies
    for body in bodies:
        for line in body.splitlines():
            assert not line.lstrip().startswith("/"), line  # a quick action
        assert "@all" not in body and "@group/team" not in body
        assert not re.search(r"(?<!\\)<img", body), body  # escaped, it is text
        assert not re.search(r"(?<![\w&])[#!]\d+\b", body), body  # a reference
