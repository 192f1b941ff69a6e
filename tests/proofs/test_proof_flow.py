"""A proof never delays the report for long, and never loses it: provers start as soon as a
finding is confirmed, the report waits at most `prove-timeout` once verification has ended,
and a Ctrl-C or SIGTERM during the proofs still gives the report of every verified finding.

Each review runs as a real `orch-review` process against the fake Messages API; a prover's
request or its test is held until the test has seen what it waits for (no sleeps)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.github_api import FakeGitHubAPI
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest
from tests.helpers import popen_cli, run_cli, skip_without_bubblewrap
from tests.hosts.github.conftest import (  # noqa: F401 (fixtures)
    NUMBER,
    PullRepo,
    actions_env,
    github_api,
    opened_env,
    pull_repo,
    pull_script,
)
from tests.proofs.fixture import shop_repo, shop_script
from tests.scripted_prover import ProofTest, ProverScript

pytestmark = pytest.mark.slow

NAMES = ["discount()", "evaluate()", "ratio()"]


def _wait_for(condition: Callable[[], bool], what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def _verifier_of(word: str) -> Callable[[ModelRequest], bool]:
    return lambda r: r.role == "verifier" and word in r.first_user_text


def _prover_of(word: str) -> Callable[[ModelRequest], bool]:
    return lambda r: r.role == "prover" and word in r.first_user_text


def _proofs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["claim"].split()[0]: f["proof"] for f in report["findings"]}


class _Stderr:
    """What a running review prints on stderr, read as it comes."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        assert proc.stderr is not None
        stream = proc.stderr
        self._thread = threading.Thread(target=lambda: self.lines.extend(stream), daemon=True)
        self._thread.start()

    def said(self, words: str) -> bool:
        # Messages are wrapped to the terminal's width (80 columns without one).
        return words in " ".join(" ".join(self.lines).split())

    @property
    def text(self) -> str:
        self._thread.join(60)
        return "".join(self.lines)


def _finish(proc: subprocess.Popen[str]) -> str:
    """The review's stdout once it has ended; a review still running after 120 s fails the
    test (TimeoutExpired) instead of holding the whole run until it ends."""
    stream = proc.stdout
    assert stream is not None
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(stream.read()), daemon=True)
    reader.start()
    proc.wait(timeout=120)
    reader.join(60)
    return "".join(out)


