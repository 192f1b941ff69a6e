"""`orch-review --prove` as a subprocess against the fake Messages API: orch-review runs the
prover's test itself, in the sandbox, on copies of head and of the fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepoFactory, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli, skip_without_bubblewrap
from tests.proofs.fixture import HEAD, shop_repo, shop_script, tree_state
from tests.scripted import Concern, ReviewScript
from tests.scripted_prover import ProofTest, ProverScript

pytestmark = pytest.mark.slow


def _review(repo: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    result = run_cli(repo, env, "--json", "-", "--no-progress", *args, timeout=300)
    assert result.returncode == 1, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _by_claim(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["claim"].split()[0] + " " + f["claim"].split()[1]: f for f in report["findings"]}


def _replay(repo: Path, tmp_path: Path, proof: dict[str, Any], fixed: str | None) -> int:
    """Run the proof's command as anyone would: its test in a copy of head (with ``fixed``
    as shop.py when given)."""
    copy = tmp_path / "replay"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    if fixed is not None:
        (copy / "shop.py").write_text(fixed)
    write(copy, {proof["test_path"]: proof["test_code"]})
    done = subprocess.run(
        ["bash", "-c", proof["command"]],
        cwd=copy,
        # The job's PATH: the proof was run with the python3 the job finds.
        env={"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        timeout=60,
    )
    return done.returncode


def test_a_bug_and_eval_are_proven_and_a_comment_that_looks_like_a_bug_is_not(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    before = tree_state(repo)
    fake_api.policy = shop_script()
    proofs_dir = tmp_path / "proofs"

    sarif_file = tmp_path / "report.sarif"
    report = _review(
        repo, api_env, "--prove", "--write-proofs", str(proofs_dir), "--sarif", str(sarif_file)
    )

    found = _by_claim(report)
    discount, evaluate, ratio = (
        found["discount() returns"],
        found["evaluate() runs"],
        found["ratio() may"],
    )
    for proven in (discount, evaluate):
        proof = proven["proof"]
        assert proof["status"] == "proven", proof
        assert proof["head"]["exit_code"] == 1
        assert proof["fixed"] == {**proof["fixed"], "exit_code": 0, "against": "patch"}
        # It replays: exit 1 in a copy of head, exit 0 with the fix.
        assert _replay(repo, tmp_path, proof, None) == 1
        patched = (
            HEAD["shop.py"]
            .replace(
                "    return price * percent / 100\n", "    return price - price * percent / 100\n"
            )
            .replace("eval(", "__import__('ast').literal_eval(")
        )
        assert _replay(repo, tmp_path, proof, patched) == 0
        assert (proofs_dir / proof["test_path"]).read_text() == proof["test_code"]
    assert ratio["status"] == "confirmed"
    assert ratio["proof"]["status"] == "not-proven"
    assert "passes on head" in ratio["proof"]["reason"]
    assert not (proofs_dir / "tests" / "test_ratio.py").exists()
    # SARIF carries the same proofs.
    sarif = json.loads(sarif_file.read_text())
    by_line = {
        r["locations"][0]["physicalLocation"]["region"]["startLine"]: r
        for r in sarif["runs"][0]["results"]
    }
    assert by_line[discount["start_line"]]["properties"]["proof"] == discount["proof"]
    assert by_line[ratio["start_line"]]["properties"]["proof"]["status"] == "not-proven"
    # Three provers ran (two turns each), and the user's working tree is byte for byte as it was.
    assert report["usage"]["by_role"]["prover"]["requests"] == 6
    assert tree_state(repo) == before


def test_a_rerun_takes_the_tests_from_the_journal(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    fake_api.policy = shop_script()
    first = _review(repo, api_env, "--prove=all")
    asked = len(fake_api.requests_for("prover"))

    second = _review(repo, api_env, "--prove=all")

    assert len(fake_api.requests_for("prover")) == asked

    def shown(report: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [
            (f["proof"]["status"], f["proof"]["reason"], f["proof"]["test_code"])
            for f in report["findings"]
        ]

    assert shown(second) == shown(first)
    assert [s for s, _, _ in shown(second)].count("proven") == 2


def test_markdown_and_the_terminal_say_proven_and_show_the_test(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    fake_api.policy = shop_script()

    markdown = run_cli(repo, api_env, "--prove", "--format", "markdown", "--no-progress")
    text = run_cli(repo, api_env, "--prove", "--no-progress")

    assert markdown.returncode == text.returncode == 1, markdown.stderr + text.stderr
    assert markdown.stdout.count("**Proven by a failing test:**") == 2
    assert markdown.stdout.count("<details><summary>The test, tests/test_") == 2
    assert "self.assertEqual(discount(200, 10), 180)" in markdown.stdout
    assert "Not proven by a test: the test passes on head" in markdown.stdout
    assert text.stdout.count("proven by a failing test: it fails on this change and passes") == 2
    # unittest, or pytest when the job's python3 has it (a virtual environment with it).
    assert "(tests/test_discount.py, run with `python3 -m " in text.stdout
    assert "not proven by a test: the test passes on head" in text.stdout


ADD_JS = "function add(a, b) {\n  return a + b;\n}\n\nmodule.exports = { add };\n"
NODE_TEST = (
    'const test = require("node:test");\n'
    'const assert = require("node:assert");\n'
    'const { add } = require("../app.js");\n\n'
    'test("adds", () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n'
)


def test_a_javascript_bug_is_proven_with_node_against_the_base(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"app.js": ADD_JS})
    skip_without_bubblewrap(repo)
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    write(repo, {"app.js": ADD_JS.replace("a + b", "a - b")})
    sign = Concern(
        "sign",
        "Check app.js for a wrong sign.",
        "grep -n 'a - b' app.js",
        path="app.js",
        claim="add() subtracts.",
    )
    broken = ProofTest("tests/broken.test.js", NODE_TEST.replace("test(", "test(("))
    fake_api.policy = ProverScript(
        ReviewScript([sign]), {"subtracts": ProofTest("tests/add.test.js", NODE_TEST)}
    )

    report = _review(repo, api_env, "--prove")
    fake_api.policy = ProverScript(ReviewScript([sign]), {"subtracts": broken})
    syntax = _review(repo, api_env, "--prove", "--no-journal")

    proof = report["findings"][0]["proof"]
    assert proof["status"] == "proven", proof
    assert proof["command"] == "node --test --test-reporter=tap tests/add.test.js"
    assert (proof["head"]["exit_code"], proof["fixed"]["exit_code"]) == (1, 0)
    assert proof["fixed"]["against"] == "base"
    # A test file node cannot load fails too, but proves nothing.
    unloaded = syntax["findings"][0]["proof"]
    assert unloaded["status"] == "not-proven"
    assert "not fail with a test failure on head" in unloaded["reason"]
