"""Nothing is lost on a crash: a killed review resumes paying only for unfinished agents."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from orch_review import tempdirs
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI, Fault, ModelRequest
from tests.helpers import make_planted_repo, popen_cli, run_cli
from tests.scripted import is_sweep, planted_script, sweep_files


def _journal_kinds(repo: Path) -> dict[str, int]:
    path = repo / ".git" / "orch-review" / "journal.sqlite3"
    if not path.exists():
        return {}
    try:
        with sqlite3.connect(path, timeout=60) as db:
            return dict(db.execute("SELECT kind, count(*) FROM journal GROUP BY kind").fetchall())
    except sqlite3.Error:
        return {}


def _wait_for(condition: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def _division_verifier(request: ModelRequest) -> bool:
    return request.role == "verifier" and "division" in request.first_user_text


def _start_review_that_hangs(
    fake_api: FakeMessagesAPI, repo: Path, env: dict[str, str]
) -> tuple[subprocess.Popen[str], Fault]:
    """`orch-review --all` in the background, its division verifier hanging on the API.

    The hung reply never lands, so an interrupted run waits out the grace for replies in
    flight: shortened here (the wait itself is tested where replies do land)."""
    fake_api.policy = planted_script()
    hang = fake_api.add_fault("hang", delay=120, match=_division_verifier)
    proc = popen_cli(repo, {"ORCH_REVIEW_INTERRUPT_GRACE": "0.5", **env}, "--all", "--no-progress")
    return proc, hang


def test_sigkill_mid_fan_out_then_rerun_pays_only_for_unfinished_agents(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    proc, hang = _start_review_that_hangs(fake_api, repo, api_env)
    try:
        _wait_for(
            lambda: hang.hits == 1 and _journal_kinds(repo).get("verifier") == 1,
            "the division verifier to hang and the other verifier to be journaled",
        )
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert _journal_kinds(repo)["subagent"] == 2
    fake_api.reset()
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    # Only the engine's sweep of README.md is new: the killed run never reached it.
    subagents = [r.model_request() for r in fake_api.requests_for("subagent")]
    assert [sweep_files(r.first_user_text) for r in subagents] == [["README.md"]]
    verifiers = fake_api.requests_for("verifier")
    assert len(verifiers) == 2
    assert all(_division_verifier(r.model_request()) for r in verifiers)
    # The main agent's first two turns are replayed; only its last turn is new.
    assert len(fake_api.requests_for("main")) == 1


def test_ctrl_c_exits_130_and_keeps_finished_work(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    proc, hang = _start_review_that_hangs(fake_api, repo, api_env)
    _wait_for(
        lambda: hang.hits == 1 and _journal_kinds(repo).get("verifier") == 1,
        "the division verifier to hang",
    )
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)

    assert proc.returncode == 130
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert _journal_kinds(repo)["verifier"] == 1


def test_sigterm_exits_143_and_removes_the_snapshot(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc, hang = _start_review_that_hangs(fake_api, repo, {**api_env, "TMPDIR": str(scratch)})
    _wait_for(lambda: hang.hits == 1, "the division verifier to hang")
    assert any(p.name.startswith("orch-review-snapshot.") for p in scratch.iterdir())
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)

    assert proc.returncode == 143
    assert "terminated" in stderr and "Traceback" not in stderr
    assert not any(p.name.startswith("orch-review-snapshot.") for p in scratch.iterdir())


def _ours(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("orch-review-"))


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "terminated"),
        (signal.SIGHUP, 129, "hung up"),
    ],
)
def test_a_signal_leaves_no_temporary_directory_and_keeps_finished_work(
    signum: int,
    code: int,
    said: str,
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    repo = make_planted_repo(git_repo)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc, hang = _start_review_that_hangs(fake_api, repo, {**api_env, "TMPDIR": str(scratch)})
    _wait_for(
        lambda: hang.hits == 1 and _journal_kinds(repo).get("verifier") == 1,
        "the division verifier to hang and the other one to be journaled",
    )
    assert _ours(scratch)  # snapshot, homes of the agents' shells, ...
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=30)

    assert proc.returncode == code, stderr
    assert said in stderr and "Traceback" not in stderr
    assert "could not store" not in stderr and "closed database" not in stderr
    assert _ours(scratch) == []
    assert _journal_kinds(repo) == {"subagent": 2, "verifier": 1, "main": 2}


def test_after_sigterm_a_rerun_pays_only_for_what_never_finished(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    proc, hang = _start_review_that_hangs(fake_api, repo, api_env)
    _wait_for(
        lambda: hang.hits == 1 and _journal_kinds(repo).get("verifier") == 1,
        "the division verifier to hang",
    )
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 143
    fake_api.reset()
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1, result.stderr
    # The finished concerns are not paid again; only the coverage sweep, which the first
    # run never reached, runs now.
    tasks = [r.model_request().first_user_text for r in fake_api.requests_for("subagent")]
    assert all(is_sweep(task) for task in tasks), tasks
    verifiers = fake_api.requests_for("verifier")
    assert verifiers and all(_division_verifier(r.model_request()) for r in verifiers)
    assert len(fake_api.requests_for("main")) == 1


def test_the_next_run_sweeps_what_a_killed_run_left(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**api_env, "TMPDIR": str(scratch)}
    proc, hang = _start_review_that_hangs(fake_api, repo, env)
    _wait_for(lambda: hang.hits == 1, "the division verifier to hang")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = [name for name in _ours(scratch) if tempdirs.owner_pid(name) == proc.pid]
    assert left, _ours(scratch)
    # Made read-only, as a snapshot is: a plain `rm -rf` by its owner would fail.
    locked = scratch / left[0] / "locked"
    (locked / "deeper").mkdir(parents=True)
    (locked / "deeper" / "file").write_text("x")
    for path in (locked / "deeper", locked):
        path.chmod(0o555)
    fake_api.reset()
    fake_api.policy = planted_script()

    result = run_cli(repo, env, "--all")

    assert result.returncode == 1, result.stderr
    assert not any(tempdirs.owner_pid(name) == proc.pid for name in _ours(scratch))


def _report_turn(request: ModelRequest) -> bool:
    """A subagent's second request: the one whose reply is its report_findings."""
    return request.role == "subagent" and request.assistant_turns == 1


