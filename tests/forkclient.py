"""``orch-review`` for programs the tests start that start orch-review themselves (the
Action's steps, the MCP client): a launcher that asks the fork server
(:mod:`tests.forkserver`) to run the CLI with this process's directory, environment,
arguments and standard streams, passes on the signals it gets, and ends as the run ended.

It needs the standard library only (it runs under ``-I -S``). Where the server cannot run it
(no server, or an environment that differs where an interpreter reads it at start-up), it
becomes ``python -P -m orch_review`` itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys

#: The server's socket, set by the launcher script and removed from the run's environment.
ADDRESS = "ORCH_REVIEW_TEST_FORK_ADDRESS"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)


def _spawn(args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, "-P", "-m", "orch_review", *args])


def _forward(pid: int) -> None:
    def send(signum: int, frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for signum in FORWARDED:
        signal.signal(signum, send)


def main() -> None:
    args = sys.argv[1:]
    address = os.environ.pop(ADDRESS, "")
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        channel.connect(address)
    except OSError:
        _spawn(args)
    request = {"cwd": os.getcwd(), "env": dict(os.environ), "args": args}
    socket.send_fds(channel, [json.dumps(request).encode()], [0, 1, 2])
    reply = json.loads(channel.recv(4096) or b'{"spawn": true}')
    if reply.get("spawn"):
        _spawn(args)
    _forward(reply["pid"])
    ended = channel.recv(4096)
    status = json.loads(ended)["status"] if ended else 1
    if status < 0:  # killed by a signal: so is this launcher
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main()
