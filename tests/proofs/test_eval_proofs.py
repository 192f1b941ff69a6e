"""`orch-review eval` with proofs: how many findings were proven, and precision for proven
and unproven findings apart, on a bug a test can show and a false positive no honest test can."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orch_review.errors import ExitCode
from tests.conftest import GitRepoFactory, git, write
from tests.eval.scripted import EvalPolicy, write_cases
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli, skip_without_bubblewrap
from tests.proofs.fixture import BASE, HEAD, shop_script

pytestmark = pytest.mark.slow


def test_eval_counts_proven_findings_and_their_precision_apart(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo(BASE)
    skip_without_bubblewrap(repo)
    git(repo, "checkout", "-q", "-b", "change")
    write(repo, HEAD)
    git(repo, "commit", "-qam", "discount, a comment, evaluate")
    git(repo, "checkout", "-q", "main")
    expected = [
        {
            "path": "shop.py",
            "line": 2,
            "description": "discount returns the discount",
            "severity": "high",
        },
        {"path": "shop.py", "line": 13, "description": "eval of the input", "severity": "high"},
    ]
    case = {"id": "shop", "repo": str(repo), "base": "main", "head": "change", "expected": expected}
    cases = write_cases(tmp_path / "cases.jsonl", [case])
    fake_api.policy = EvalPolicy(shop_script())  # type: ignore[arg-type]
    out = tmp_path / "eval.json"
    env = {**api_env, "ORCH_REVIEW_CACHE_DIR": str(tmp_path / "cache"), "ORCH_REVIEW_PROVE": "high"}

    result = run_cli(tmp_path, env, "eval", str(cases), "--json", str(out), timeout=300)

    assert result.returncode == ExitCode.CLEAN, result.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    # By hand: three findings reported; the bug and the eval match and are proven, the
    # comment that only looks like a bug matches nothing and is not proven.
    assert written["overall"]["precision"] == round(2 / 3, 4)
    proofs = written["proofs"]
    assert (proofs["proven"], proofs["proven_matching"]) == (2, 2)
    assert (proofs["unproven"], proofs["unproven_matching"]) == (1, 0)
    assert (proofs["precision_proven"], proofs["precision_unproven"]) == (1.0, 0.0)
    shown = {f["location"]: f["proven"] for f in written["cases"][0]["findings"]}
    assert shown == {"shop.py:2": True, "shop.py:6": False, "shop.py:13": True}
    assert "Proven by a failing test: 2 of 3 reported findings; precision 100.0% (" in result.stdout