def _signal_while_held(
    fake_api: FakeMessagesAPI,
    repo: Path,
    env: dict[str, str],
    match: Callable[[ModelRequest], bool],
    count: int,
    signum: int,
) -> tuple[int, str, int]:
    """Run a review whose requests that ``match`` are held; once ``count`` of them are in
    flight, send ``signum``, and release them once orch-review says it sends nothing more.
    Returns the exit status, what was said on stderr and how many requests were sent by the
    time of the signal."""
    fake_api.policy = planted_script()
    held = fake_api.add_fault("held", match=match, times=None)
    proc = popen_cli(repo, env, "--all", "--no-progress")
    said: list[str] = []
    stopping = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            said.append(line)
            if "no new request is sent" in line:
                stopping.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        _wait_for(lambda: held.held == count, f"{count} held requests to be in flight")
        sent = len(fake_api.message_requests)
        proc.send_signal(signum)
        # Released only once orch-review says it sends nothing more: whatever is sent after
        # the signal would be counted.
        assert stopping.wait(60), "".join(said)
        held.release()
        proc.wait(timeout=60)
    finally:
        held.release()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    return proc.returncode, "".join(said), sent


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_replies_in_flight_at_a_signal_land_in_the_journal_and_are_not_paid_again(
    signum: int,
    code: int,
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
) -> None:
    repo = make_planted_repo(git_repo)

    status, said, sent = _signal_while_held(fake_api, repo, api_env, _report_turn, 2, signum)

    assert status == code, said
    assert "Traceback" not in said
    assert len(fake_api.message_requests) == sent  # not one request after the signal
    assert _journal_kinds(repo).get("subagent") == 2  # both replies landed and were kept
    fake_api.reset()
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1, result.stderr
    concerns = [
        r
        for r in fake_api.requests_for("subagent")
        if not is_sweep(r.model_request().first_user_text)
    ]
    assert concerns == []  # the two concerns whose reports landed cost nothing again


def _workflow_turn(request: ModelRequest) -> bool:
    """The main agent's second request: the one whose reply is its Workflow call."""
    return request.role == "main" and request.assistant_turns == 1


def test_the_main_agents_reply_in_flight_at_ctrl_c_is_kept_and_its_call_not_run(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)

    status, said, sent = _signal_while_held(
        fake_api, repo, api_env, _workflow_turn, 1, signal.SIGINT
    )

    assert status == 130, said
    assert len(fake_api.message_requests) == sent  # its Workflow call started no subagent
    assert _journal_kinds(repo).get("main") == 2  # the scout turn and the reply that landed
    fake_api.reset()
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1, result.stderr
    assert len(fake_api.requests_for("main")) == 1  # only the turn after the Workflow call
