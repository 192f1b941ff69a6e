"""A case given as a patch on a base (BC-Bench's form) is reviewed as that change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orch_review.errors import ExitCode
from tests.conftest import GitRepoFactory, git, write
from tests.eval.scripted import BASE_FILES, BUGGY_FILES, review_policy, write_cases
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli

pytestmark = pytest.mark.slow


def _patch(repo: Path) -> str:
    write(repo, {"app.py": BUGGY_FILES["app.py"]})
    patch = git(repo, "diff", "--no-color")
    git(repo, "checkout", "-q", "--", "app.py")
    return patch


def test_a_patch_case_is_scored_and_leaves_the_work_tree_alone(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo(BASE_FILES)
    base = git(repo, "rev-parse", "HEAD").strip()
    cases = write_cases(
        tmp_path / "cases.jsonl",
        [
            {
                "id": "patched",
                "repo": str(repo),
                "base": base,
                "patch": _patch(repo),
                "expected": [{"path": "app.py", "line": 6, "description": "SQL injection"}],
            },
            {"id": "broken", "repo": str(repo), "base": base, "patch": "not a diff\n",
             "expected": []},
        ],
    )  # fmt: skip
    fake_api.policy = review_policy()
    out = tmp_path / "eval.json"
    env = {**api_env, "ORCH_REVIEW_CACHE_DIR": str(tmp_path / "cache")}

    result = run_cli(tmp_path, env, "eval", str(cases), "--json", str(out))

    written = json.loads(out.read_text(encoding="utf-8"))
    by_id = {c["id"]: c for c in written["cases"]}
    assert by_id["patched"]["found"] == 1 and written["overall"]["recall"] == 1.0
    assert "does not apply" in (by_id["broken"]["error"] or "")
    assert result.returncode == ExitCode.INCOMPLETE, result.stderr  # the broken case
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "HEAD").strip() == base
