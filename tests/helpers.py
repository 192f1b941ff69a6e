"""Running orch-review as a user does: a real subprocess of this checkout's package."""

from __future__ import annotations

import atexit
import io
import json
import locale
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from tests.conftest import run_setting
from tests.forkclient import ADDRESS
from tests.forkserver import startup_environment
from tests.scripted import PLANTED_FILES

#: The checkout under test, imported by every orch-review these helpers start.
SOURCE_ROOT = Path(__file__).resolve().parent.parent
#: ``-P``: the current directory (a test's repository) is not put on sys.path; the
#: checkout is, through PYTHONPATH.
ORCH_REVIEW = (sys.executable, "-P", "-m", "orch_review")


def cli_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with this checkout first on PYTHONPATH."""
    parts = env.get("PYTHONPATH", "").split(os.pathsep)
    inherited = [p for p in parts if p and p != str(SOURCE_ROOT)]
    return {**env, "PYTHONPATH": os.pathsep.join([str(SOURCE_ROOT), *inherited])}


def _run_env(env: Mapping[str, str]) -> dict[str, str]:
    """:func:`cli_env` as text, the way subprocess takes an environment (a value may be a
    path or bytes)."""
    return {os.fsdecode(k): os.fsdecode(v) for k, v in cli_env(env).items()}


def run_cli(
    cwd: Path, env: Mapping[str, str], *args: str, timeout: float = 120, input: str = ""
) -> subprocess.CompletedProcess[str]:
    """``orch-review ARGS`` in ``cwd``; stdout and stderr captured as text, stdin ``input``
    (/dev/null when empty).

    ``-P``: like the installed script, nothing is imported from ``cwd`` (the repository).
    The process is a child of this worker's fork server (:mod:`tests.forkserver`), which
    imported orch-review's dependencies once, unless the run's environment differs from the
    server's where an interpreter reads it at start-up: then it is a new interpreter.
    """
    full = _run_env(env)
    server = _FORK_SERVER.get(full)
    if server is not None:
        return server.run(cwd, full, args, timeout, input)
    return subprocess.run(
        [*ORCH_REVIEW, *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        **({"input": input} if input else {"stdin": subprocess.DEVNULL}),
    )


class _ForkServer:
    """One running :mod:`tests.forkserver`, the start-up environment it has, and the exit
    status of the children it reported."""

    def __init__(self, env: dict[str, str]) -> None:
        self.startup = startup_environment(env)
        self._channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._scratch = Path(tempfile.mkdtemp(prefix="orch-review-forkserver-"))
        self.address = self._scratch / "socket"
        command = ["-m", "tests.forkserver", str(theirs.fileno()), str(self.address)]
        self._process = subprocess.Popen(
            [sys.executable, "-P", *command],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=SOURCE_ROOT,
            pass_fds=(theirs.fileno(),),
        )
        theirs.close()
        self._starting = threading.Lock()  # one start at a time: the next pid is its own
        self._changed = threading.Condition()
        self._pids: list[int] = []
        self._ended: dict[int, int] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def alive(self) -> bool:
        return self._process.poll() is None

    def _read(self) -> None:
        while data := self._channel.recv(4096):
            message = json.loads(data)
            with self._changed:
                if "pid" in message:
                    # Process ids are reused: an earlier child's exit is not this one's.
                    self._ended.pop(message["pid"], None)
                    self._pids.append(message["pid"])
                else:
                    self._ended[message["exit"]] = message["status"]
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def start(self, cwd: Path | str, env: dict[str, str], args: Sequence[str],
              streams: tuple[int, int, int]) -> int:  # fmt: skip
        """Fork a child running ``orch-review ARGS`` with these stdin, stdout and stderr
        descriptors; returns its pid."""
        request = {"cwd": os.fsdecode(cwd), "env": env, "args": [os.fsdecode(a) for a in args]}
        with self._starting:
            socket.send_fds(self._channel, [json.dumps(request).encode()], list(streams))
            with self._changed:
                if not self._changed.wait_for(lambda: self._pids or not self.alive(), 60):
                    raise RuntimeError("the test fork server does not answer")
                if not self._pids:
                    raise RuntimeError("the test fork server ended; see tests/forkserver.py")
                return self._pids.pop(0)

    def status(self, pid: int, timeout: float | None) -> int | None:
        """The exit status of child ``pid``, waiting up to ``timeout`` (None: while it runs;
        0: not at all); None if it still runs then."""
        with self._changed:
            self._changed.wait_for(lambda: pid in self._ended or not self.alive(), timeout)
            if pid not in self._ended and not self.alive():
                raise RuntimeError("the test fork server ended; see tests/forkserver.py")
            return self._ended.pop(pid, None)

    def run(
        self, cwd: Path, env: dict[str, str], args: tuple[str, ...], timeout: float, input: str
    ) -> subprocess.CompletedProcess[str]:
        command = [*ORCH_REVIEW, *args]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            with tempfile.TemporaryFile() as given:
                given.write(input.encode(locale.getpreferredencoding(False)))
                given.seek(0)
                pid = self.start(cwd, env, args, (given.fileno(), out.fileno(), err.fileno()))
            status = self.status(pid, timeout)
            if status is None:
                os.kill(pid, signal.SIGKILL)
                self.status(pid, None)
                raise subprocess.TimeoutExpired(command, timeout)
            return subprocess.CompletedProcess(command, status, _text(out), _text(err))

    def close(self) -> None:
        self._channel.shutdown(socket.SHUT_WR)
        self._process.wait(30)
        self._channel.close()
        shutil.rmtree(self._scratch, ignore_errors=True)


class ForkedPopen(subprocess.Popen[str]):
    """A :class:`subprocess.Popen` of a child of the fork server: ``poll``, ``wait``,
    ``communicate``, ``send_signal`` and the pipes work as for a process of one's own."""

    def __init__(
        self, server: _ForkServer, args: list[str], pid: int, stdout: int, stderr: int
    ) -> None:
        self._server = server
        self.args, self.pid, self.returncode = args, pid, None
        self.stdin = None
        self.stdout = io.TextIOWrapper(open(stdout, "rb"))  # noqa: SIM115
        self.stderr = io.TextIOWrapper(open(stderr, "rb"))  # noqa: SIM115
        self.text_mode = self.universal_newlines = True
        self.encoding = self.errors = None
        self.pipesize = -1
        self._communication_started = False
        self._input = None
        self._sigint_wait_secs = 0.25
        self._closed_child_pipe_fds = True
        self._child_created = True
        self._waitpid_lock = threading.Lock()

    def _internal_poll(self, *args: object, **kwargs: object) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.status(self.pid, 0)
        return self.returncode

    def _wait(self, timeout: float | None) -> int:
        if self.returncode is None:
            status = self._server.status(self.pid, timeout)
            if status is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self.returncode = status
        return self.returncode

    def __del__(self) -> None:
        pass


