"""A path that changed kind (a file that became a symlink, a symlink that became a file) is
one change: the link skipped with its reason, the new file reviewed; never "added" and
"deleted in this change" at once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.scripted import ReviewScript


def _type_changes(git_repo: GitRepoFactory) -> Path:
    """main: to_link.py a file, to_file.py a link; the working tree swaps their kinds."""
    repo = git_repo({"target.py": "t = 1\n", "to_link.py": "x = 1\n"})
    os.symlink("target.py", repo / "to_file.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a link")
    (repo / "to_link.py").unlink()
    os.symlink("target.py", repo / "to_link.py")
    (repo / "to_file.py").unlink()
    (repo / "to_file.py").write_text("import os\nos.system(input())\n")
    return repo


def _scopes(repo: Path) -> dict[str, list[str]]:
    git(repo, "add", "-A")
    git(repo, "checkout", "-q", "-b", "topic")
    git(repo, "commit", "-q", "-m", "swap kinds")
    git(repo, "reset", "-q", "--soft", "HEAD~1")  # staged again, and committed on `topic@{1}`
    return {
        "default": [],
        "staged": ["--staged"],
        "base": ["--base", "main", "--head", "topic@{1}"],
    }


@pytest.mark.slow
def test_plan_lists_each_type_change_once(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = _type_changes(git_repo)
    for name, args in _scopes(repo).items():
        result = run_cli(repo, api_env, "plan", "--json", *args)

        assert result.returncode == 0, (name, result.stderr)
        data = json.loads(result.stdout)
        files = {f["path"]: f for f in data["files"]}
        skipped = {s["path"]: s["reason"] for s in data["skipped"]}
        assert list(files) == ["to_file.py"], name
        assert files["to_file.py"]["status"] == "modified"
        assert files["to_file.py"]["replaced"] == "symlink"
        assert files["to_file.py"]["hunks"] == [[1, 2]]
        assert skipped == {"to_link.py": "file replaced by a symlink to target.py"}, name

    shown = run_cli(repo, api_env, "plan")
    assert "deleted in this change" not in shown.stdout
    assert shown.stdout.count("to_link.py") == 1 and shown.stdout.count("to_file.py") == 1
    assert "modified (was a symlink)" in shown.stdout


@pytest.mark.slow
def test_the_file_that_replaced_a_link_is_reviewed(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = _type_changes(git_repo)
    fake_api.policy = ReviewScript([])
    out = tmp_path / "report.json"

    result = run_cli(repo, api_env, "--json", str(out))

    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(out.read_text())
    coverage = report["coverage"]
    assert [(f["path"], f["status"]) for f in coverage["files"]] == [("to_file.py", "covered")]
    assert coverage["skipped_files"] == [
        {"path": "to_link.py", "reason": "file replaced by a symlink to target.py"}
    ]
    sweep = fake_api.requests_for("subagent")
    assert any("to_file.py" in r.model_request().first_user_text for r in sweep)
