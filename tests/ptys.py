"""Running the CLI on a real pseudo-terminal, as a person (or ``script`` in CI) does."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from collections.abc import Mapping
from pathlib import Path

#: Upper bound for one review on a loaded 2-core machine; never a timing assertion.
LIMIT = 180.0


def run_cli_on_pty(
    cwd: Path,
    env: Mapping[str, str],
    columns: int,
    *args: str,
    answer: tuple[bytes, bytes] | None = None,
) -> tuple[int, str]:
    """``orch-review ARGS`` on a pty ``columns`` wide: its exit code and all it printed
    (stdout and stderr, escape sequences included). ``answer``: (question, reply): type
    ``reply`` once ``question`` has been printed, as a person would."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "orch_review", *args],
        cwd=cwd,
        env=dict(env),
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], LIMIT)
            if not ready:
                raise AssertionError(f"nothing printed on the pty for {LIMIT:.0f} s")
            try:
                data = os.read(leader, 65536)
            except OSError:  # the follower side closed: the process is done
                break
            if not data:
                break
            chunks.append(data)
            if answer is not None and answer[0] in b"".join(chunks):
                os.write(leader, answer[1])
                answer = None
        code = process.wait(timeout=LIMIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)
    return code, b"".join(chunks).decode("utf-8", "replace")
