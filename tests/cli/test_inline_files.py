"""A subagent's task shows the files its subtask names, so it can skip the turn of reading
them: through the real CLI, with a scripted model that reports from what it was shown."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import ReviewScript, planted_script, shown_files, subtask_text


def _reading_script() -> ReviewScript:
    script = planted_script()
    # Copies: the planted concerns are shared with other tests.
    script.concerns = [
        replace(script.concerns[0], pattern="execute(f"),  # app.py's injection
        replace(script.concerns[1], pattern=" / "),  # calc.py's division
    ]
    return script


def _requests_about(api: FakeMessagesAPI, path: str) -> list[str]:
    """The first user text of each subagent request whose subtask names ``path``."""
    tasks = [r.model_request().first_user_text for r in api.requests_for("subagent")]
    return [task for task in tasks if path in subtask_text(task)]


def _review_all(
    fake_api: FakeMessagesAPI,
    env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    **settings: str,
) -> list[tuple[str, int]]:
    """`orch-review --all` of the planted repository with the reading script (and these
    ORCH_REVIEW_ settings); the confirmed findings, once it exited 1."""
    repo = make_planted_repo(git_repo)
    fake_api.policy = _reading_script()
    out = tmp_path / "report.json"
    extra = {f"ORCH_REVIEW_{name.upper()}": value for name, value in settings.items()}

    result = run_cli(repo, {**env, **extra}, "--all", "--json", str(out))

    assert result.returncode == 1, result.stderr
    data = json.loads(out.read_text())
    return [(f["path"], f["start_line"]) for f in data["findings"] if f["status"] == "confirmed"]


def test_a_subagent_shown_its_file_reports_in_one_request(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    assert _review_all(fake_api, api_env, git_repo, tmp_path) == [("app.py", 6)]
    (task,) = _requests_about(fake_api, "app.py")  # one request: no turn spent reading
    assert shown_files(task)["app.py"][5] == (
        "    cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")"
    )
    assert "     6\t    cursor.execute(f" in task
    assert len(_requests_about(fake_api, "calc.py")) == 1


def test_with_inline_file_bytes_0_the_subagent_reads_its_file_with_bash(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    confirmed = _review_all(fake_api, api_env, git_repo, tmp_path, inline_file_bytes="0")
    assert confirmed == [("app.py", 6)]
    tasks = _requests_about(fake_api, "app.py")
    assert len(tasks) == 2 and not shown_files(tasks[0])  # bash first, then the report


def test_a_file_over_the_budget_is_left_to_bash(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    # calc.py fits, app.py does not
    _review_all(fake_api, api_env, git_repo, tmp_path, inline_file_bytes="150")
    first = _requests_about(fake_api, "app.py")[0]
    assert not shown_files(first) and "cursor.execute" not in first
    assert len(_requests_about(fake_api, "app.py")) == 2
    assert len(_requests_about(fake_api, "calc.py")) == 1


def test_a_change_s_file_is_shown_with_the_lines_its_diff_touches(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
) -> None:
    repo = make_planted_repo(git_repo)
    git(repo, "checkout", "-q", "-b", "feature")
    app = repo / "app.py"
    app.write_text(app.read_text() + "\n\ndef count(db):\n    return db.total()\n")
    git(repo, "commit", "-qam", "count")
    fake_api.policy = _reading_script()

    result = run_cli(repo, api_env, "--base", "main")

    assert result.returncode in (0, 1), result.stderr
    (task,) = _requests_about(fake_api, "app.py")
    assert '<file path="app.py" hunks="5-11">' in task
    assert len(shown_files(task)["app.py"]) == 11
