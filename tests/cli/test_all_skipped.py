"""A change whose files are all skipped: every one listed with its reason, in the review
and in `plan`, terminal and JSON; the review writes its report, asks nothing, exits 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli

SKIPPED = {
    "logo.png": "binary",
    "gen/api.py": "excluded by the `exclude` setting",
    "old.py": "deleted in this change",
    "big.py": "larger than 1,000 bytes (5,000)",
}


def _all_skipped(git_repo: GitRepoFactory) -> Path:
    repo = git_repo(
        {"old.py": "x = 1\n", "keep.py": "k = 1\n", ".orch-review.toml": "max-file-size = 1000\n"}
    )
    git(repo, "rm", "-q", "old.py")
    write(
        repo,
        {"logo.png": b"\x89PNG\r\n\x1a\n\0\0", "gen/api.py": "g = 1\n", "big.py": "#" * 5000},
    )
    return repo


@pytest.mark.slow
def test_a_review_of_an_all_skipped_change_lists_each_file_and_asks_nothing(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    import jsonschema

    from orch_review.reporters.json_report import schema

    repo = _all_skipped(git_repo)
    out = tmp_path / "report.json"
    env = {k: v for k, v in api_env.items() if k != "ANTHROPIC_API_KEY"}  # none is needed

    result = run_cli(repo, env, "--exclude", "gen/**", "--json", str(out))

    assert result.returncode == 0, result.stderr
    assert fake_api.requests == []
    for path, reason in SKIPPED.items():
        assert f"SKIPPED {path} — {reason}" in result.stdout
    assert "nothing to review: all 4 changed files in scope are skipped" in result.stdout
    assert "drop its glob from --exclude" in result.stdout
    assert "raise `max-file-size`" in result.stdout
    assert "--all" not in result.stdout + result.stderr
    assert "orch-review plan" not in result.stdout + result.stderr
    report = json.loads(out.read_text())
    jsonschema.validate(report, schema())
    assert report["incomplete"] is False and report["findings"] == []
    assert {s["path"]: s["reason"] for s in report["coverage"]["skipped_files"]} == SKIPPED
    assert report["coverage"]["changed_files"]["total"] == 0
    assert any("nothing to review" in note for note in report["notes"])

    as_json = run_cli(repo, env, "--exclude", "gen/**", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["coverage"]["skipped_files"]


@pytest.mark.slow
def test_plan_of_an_all_skipped_change_lists_each_file_with_its_reason(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = _all_skipped(git_repo)

    shown = run_cli(repo, api_env, "plan", "--exclude", "gen/**")
    as_json = run_cli(repo, api_env, "plan", "--json", "--exclude", "gen/**")

    assert shown.returncode == 0 and as_json.returncode == 0, shown.stderr + as_json.stderr
    for path, reason in SKIPPED.items():
        assert f"skipped: {path} ({reason})" in shown.stdout
    assert "0 files to review" in shown.stdout
    assert "drop its glob from --exclude" in shown.stdout
    assert "see `orch-review plan`" not in shown.stdout + shown.stderr
    data = json.loads(as_json.stdout)
    assert data["files"] == []
    assert {s["path"]: s["reason"] for s in data["skipped"]} == SKIPPED
    assert data["nothing_to_review"].startswith("nothing to review: all 4 changed files")


@pytest.mark.slow
def test_nothing_changed_at_all_still_says_so(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"a.py": "a = 1\n"})

    result = run_cli(repo, api_env)

    assert result.returncode == 0
    assert "the working tree is clean" in result.stderr
