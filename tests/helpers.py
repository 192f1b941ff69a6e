"""Running orch-review as a user does: a real subprocess of this checkout's package."""

from __future__ import annotations

import atexit
import json
import locale
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from tests.forkserver import startup_environment
from tests.scripted import PLANTED_FILES

#: The checkout under test, imported by every orch-review these helpers start.
SOURCE_ROOT = Path(__file__).resolve().parent.parent
#: ``-P``: the current directory (a test's repository) is not put on sys.path; the
#: checkout is, through PYTHONPATH.
ORCH_REVIEW = (sys.executable, "-P", "-m", "orch_review")


def cli_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with this checkout first on PYTHONPATH."""
    inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**env, "PYTHONPATH": os.pathsep.join([str(SOURCE_ROOT), *inherited])}


def run_cli(
    cwd: Path, env: Mapping[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``orch-review ARGS`` in ``cwd``; stdout and stderr captured as text.

    ``-P``: like the installed script, nothing is imported from ``cwd`` (the repository).
    The process is a child of this worker's fork server (:mod:`tests.forkserver`), which
    imported orch-review's dependencies once, unless the run's environment differs from the
    server's where an interpreter reads it at start-up: then it is a new interpreter.
    """
    # As subprocess takes them: a value may be a path or bytes.
    full = {os.fsdecode(k): os.fsdecode(v) for k, v in cli_env(env).items()}
    server = _FORK_SERVER.get(full)
    if server is not None:
        try:
            return server.run(cwd, full, args, timeout)
        finally:
            _FORK_SERVER.done(server)
    return subprocess.run(
        [*ORCH_REVIEW, *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


class _ForkServer:
    """One running :mod:`tests.forkserver` and the start-up environment it has."""

    def __init__(self, env: dict[str, str]) -> None:
        self.startup = startup_environment(env)
        self._process = subprocess.Popen(
            [sys.executable, "-P", "-m", "tests.forkserver"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=SOURCE_ROOT,
        )
        self._scratch = Path(tempfile.mkdtemp(prefix="orch-review-forkserver-"))

    def alive(self) -> bool:
        return self._process.poll() is None

    def _reply(self, timeout: float | None) -> dict[str, int]:
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("the test fork server ended; see tests/forkserver.py")
        return json.loads(line)  # type: ignore[no-any-return]

    def run(
        self, cwd: Path, env: dict[str, str], args: tuple[str, ...], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        assert self._process.stdin is not None
        out, err = self._scratch / "stdout", self._scratch / "stderr"
        request = {
            "cwd": os.fsdecode(cwd),
            "env": env,
            "args": [os.fsdecode(a) for a in args],
            "stdout": str(out),
            "stderr": str(err),
        }
        self._process.stdin.write(json.dumps(request).encode() + b"\n")
        self._process.stdin.flush()
        pid = self._reply(30)["pid"]
        try:
            status = self._reply(timeout)["status"]
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            self._reply(30)
            raise subprocess.TimeoutExpired([*ORCH_REVIEW, *args], timeout) from None
        return subprocess.CompletedProcess([*ORCH_REVIEW, *args], status, _text(out), _text(err))

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(30)
        shutil.rmtree(self._scratch, ignore_errors=True)


def _text(path: Path) -> str:
    """What ``subprocess.run(text=True)`` would have decoded."""
    text = path.read_bytes().decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _Servers:
    """This pytest process's fork server, started at its first use; None while it is busy
    (another thread's run) or when a run's start-up environment differs from its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: _ForkServer | None = None

    def get(self, env: dict[str, str]) -> _ForkServer | None:
        if os.environ.get("ORCH_REVIEW_TEST_SPAWN") or not self._lock.acquire(blocking=False):
            return None
        server = self._server
        if server is None or not server.alive():
            server = self._server = _ForkServer(env)
            atexit.register(server.close)
        if server.startup != startup_environment(env):
            self._lock.release()
            return None
        return server

    def done(self, server: _ForkServer) -> None:
        self._lock.release()


_FORK_SERVER = _Servers()


#: Runs a command as this root user without the capabilities that bypass file permissions,
#: so a mode-000 file is unreadable to it, as to any other user (root reads everything).
WITHOUT_READ_OVERRIDE = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search")


def can_drop_read_override(probe_dir: Path) -> bool:
    """True when :data:`WITHOUT_READ_OVERRIDE` works here and makes a mode-000 file
    unreadable (running as root with setpriv installed)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    probe = probe_dir / "probe-unreadable"
    probe.write_text("x")
    probe.chmod(0)
    try:
        result = subprocess.run([*WITHOUT_READ_OVERRIDE, "cat", str(probe)], capture_output=True)
    finally:
        probe.unlink()
    return result.returncode != 0


def run_cli_unprivileged(
    cwd: Path, env: Mapping[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` without permission to read files whose mode forbids it."""
    return subprocess.run(
        [*WITHOUT_READ_OVERRIDE, *ORCH_REVIEW, *args],
        cwd=cwd,
        env=cli_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def make_planted_repo(git_repo: object) -> Path:
    """A committed repository with the planted bugs of :data:`PLANTED_FILES`."""
    return git_repo(PLANTED_FILES)  # type: ignore[operator,no-any-return]


def skip_without_bubblewrap(root: Path) -> None:
    """Skip the test unless bubblewrap runs here: only it may run ``suggestion-check``."""
    import pytest

    from orch_review.engine.confinement import SandboxUnavailable
    from orch_review.engine.sandbox import resolve_sandbox

    try:
        resolve_sandbox("on", root, search_path=os.environ["PATH"])
    except SandboxUnavailable as exc:
        pytest.skip(f"suggestion-check runs only under bubblewrap, which cannot run here: {exc}")
