"""A fork server for :func:`tests.helpers.run_cli`: ``python -P -m orch_review`` without
paying for its imports on every run.

Importing the ``anthropic`` SDK alone costs about 3 CPU-seconds, and the suite runs the CLI
some 300 times. This server is started once per pytest process with the environment
:func:`tests.helpers.run_cli` gives every run; it imports orch-review and its dependencies,
then forks one child per run. Each child is a real process, as ``subprocess.run`` would
start: it takes the run's working directory, environment, argv and standard streams
(the descriptors the caller sends: /dev/null, files, pipes), runs
``orch_review/__main__.py`` as ``-m`` does, and ends as the interpreter does (non-daemon
threads joined, atexit handlers run, the streams flushed) with the CLI's exit status, but
without tearing down the 3,500 modules the server imported: that alone costs a second.

What a fresh interpreter decides at start-up (the locale, ``PYTHON*`` variables, the
``PATH`` gitpython found git on) cannot be changed after the fork: a run whose
environment differs there is started as a fresh process by the caller. Set
``ORCH_REVIEW_TEST_SPAWN=1`` to start every run that way.

Protocol, on a SEQPACKET socket whose descriptor is the server's argument: a run is one JSON
message (directory, environment, arguments) carrying its stdin, stdout and stderr as
descriptors; the server answers ``{"pid": N}``, and ``{"exit": N, "status": S}``
(``os.waitstatus_to_exitcode``) when that child ends. Runs may overlap. A program that
starts orch-review itself (the Action's steps, the MCP client) is given a launcher instead
(:mod:`tests.forkclient`), which asks the same way on a socket the server listens on, the
second argument: one run per connection.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import json
import os
import pkgutil
import runpy
import select
import socket
import sys
import tempfile
import threading
from typing import Any

#: Variables read when an interpreter starts (or gitpython is imported): a run must match
#: the server's, else it is spawned.
STARTUP_VARIABLES = ("PATH", "LANG", "LANGUAGE", "GIT_PYTHON_GIT_EXECUTABLE")
STARTUP_PREFIXES = ("PYTHON", "LC_", "GIT_PYTHON_")


def startup_environment(env: dict[str, str]) -> dict[str, str]:
    """The part of ``env`` a running interpreter cannot take on."""
    return {
        name: value
        for name, value in env.items()
        if name in STARTUP_VARIABLES or name.startswith(STARTUP_PREFIXES)
    }


def _preload() -> None:
    """Import what reviews import: the SDK (most of the cost), and every module of
    orch-review but ``__main__`` with what they import (rich's syntax highlighting, the
    report schema's validator), so that no child imports them again."""
    import anthropic  # noqa: F401
    import pygments.lexers.python  # noqa: F401

    import orch_review

    # The providers' SDKs, which orch-review imports when a review asks for one.
    for module_name in ("boto3", "botocore.session", "google.auth.transport.requests",
                        "azure.identity"):  # fmt: skip
        with contextlib.suppress(ImportError):  # an extra that is not installed
            importlib.import_module(module_name)
    for module in pkgutil.walk_packages(orch_review.__path__, "orch_review."):
        if module.name != "orch_review.__main__":
            with contextlib.suppress(ImportError):  # an optional provider's SDK
                importlib.import_module(module.name)


def _send(channel: socket.socket, message: dict[str, int | bool]) -> None:
    channel.send(json.dumps(message).encode())


def _reap(owners: dict[int, socket.socket]) -> None:
    """Tell whoever asked for each child that ended: ``{"exit": pid, "status": code}``."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        owner = owners.pop(pid, None)
        if owner is not None:
            with contextlib.suppress(OSError):  # a launcher killed meanwhile
                _send(owner, {"exit": pid, "status": os.waitstatus_to_exitcode(status)})


def _serve(
    channel: socket.socket, listener: socket.socket
) -> tuple[dict[str, Any], list[int]] | None:
    """Fork a child per request, from the test process (``channel``) or from a launcher
    (a connection to ``listener``); a run's three standard streams come with it. Returns the
    request and the streams in the child, None in the server when the test process is gone."""
    owners: dict[int, socket.socket] = {}
    launchers: list[socket.socket] = []
    startup = startup_environment(dict(os.environ))
    while True:
        ready, _, _ = select.select([channel, listener, *launchers], [], [], 0.05)
        _reap(owners)
        for sock in ready:
            if sock is listener:
                launchers.append(listener.accept()[0])
                continue
            data, fds, _, _ = socket.recv_fds(sock, 1 << 22, 3)
            if not data:
                if sock is channel:
                    return None
                launchers.remove(sock)
                sock.close()
                continue
            request = json.loads(data)
            if sock is not channel and startup_environment(request["env"]) != startup:
                for fd in fds:
                    os.close(fd)
                _send(sock, {"spawn": True})  # the launcher starts an interpreter itself
                continue
            pid = os.fork()
            if pid == 0:
                for held in (channel, listener, *launchers):
                    held.close()
                return request, fds
            for fd in fds:
                os.close(fd)
            owners[pid] = sock
            _send(sock, {"pid": pid})


def _become(request: dict[str, Any], streams: list[int]) -> None:
    """This child takes on the run: directory, environment, streams and argv."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # recomputed from the run's environment, as a new process does
    for target, fd in enumerate(streams):
        os.dup2(fd, target)
    for fd in set(streams) - {0, 1, 2}:
        os.close(fd)
    sys.argv = ["-m", *request["args"]]


def main() -> None:
    channel = socket.socket(fileno=int(sys.argv[1]))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(sys.argv[2])  # before the imports: launchers started meanwhile wait
    listener.listen(64)
    _preload()
    gc.freeze()  # the children's collections leave the server's objects (and pages) alone
    # The children take the standard streams they are sent; the server keeps none.
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1):
        os.dup2(null, target)
    os.close(null)
    served = _serve(channel, listener)
    if served is None:
        return
    _become(*served)
    os._exit(_run())


def _run() -> int:
    """``python -m orch_review``'s run and exit status, as the interpreter ends it."""
    try:
        runpy.run_module("orch_review", run_name="__main__", alter_sys=True)
        status = 0
    except SystemExit as exc:
        status = _exit_status(exc.code)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter does first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120  # as Python exits when it cannot flush stdout
    return status


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` ends a process with."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    main()
