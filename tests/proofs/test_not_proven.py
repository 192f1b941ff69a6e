"""Every way a proof fails leaves the finding verified by reading, `not-proven` with the reason:
what the prover says never proves anything."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepoFactory, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli, skip_without_bubblewrap
from tests.proofs.fixture import shop_repo, shop_script, tree_state
from tests.scripted import Concern
from tests.scripted_prover import ProofTest

pytestmark = pytest.mark.slow

UNITTEST = (
    "import unittest\n\nfrom shop import discount, evaluate, ratio\n\n\n"
    "class T(unittest.TestCase):\n"
)
MISSING = "import requests_that_is_not_installed\n"
REFUSES = "\nself.assertRaises(ValueError, evaluate, '1 if 0 else 2')"


def _case(body: str) -> str:
    return (
        UNITTEST
        + "    def test_it(self):\n"
        + "".join(f"        {line}\n" for line in body.splitlines())
    )


def _proofs(repo: Path, env: dict[str, str], *args: str) -> dict[str, dict[str, Any]]:
    result = run_cli(repo, env, "--json", "-", "--no-progress", *args, timeout=300)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    return {f["claim"].split()[0]: f.get("proof") for f in report["findings"]}


def test_a_test_that_fails_with_the_fix_a_missing_dependency_and_the_time_limit(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    fake_api.policy = shop_script(
        {
            "returns the discount": ProofTest(
                "test_d.py", _case("self.assertEqual(discount(200, 10), 999)")
            ),
            "eval": ProofTest(
                "test_e.py", "import requests_that_is_not_installed\n" + _case("pass")
            ),
            "divide": ProofTest("test_r.py", _case("while True:\n    pass")),
        }
    )

    # The system's python3, not a virtual environment's: its plugins could make pytest's
    # start-up alone take the 3 s on a busy machine.
    env = {k: v for k, v in api_env.items() if k != "VIRTUAL_ENV"}
    env.update(PATH="/usr/local/bin:/usr/bin:/bin", ORCH_REVIEW_BASH_TIMEOUT="3")
    proofs = _proofs(repo, env, "--prove=all")

    assert proofs["discount()"]["status"] == "not-proven"
    assert proofs["discount()"]["reason"] == "the test does not pass with the fix (exit 1)"
    assert proofs["discount()"]["head"]["exit_code"] == 1
    assert proofs["evaluate()"]["status"] == "not-proven"
    assert "dependencies are not installed" in proofs["evaluate()"]["reason"]
    assert "requests_that_is_not_installed" in proofs["evaluate()"]["reason"]
    assert proofs["ratio()"]["status"] == "not-proven"
    assert (
        proofs["ratio()"]["reason"] == "on head, the test did not finish within the 3 s time limit"
    )
    assert proofs["ratio()"]["head"]["exit_code"] is None


def test_the_output_cap_a_syntax_error_no_report_no_runner_and_writes_outside_the_copy(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    write(repo, {"app.rb": "def add(a, b) = a - b\n"})
    before = tree_state(repo)
    outside = repo / "written-by-a-test"
    attempts = [str(outside), "shop.py", "new-file-in-the-copy", "/usr/written-by-a-test"]
    writes = "\n".join(
        f"try:\n    open({t!r}, 'a').write('x')\n    print('WROTE', {t!r})\n"
        f"except OSError:\n    print('BLOCKED', {t!r})"
        for t in attempts
    )
    ruby = Concern(
        "sign",
        "Check app.rb for a wrong sign.",
        "grep -n 'a - b' app.rb",
        path="app.rb",
        claim="add() subtracts.",
    )
    fake_api.policy = shop_script(
        {
            "returns the discount": ProofTest(
                "test_d.py", _case("print('x' * 3_000_000)\nself.fail()")
            ),
            "eval": ProofTest(
                "test_e.py",
                _case(writes + "\nself.assertRaises(ValueError, evaluate, '1 if 0 else 2')"),
            ),
            "divide": ProofTest("test_r.py", _case("self.assertEqual(ratio(1, 0) 0.0)")),
        },
        ruby,
    )

    env = {**api_env, "ORCH_REVIEW_TOOL_OUTPUT_CAP": "1000"}
    proofs = _proofs(repo, env, "--prove=all")

    assert proofs["discount()"]["status"] == "not-proven"
    assert (
        proofs["discount()"]["reason"]
        == "on head, the test printed more than the 1,000-character cap"
    )
    # The test that tries to write where it may not is run, and every write fails.
    writer = proofs["evaluate()"]
    assert writer["status"] == "proven", writer
    for target in attempts:
        assert f"BLOCKED {target}\n" in writer["head"]["output"]
        assert f"WROTE {target}" not in writer["head"]["output"]
    assert not outside.exists() and not Path("/usr/written-by-a-test").exists()
    assert proofs["ratio()"]["status"] == "not-proven"
    assert "not fail with a test failure on head" in proofs["ratio()"]["reason"]
    assert proofs["add()"] == {
        **proofs["add()"],
        "status": "not-proven",
        "reason": "no runner: proofs know Python, JavaScript, TypeScript and Go files only",
    }
    assert tree_state(repo) == before


def test_a_prover_without_a_test_and_provers_past_the_agent_cap(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    script = shop_script()
    script.tests = {"eval": script.tests["eval"]}  # the others end with text, no report
    fake_api.policy = script

    proofs = _proofs(repo, api_env, "--prove=all")
    capped = _proofs(repo, api_env, "--prove=all", "--no-journal", "--max-agents", "6")

    assert proofs["evaluate()"]["status"] == "proven"
    assert proofs["discount()"]["status"] == "not-proven"
    assert proofs["discount()"]["reason"].startswith("the prover wrote no test: ")
    # The cap stopped every prover: each verified finding is reported all the same (and the
    # review, complete, exits 1 for them), not-proven with the cap as the reason.
    assert sorted(capped) == ["discount()", "evaluate()", "ratio()"]
    for proof in capped.values():
        assert proof["status"] == "not-proven"
        assert proof["reason"] == "cap: agent cap reached (6 agents)"


@pytest.mark.parametrize("mode", ["tools", "off"])
def test_no_proof_runs_without_a_sandboxed_shell(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, mode: str
) -> None:
    repo = shop_repo(git_repo)
    fake_api.policy = shop_script()

    proofs = _proofs(repo, api_env, "--prove", f"--sandbox={mode}")

    assert fake_api.requests_for("prover") == []
    for name in ("discount()", "evaluate()", "ratio()"):
        assert proofs[name]["status"] == "not-proven"
        assert ("no shell" if mode == "tools" else "never run unconfined") in proofs[name]["reason"]


def test_the_provers_shell_and_its_test_cannot_reach_a_listener_on_localhost(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[object] = []
    listener.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(listener.accept())
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept)
    thread.start()
    connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), 3)"
    script = shop_script(
        {"eval": ProofTest("test_net.py", _case(f"{connect}\nself.fail('connected')"))}
    )
    script.first_look = lambda _: f'python3 -c "{connect}"; echo "exit=$?"'
    fake_api.policy = script
    try:
        proofs = _proofs(repo, api_env, "--prove=all")
    finally:
        stop.set()
        thread.join()
        listener.close()

    assert accepted == []
    assert script.looked and all("exit=1" in out for out in script.looked)
    assert proofs["evaluate()"]["status"] == "not-proven"
    assert (
        "OSError" in proofs["evaluate()"]["head"]["output"]
        or "Error" in proofs["evaluate()"]["head"]["output"]
    )