def test_provers_start_while_other_findings_are_still_being_verified(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    fake_api.policy = shop_script()
    held = fake_api.add_fault("held", match=_verifier_of("divide by zero"))
    proc = popen_cli(repo, api_env, "--json", "-", "--no-progress", "--prove")
    try:
        _wait_for(lambda: held.held == 1, "the ratio verifier to be held")
        # The other findings' provers ask the model while one verification is unfinished.
        _wait_for(lambda: len(fake_api.requests_for("prover")) >= 2, "provers to start")
        assert held.held == 1
    finally:
        held.release()
        out = _finish(proc)

    assert proc.returncode == 1
    proofs = _proofs(json.loads(out))
    assert proofs["discount()"]["status"] == proofs["evaluate()"]["status"] == "proven"


def test_a_proof_not_finished_within_prove_timeout_is_not_proven_time_limit(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    fake_api.policy = shop_script()
    fake_api.add_fault("hang", delay=300, match=_prover_of("eval"), times=None)
    json_file = tmp_path / "report.json"

    result = run_cli(
        repo,
        api_env,
        "--json",
        str(json_file),
        "--no-progress",
        "--prove",
        "--prove-timeout",
        # Long enough for the discount proof to finish on a loaded machine (2 s was not,
        # under a full test run); the evaluate prover's request never ends.
        "15",
        timeout=240,
    )

    assert result.returncode == 1, result.stderr
    report = json.loads(json_file.read_text())
    proofs = _proofs(report)
    assert sorted(proofs) == NAMES
    assert proofs["discount()"]["status"] == "proven"
    assert proofs["evaluate()"] == {
        **proofs["evaluate()"],
        "status": "not-proven",
        "reason": "time limit: not finished 15 s after verification ended (prove-timeout)",
    }
    assert any("did not finish within prove-timeout" in w for w in report["warnings"])
    assert "waiting up to 15 s for" in result.stderr
    assert "Traceback" not in result.stderr and "Exception" not in result.stderr


def test_ctrl_c_during_the_proofs_reports_every_verified_finding(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    fake_api.policy = shop_script()
    fake_api.add_fault("hang", delay=300, match=_prover_of("eval"), times=None)
    json_file, sarif_file = tmp_path / "report.json", tmp_path / "report.sarif"
    env = {**api_env, "ORCH_REVIEW_INTERRUPT_GRACE": "0.5"}
    args = ("--json", str(json_file), "--sarif", str(sarif_file), "--no-progress", "--prove")
    proc = popen_cli(repo, env, *args)
    stderr = _Stderr(proc)
    try:
        _wait_for(lambda: stderr.said("Ctrl-C reports the findings without them"), "the wait")
        proc.send_signal(signal.SIGINT)
        out = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    # The review was complete and verified: exit 1 for its high findings, not 130.
    assert proc.returncode == 1, stderr.text
    assert "interrupted during the proofs" in stderr.text
    assert "Traceback" not in stderr.text
    report = json.loads(json_file.read_text())
    proofs = _proofs(report)
    assert sorted(proofs) == NAMES
    assert all(f["status"] == "confirmed" for f in report["findings"])
    assert proofs["evaluate()"]["status"] == "not-proven"
    assert proofs["evaluate()"]["reason"].startswith("interrupted: ")
    for proof in proofs.values():  # each either finished before the Ctrl-C or says it did not
        assert proof["status"] == "proven" or proof["reason"].startswith(
            ("interrupted: ", "the test passes on head")
        )
    sarif = json.loads(sarif_file.read_text())
    assert len(sarif["runs"][0]["results"]) == 3
    assert "evaluate()" in out  # the terminal shows the findings too


def test_a_second_ctrl_c_after_one_during_the_proofs_aborts_at_once_with_130(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    fake_api.policy = shop_script()
    fake_api.add_fault("hang", delay=300, match=_prover_of("eval"), times=None)
    json_file, mark = tmp_path / "report.json", tmp_path / "paused"
    # After the first Ctrl-C the review goes on to its report; it is held where the session
    # removes its agents' home, to receive the second one there.
    env = {**api_env, "ORCH_REVIEW_PAUSE_AT": "removing:home", "ORCH_REVIEW_PAUSE_MARK": str(mark)}
    proc = popen_cli(repo, env, "--json", str(json_file), "--no-progress", "--prove")
    stderr = _Stderr(proc)
    try:
        _wait_for(lambda: stderr.said("Ctrl-C reports the findings without them"), "the wait")
        proc.send_signal(signal.SIGINT)
        _wait_for(mark.exists, "the review to go on after the first Ctrl-C")
        _wait_for(lambda: stderr.said("press Ctrl-C again to stop at once"), "the notice")
        proc.send_signal(signal.SIGINT)
        _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    assert proc.returncode == 130, stderr.text
    assert "Traceback" not in stderr.text
    assert not json_file.exists()


BLOCKS = (
    "import time\nimport unittest\n\nfrom shop import evaluate\n\n\n"
    "class Blocks(unittest.TestCase):\n"
    "    def test_until_signalled(self):\n"
    "        time.sleep(3600)\n"
)


def _running(marker: str) -> list[int]:
    """The processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def test_sigterm_while_a_test_runs_reports_the_findings_and_stops_the_test(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = shop_repo(git_repo)
    skip_without_bubblewrap(repo)
    marker = f"tests/test_blocks_{os.getpid()}.py"
    fake_api.policy = shop_script({"eval": ProofTest(marker, BLOCKS)})
    json_file = tmp_path / "report.json"
    env = {**api_env, "ORCH_REVIEW_INTERRUPT_GRACE": "0.5", "ORCH_REVIEW_BASH_TIMEOUT": "3600"}
    proc = popen_cli(repo, env, "--json", str(json_file), "--no-progress", "--prove")
    stderr = _Stderr(proc)
    try:
        _wait_for(lambda: bool(_running(marker)), "the prover's test to run")
        _wait_for(lambda: stderr.said("Ctrl-C reports the findings without them"), "the wait")
        proc.send_signal(signal.SIGTERM)
        _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    assert proc.returncode == 1, stderr.text
    proofs = _proofs(json.loads(json_file.read_text()))
    assert sorted(proofs) == NAMES
    assert proofs["evaluate()"]["status"] == "not-proven"
    assert proofs["evaluate()"]["reason"].startswith("interrupted: ")
    _wait_for(lambda: not _running(marker), "the blocked test to be stopped", limit=30)


def test_a_pull_request_interrupted_during_its_proofs_still_gets_its_comments(
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,  # noqa: F811
    opened_env: dict[str, str],  # noqa: F811
    pull_repo: PullRepo,  # noqa: F811
    tmp_path: Path,
) -> None:
    skip_without_bubblewrap(pull_repo.path)
    fake_api.policy = ProverScript(pull_script(), {})
    fake_api.add_fault("hang", delay=300, match=lambda r: r.role == "prover", times=None)
    json_file = tmp_path / "report.json"
    env = {**opened_env, "ORCH_REVIEW_PROVE": "high"}
    proc = popen_cli(pull_repo.path, env, "github", "--json", str(json_file), "--no-progress")
    stderr = _Stderr(proc)
    try:
        _wait_for(lambda: stderr.said("Ctrl-C reports the findings without them"), "the wait")
        proc.send_signal(signal.SIGINT)  # as GitHub does first when a job is cancelled
        _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    assert proc.returncode == 0, stderr.text  # fail-on defaults to never
    (injection,) = [c for c in github_api.pulls[NUMBER].review_comments if c["path"] == "app.py"]
    assert "Not proven by a test: interrupted: " in injection["body"]
    (summary,) = github_api.pulls[NUMBER].issue_comments
    assert "**2 confirmed findings**: 1 high" in summary["body"]
    findings = json.loads(json_file.read_text())["findings"]
    (high,) = [f for f in findings if f["severity"] == "high" and f["status"] == "confirmed"]
    assert high["path"] == "app.py"
    assert high["proof"]["reason"].startswith("interrupted: ")
