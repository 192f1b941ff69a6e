"""One launcher process per review that forks each Landlock shell: the zygote.

Starting the launcher of :mod:`.landlock_exec` afresh for every shell costs an interpreter's
start-up, most of a shell's start. The zygote is that launcher started once (lazily, at the
first shell) as ``... --zygote FD``: for each shell, the review process sends it the
launcher's options, the shell's environment and directory, and the descriptors of the
shell's standard streams over a private ``socketpair`` (``SCM_RIGHTS``); the zygote forks a
child that confines itself exactly as a launcher started for that shell alone, then execs
the shell. The zygote answers with the child's pid and, asked once the child has ended,
its exit status.

The zygote is no way in: it is reached only through that socketpair (which no shell
inherits), its environment is empty, it is non-dumpable, and it is not confined itself, so
each child builds its own ruleset. It ends, killing the shells it started, when the review
process closes its end (:meth:`Zygote.close`, at the end of a review) or dies. (Not
``PR_SET_PDEATHSIG``: it fires when the *thread* that started the zygote ends, and a
review's shells are started from several threads.) Where it cannot start, has died or does
not answer, every shell starts through its own launcher again
(:class:`~.bash.SpawnUnavailable`).
"""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import socket
import subprocess
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from orch_review.engine.shell.bash import SpawnUnavailable

_REPLY = 4096
_STOP_SECONDS = 10.0


class Zygote:
    """The client of one zygote: started at the first :meth:`spawn`, stopped by
    :meth:`close` (or when this object is collected, or this process ends)."""

    def __init__(self, argv: Sequence[str], *, timeout: float = 60.0) -> None:
        self._argv = tuple(argv)  # the launcher's command line, without ``--zygote FD``
        # A zygote that does not answer in this time (stopped, or the machine swamped) is
        # given up: the shells start on their own.
        self._timeout = timeout
        self._lock = threading.Lock()
        self._channel: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._unusable: str | None = None

    @property
    def pid(self) -> int | None:
        """The zygote's process id, once started and while it serves."""
        return self._process.pid if self._process is not None and self._unusable is None else None

    def spawn(self, options: Sequence[str], env: Mapping[str, str], cwd: Path) -> ZygoteProcess:
        """A shell started by the zygote: ``options`` are the launcher's (``--`` and the
        command included). SpawnUnavailable if the zygote cannot start it."""
        stdin_read, stdin_write = os.pipe2(os.O_CLOEXEC)
        stdout_read, stdout_write = os.pipe2(os.O_CLOEXEC)
        ours = [stdin_write, stdout_read]
        try:
            request = {"spawn": list(options), "env": dict(env), "cwd": str(cwd)}
            reply = self._ask(request, [stdin_read, stdout_write, stdout_write])
            # Without our end of its stdin, a shell we could not track reads EOF and exits.
            process = ZygoteProcess(self, int(reply["pid"]))
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            os.close(stdin_read)
            os.close(stdout_write)
        process.stdin = os.fdopen(stdin_write, "wb", 0)
        process.stdout = os.fdopen(stdout_read, "rb", 0)
        return process

    def wait(self, pid: int) -> int:
        """Reap the zygote's child ``pid``, which has ended; its exit status as
        ``subprocess`` gives it. When the zygote is gone, the child was killed with it."""
        try:
            return int(self._ask({"wait": pid}, [])["status"])
        except SpawnUnavailable:
            return -signal.SIGKILL

    def kill_uid(self, uid: int) -> bool:
        """Kill every process of ``uid``, a root shell's own, as
        :func:`~.confinement.kill_everything_of` does, without starting a process for it;
        False if the zygote is not running (then nothing was done)."""
        try:
            self._ask({"kill_uid": uid}, [], start=False)
        except SpawnUnavailable:
            return False
        return True

    def close(self) -> None:
        """Stop the zygote, which kills every shell it started, and wait for it."""
        with self._lock:
            self._unusable = self._unusable or "stopped"
            channel, self._channel = self._channel, None
            process = self._process
        if channel is not None:
            channel.close()
        if process is not None:
            try:
                process.wait(_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _ask(self, request: dict[str, Any], fds: list[int], start: bool = True) -> dict[str, Any]:
        data = json.dumps(request).encode()
        with self._lock:
            if not start and self._channel is None:
                raise SpawnUnavailable("the zygote is not running")
            channel = self._started()
            try:
                socket.send_fds(channel, [data], fds)
            except OSError as exc:
                if exc.errno == errno.EMSGSIZE:  # this request only: rules for a huge tree
                    raise SpawnUnavailable(f"request too large for the zygote ({exc})") from None
                self._broken(f"the zygote does not answer ({exc})")
                raise SpawnUnavailable(self._unusable) from None
            try:
                reply = channel.recv(_REPLY)
            except OSError as exc:
                self._broken(f"the zygote does not answer ({exc})")
                raise SpawnUnavailable(self._unusable) from None
            if not reply:
                self._broken("the zygote has ended")
                raise SpawnUnavailable(self._unusable)
        answer: dict[str, Any] = json.loads(reply)
        if "error" in answer:
            raise SpawnUnavailable(f"the zygote refused: {answer['error']}")
        return answer

    def _started(self) -> socket.socket:
        """The channel to a running zygote, started now if need be (with the lock held)."""
        if self._unusable is not None:
            raise SpawnUnavailable(self._unusable)
        if self._channel is not None:
            return self._channel
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                [*self._argv, "--zygote", str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env={},  # nothing secret: each shell's environment comes with its request
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C is the review's to handle, not the zygote's
            )
        except OSError as exc:
            ours.close()
            self._unusable = f"the zygote cannot start ({exc})"
            raise SpawnUnavailable(self._unusable) from None
        finally:
            theirs.close()
        ours.settimeout(self._timeout)
        self._channel = ours
        # Collected without close(): the zygote sees its channel end and stops all the same.
        weakref.finalize(self, ours.close)
        return ours

    def _broken(self, why: str) -> None:
        self._unusable = why
        if self._channel is not None:
            self._channel.close()
            self._channel = None


class ZygoteProcess:
    """A shell the zygote started, as :class:`~.bash.BashSession` uses a ``Popen``: its
    pipes, its pid (the leader of its own process group), :meth:`wait` and :meth:`poll`."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self._zygote = zygote
        self.pid = pid
        self.stdin: IO[bytes] | None = None
        self.stdout: IO[bytes] | None = None
        self.returncode: int | None = None
        # The zygote reaps the child only when asked, so this pid is the shell's until then.
        self._pidfd = os.pidfd_open(pid)

    def poll(self) -> int | None:
        """The exit status if the shell has ended, else None."""
        if self.returncode is None and select.select([self._pidfd], [], [], 0)[0]:
            return self.wait()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the shell to end; its exit status (``-N`` when killed by signal N)."""
        if self.returncode is None:
            if not select.select([self._pidfd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            self.returncode = self._zygote.wait(self.pid)
            os.close(self._pidfd)
        return self.returncode
