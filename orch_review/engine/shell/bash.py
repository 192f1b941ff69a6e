"""Local executor for the Anthropic-defined bash tool: one persistent shell per agent.

Each command is sent to a long-lived ``bash`` over its stdin, wrapped so that the command
reads ``/dev/null`` instead of the protocol pipe, and followed by a line carrying a fresh
random sentinel and ``$?``. Output is read until that line, within a deadline and within a
bounded amount of memory. A timeout, or output far beyond what can be kept, kills the shell's
whole process group; the next command starts a fresh shell.

How the shell process is started is up to a :class:`ShellLauncher` (see
:mod:`orch_review.engine.shell.sandbox`): it may wrap the shell in a sandbox, change its user and
give it a private home that lives exactly as long as the shell.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import CancelledError, Executor, Future
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Protocol

from orch_review.quoting import text_for_json

BASH_TOOL: dict[str, Any] = {"type": "bash_20250124", "name": "bash"}
#: The same shell as a client tool, for servers that do not know the Anthropic-defined one
#: (see orch_review.engine.api.capabilities): same session, sandbox and output contract.
CLIENT_BASH_TOOL: dict[str, Any] = {
    "name": "bash",
    "description": (
        "Run a command in a persistent bash session (working directory and environment "
        "survive between calls) in the repository under review. Returns stdout and stderr "
        "combined, cut when long, and the exit status when it is not zero. Commands time "
        "out; nothing is interactive; there is no network."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The bash command to run."},
            "restart": {
                "type": "boolean",
                "description": "true to start a fresh session (then `command` is optional).",
            },
        },
    },
}

_SENTINEL_PREFIX = "__ORCH_REVIEW_DONE_"
_READ_SIZE = 65536
_MAX_DRAIN_READS = 64  # after a kill, only a process that escaped the group can keep writing
_POLL_INTERVAL = 0.05  # only without pidfd, to notice a shell that exits under a background job
_MIN_OUTPUT_CAP = 500
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))
# Past this many times the kept output, the rest is not worth waiting for: `yes` or a 1 GB
# `cat` would otherwise run until the timeout, pinning a CPU and the pipe.
OUTPUT_KILL_FACTOR = 2000
_SHELL = ("bash", "--noprofile", "--norc")
# Signals a resource limit sends (128 + N is what bash reports for a child they killed).
_LIMIT_SIGNALS = {152: "CPU time limit (SIGXCPU)", 153: "file size limit (SIGXFSZ)"}


@dataclass(frozen=True)
class BashResult:
    """What one command produced; ``output`` already carries any note meant for the model."""

    output: str
    exit_code: int | None
    timed_out: bool
    truncated: bool
    overflowed: bool = False  # stopped for printing more than the output limit


@dataclass(frozen=True)
class ToolOutcome:
    """The content of the ``tool_result`` block sent back to the model."""

    text: str
    is_error: bool


def _decode(data: bytes | bytearray) -> str:
    """Output as the model reads it: a byte that is not UTF-8 (a file name's, a cut
    character's) in octal (``\\377``), as git writes such a name, never dropped."""
    return text_for_json(data.decode("utf-8", "surrogateescape"))


def _omission_note(omitted: int) -> str:
    return (
        f"\n[... {omitted} characters omitted; narrow the command to see them, "
        "e.g. with grep -n, head, tail or sed -n '120,180p' ...]\n"
    )


class _BoundedOutput:
    """The head and a rolling tail of a byte stream, each at most ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._head = bytearray()
        self._tail = bytearray()
        self._dropped_chars = 0
        self._dropped = False

    def add(self, data: bytes | bytearray) -> None:
        room = self._limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        excess = len(self._tail) - self._limit
        if excess > 0:
            # Counting lead bytes is exact for valid UTF-8, which is all the note needs.
            self._dropped_chars += len(self._tail[:excess].translate(None, _CONTINUATION_BYTES))
            del self._tail[:excess]
            self._dropped = True

    def render(self, cap: int) -> tuple[str, bool]:
        """Decode to at most ``cap`` characters, cut in the middle with a note if needed."""
        if self._dropped:
            head, tail = _decode(self._head), _decode(self._tail)
            total = len(head) + self._dropped_chars + len(tail)
        else:
            head = tail = _decode(self._head + self._tail)
            total = len(head)
            if total <= cap:
                return head, False
        keep = max(cap - len(_omission_note(total)), 0)
        keep_head, keep_tail = keep // 2, keep - keep // 2
        omitted = total - keep_head - keep_tail
        tail_part = tail[len(tail) - keep_tail :] if keep_tail else ""
        return head[:keep_head] + _omission_note(omitted) + tail_part, True


class ShellProcess(Protocol):
    """A started shell, as a ``subprocess.Popen`` gives it: the leader of its own process
    group, with a pipe to its stdin and one from its stdout and stderr."""

    @property
    def pid(self) -> int: ...

    @property
    def stdin(self) -> IO[bytes] | None: ...

    @property
    def stdout(self) -> IO[bytes] | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def poll(self) -> int | None: ...


class SpawnUnavailable(Exception):
    """A launch's quicker way to start its shell (see :attr:`ShellLaunch.spawn`) cannot
    start it: the shell starts from ``argv`` instead."""


@dataclass(frozen=True)
class ShellLaunch:
    """How to start one shell process.

    ``user`` (with the same number as group, and no supplementary groups) needs root;
    ``cleanup`` runs once the shell is gone, e.g. to remove a private home. ``spawn``, when
    given, starts the same process as ``argv`` would, confined the same way, more quickly
    (a review's zygote, see :mod:`.zygote`); if it raises SpawnUnavailable, ``argv`` runs.
    """

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    user: int | None = None
    cleanup: Callable[[], None] | None = None
    spawn: Callable[[], ShellProcess] | None = None

    def start(self) -> ShellProcess:
        """Start the shell in a new session, its stdout and stderr on one pipe."""
        if self.spawn is not None:
            with contextlib.suppress(SpawnUnavailable):
                return self.spawn()
        return subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            bufsize=0,
            **self.process_options(),
        )

    def process_options(self) -> dict[str, Any]:
        """The ``subprocess`` arguments that start this launch (argv aside): every shell,
        and the sandbox probe that must start exactly as they do, use these."""
        return {
            "cwd": self.cwd,
            "env": self.env,
            "user": self.user,
            "group": self.user,
            "extra_groups": [] if self.user is not None else None,
        }


class ShellLauncher(Protocol):
    """Turns "run ``shell`` in ``cwd`` with ``env``" into a concrete :class:`ShellLaunch`."""

    def launch(self, cwd: Path, env: Mapping[str, str], shell: Sequence[str]) -> ShellLaunch:
        """The process to start for one shell; called again after every restart."""
        ...


class BashSession:
    """One persistent ``bash`` process: cwd and variables survive between commands.

    Used by one thread at a time; sessions share no state, so many can run in parallel.
    ``launcher`` is a plain argv prefix; ``sandbox`` (exclusive with it) decides everything
    about how the shell starts.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        env: Mapping[str, str],
        timeout: float = 60.0,
        output_cap: int = 8000,
        launcher: Sequence[str] = (),
        sandbox: ShellLauncher | None = None,
        starter: Executor | None = None,
        before_start: Callable[[], None] | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        if output_cap < _MIN_OUTPUT_CAP:
            raise ValueError(f"output_cap must be at least {_MIN_OUTPUT_CAP}, got {output_cap}")
        if launcher and sandbox is not None:
            raise ValueError("give either a launcher prefix or a sandbox, not both")
        self._cwd = Path(cwd)
        # A non-interactive bash sources $BASH_ENV even with --norc; start from a known state.
        self._env = {k: v for k, v in env.items() if k != "BASH_ENV"}
        self._timeout = timeout
        self._output_cap = output_cap
        self._output_limit = OUTPUT_KILL_FACTOR * output_cap
        self._launcher = tuple(launcher)
        self._sandbox = sandbox
        self._proc: ShellProcess | None = None
        self._pidfd: int | None = None
        self._cleanup: Callable[[], None] | None = None
        self._starter = starter
        self._before_start = before_start  # e.g. until the content to work in is in place
        self._starting: Future[ShellProcess] | None = None
        # Bytes that arrived after the last sentinel (a background job still writing).
        self._pending = bytearray()

    def __enter__(self) -> BashSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        """Start the shell now rather than at the first command, so that its start-up
        overlaps whatever the caller does next.

        With a ``starter``, the shell is launched on its thread, which takes the launch's
        milliseconds of fork and exec off the caller's too. The starter's threads must
        outlive the shells they start: bubblewrap's ``--die-with-parent`` kills the sandbox
        when the *thread* that started it exits. A thread pool's workers do.
        """
        if self._proc is not None or self._starting is not None:
            return
        if self._starter is None:
            self._start()
        else:
            self._starting = self._starter.submit(self._start)

    def _shell(self) -> ShellProcess:
        """The running shell: the one :meth:`start` launched, or a new one."""
        if self._starting is not None:
            starting, self._starting = self._starting, None
            return starting.result()
        return self._proc if self._proc is not None else self._start()

    def run(self, command: str) -> BashResult:
        """Run ``command`` in the shell (starting one if needed) and collect its output."""
        proc = self._shell()
        nonce = secrets.token_hex(16)
        token = _SENTINEL_PREFIX + nonce
        # The sentinel is printed from two separate words, so `set -x` tracing the printf
        # line cannot produce it; it must be a whole line of output to count.
        sentinel = re.compile(b"\n" + token.encode() + rb" (\d+)\n")
        quoted = command.replace("'", "'\\''")
        script = (
            f"builtin eval -- '{quoted}' < /dev/null\n"
            f"builtin printf '\\n%s%s %d\\n' {_SENTINEL_PREFIX} {nonce} \"$?\"\n"
        )
        assert proc.stdin is not None
        data = memoryview(script.encode("utf-8", "replace"))
        try:
            while data:
                data = data[os.write(proc.stdin.fileno(), data) :]
        except BrokenPipeError:
            pass  # the shell is gone; reading below reports how it ended
        return self._collect(proc, sentinel, holdback=len(token) + 8)

    def restart(self) -> str:
        """Kill the shell; the next command starts a fresh one. Returns a note for the model."""
        self.close()
        return (
            "The bash session was restarted: the next command runs in a fresh shell, in the "
            "original working directory with the original environment."
        )

    def close(self) -> None:
        """Kill the shell's process group (background jobs included) and reap it."""
        self._pending = bytearray()
        if self._starting is not None:
            starting, self._starting = self._starting, None
            with contextlib.suppress(CancelledError):  # wait: no shell may outlive its session
                starting.exception()
        if self._proc is not None:
            self._stop(self._proc, sink=None)

    def _start(self) -> ShellProcess:
        if self._before_start is not None:
            self._before_start()
        if self._sandbox is not None:
            launch = self._sandbox.launch(self._cwd, self._env, _SHELL)
        else:
            launch = ShellLaunch((*self._launcher, *_SHELL), self._env, self._cwd)
        try:
            # A new session makes the shell the leader of a process group we can kill whole.
            # Under bubblewrap the leader is bwrap, whose death takes the sandbox's PID
            # namespace, and so every process in it, down too (--die-with-parent).
            proc = launch.start()
        except BaseException:
            if launch.cleanup is not None:
                launch.cleanup()
            raise
        self._cleanup = launch.cleanup
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        self._proc = proc
        try:
            # A pidfd tells us the shell exited even while a background job holds the pipe.
            self._pidfd = os.pidfd_open(proc.pid) if hasattr(os, "pidfd_open") else None
        except OSError:
            self._pidfd = None
        return proc

    def _collect(
        self, proc: ShellProcess, sentinel: re.Pattern[bytes], holdback: int
    ) -> BashResult:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        out = _BoundedOutput(4 * self._output_cap)  # 4: the most bytes a character can take
        scan, self._pending = self._pending, bytearray()
        received = 0
        deadline = time.monotonic() + self._timeout
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            if self._pidfd is not None:
                selector.register(self._pidfd, selectors.EVENT_READ)
            while True:
                match = sentinel.search(scan)
                if match is not None:
                    out.add(scan[: match.start()])
                    self._pending = scan[match.end() :]
                    return self._result(out, int(match.group(1)), timed_out=False, note="")
                if len(scan) > holdback:  # keep only what could be the start of the sentinel
                    out.add(scan[:-holdback])
                    del scan[:-holdback]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    out.add(scan)
                    self._stop(proc, sink=out)
                    note = (
                        f"[command timed out after {self._timeout:g} s; the shell was restarted "
                        "(working directory and variables were reset)]"
                    )
                    return self._result(out, None, timed_out=True, note=note)
                wait = remaining if self._pidfd is not None else min(remaining, _POLL_INTERVAL)
                ready = {key.fd for key, _ in selector.select(wait)}
                chunk = b""
                if fd in ready:
                    try:
                        chunk = os.read(fd, _READ_SIZE)
                    except BlockingIOError:
                        continue
                    scan += chunk
                    received += len(chunk)
                if received > self._output_limit and sentinel.search(scan) is None:
                    out.add(scan)
                    self._stop(proc, sink=out)
                    note = (
                        f"[the command printed more than {self._output_limit:,} bytes and was "
                        "stopped; the shell was restarted (working directory and variables were "
                        "reset); narrow the command, e.g. with grep -n, head or sed -n]"
                    )
                    return self._result(out, None, timed_out=False, note=note, overflowed=True)
                if sentinel.search(scan) is None and self._shell_ended(proc, ready, chunk):
                    out.add(scan)
                    code = self._stop(proc, sink=out)
                    note = (
                        f"[the shell exited with code {code}; the next command starts a fresh "
                        "shell (working directory and variables were reset)]"
                    )
                    return self._result(out, code, timed_out=False, note=note)

    def _shell_ended(self, proc: ShellProcess, ready: set[int], chunk: bytes) -> bool:
        assert proc.stdout is not None
        if proc.stdout.fileno() in ready and not chunk:
            return True  # end of file: the shell and everything it started are gone
        if self._pidfd is not None:
            return self._pidfd in ready
        return proc.poll() is not None

    def _result(
        self,
        out: _BoundedOutput,
        code: int | None,
        *,
        timed_out: bool,
        note: str,
        overflowed: bool = False,
    ) -> BashResult:
        # One character for the newline that may separate the output from the note.
        text, truncated = out.render(self._output_cap - len(note) - 1 if note else self._output_cap)
        if note:
            text = f"{text}\n{note}" if text and not text.endswith("\n") else text + note
        return BashResult(
            output=text,
            exit_code=code,
            timed_out=timed_out,
            truncated=truncated,
            overflowed=overflowed,
        )

    def _stop(self, proc: ShellProcess, sink: _BoundedOutput | None) -> int:
        """Kill the process group, reap the shell, forget it; returns its exit status."""
        with contextlib.suppress(ProcessLookupError, PermissionError):  # group already empty
            os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
        assert proc.stdin is not None and proc.stdout is not None
        if sink is not None:
            for _ in range(_MAX_DRAIN_READS):
                try:
                    chunk = os.read(proc.stdout.fileno(), _READ_SIZE)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                sink.add(chunk)
        proc.stdin.close()
        proc.stdout.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        self._proc = None
        cleanup, self._cleanup = self._cleanup, None
        if cleanup is not None:
            cleanup()
        return 128 - code if code < 0 else code  # killed by signal N: report 128+N like bash


def format_result(result: BashResult) -> str:
    """The text the model sees: output (or "(no output)"), then a non-zero exit code."""
    text = result.output or "(no output)"
    if result.exit_code:
        separator = "" if text.endswith("\n") else "\n"
        limit = _LIMIT_SIGNALS.get(result.exit_code)
        hit = f"; a command hit the {limit}" if limit else ""
        text += f"{separator}[exit code: {result.exit_code}{hit}]"
    return text


def handle_tool_call(session: BashSession, tool_input: Mapping[str, object]) -> ToolOutcome:
    """Validate one bash tool call, run it and format the result for the model.

    Only invalid input, timeouts and runaway output are errors: a non-zero exit code is
    information.
    """
    command = tool_input.get("command")
    has_command = isinstance(command, str) and command.strip() != ""
    if tool_input.get("restart") is True:
        note = session.restart()
        if not has_command:
            return ToolOutcome(text=note, is_error=False)
        outcome = handle_tool_call(session, {"command": command})
        return ToolOutcome(text=f"{note}\n{outcome.text}", is_error=outcome.is_error)
    if not isinstance(command, str) or not has_command:
        return ToolOutcome(
            text='Invalid input: give a non-empty "command" string, or "restart": true.',
            is_error=True,
        )
    result = session.run(command)
    return ToolOutcome(text=format_result(result), is_error=result.timed_out or result.overflowed)