def popen_cli(cwd: Path, env: Mapping[str, str], *args: str) -> subprocess.Popen[str]:
    """``orch-review ARGS`` in ``cwd`` in the background, with stdout and stderr as text
    pipes (stdin /dev/null): a child of the fork server when it can be, as for
    :func:`run_cli`."""
    full = _run_env(env)
    server = _FORK_SERVER.get(full)
    if server is None:
        return subprocess.Popen(
            [*ORCH_REVIEW, *args], cwd=cwd, env=full, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    (out_read, out_write), (err_read, err_write) = os.pipe(), os.pipe()
    with open(os.devnull, "rb") as null:
        pid = server.start(cwd, full, args, (null.fileno(), out_write, err_write))
    os.close(out_write)
    os.close(err_write)
    return ForkedPopen(server, [*ORCH_REVIEW, *args], pid, out_read, err_read)


def cli_launcher(directory: Path, env: Mapping[str, str]) -> Path:
    """An ``orch-review`` executable in ``directory`` for a program the test starts that
    starts orch-review itself with ``env`` (an Action step, the MCP client): a launcher
    (:mod:`tests.forkclient`) that runs it as a child of the fork server, else
    ``python -P -m orch_review``."""
    directory.mkdir(parents=True, exist_ok=True)
    launcher = directory / "orch-review"
    server = _FORK_SERVER.get(_run_env(env))
    if server is None:
        body = f'exec {shlex.quote(sys.executable)} -P -m orch_review "$@"'
    else:
        client = shlex.quote(str(SOURCE_ROOT / "tests" / "forkclient.py"))
        address = shlex.quote(str(server.address))
        body = f'{ADDRESS}={address} exec {shlex.quote(sys.executable)} -I -S {client} "$@"'
    launcher.write_text(f"#!/bin/sh\n{body}\n")
    launcher.chmod(0o755)
    return launcher


def _text(file: IO[bytes]) -> str:
    """What ``subprocess.run(text=True)`` would have decoded."""
    file.seek(0)
    text = file.read().decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _Servers:
    """This pytest process's fork server, started at its first use; None when a run's
    start-up environment differs from its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: _ForkServer | None = None

    def get(self, env: dict[str, str]) -> _ForkServer | None:
        if run_setting("ORCH_REVIEW_TEST_SPAWN"):
            return None
        with self._lock:
            server = self._server
            if server is None or not server.alive():
                server = self._server = _ForkServer(env)
                atexit.register(server.close)
        return server if server.startup == startup_environment(env) else None


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

    from orch_review.engine.shell.confinement import SandboxUnavailable
    from orch_review.engine.shell.sandbox import resolve_sandbox

    try:
        resolve_sandbox("on", root, search_path=os.environ["PATH"])
    except SandboxUnavailable as exc:
        pytest.skip(f"suggestion-check runs only under bubblewrap, which cannot run here: {exc}")
