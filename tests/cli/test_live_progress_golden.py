"""The live view of a real review on a real pseudo-terminal, at 80 and 120 columns.

The CLI runs on a pty whose window size is set with TIOCSWINSZ; the scripted subagents are
held in flight (their first request waits on an event) until the live table shows all of
them, the screen is rebuilt from the escape sequences with a terminal emulator (pyte) and
compared with tests/cli/golden/progress/, with the elapsed times and the main agent's token
count masked in place (the columns keep their width). Then the agents are released and the
review finishes. Regenerate with ``UPDATE_GOLDEN=1 pytest tests/cli/test_live_progress_golden.py``.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable

import pyte
import pytest

from tests.cli.snapshots import assert_snapshot
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.helpers import make_planted_repo
from tests.scripted import PLANTED_INJECTION, Concern, ReviewScript, is_sweep

ROWS = 40
#: Upper bound for the whole review on a loaded 2-core machine; never a timing assertion.
LIMIT = 180.0

#: Four concerns, worded as a model might, two of them long enough to be cut at 80 columns.
CONCERNS = [
    PLANTED_INJECTION,
    Concern(
        "divide",
        "Look at calc.py: can ratio() divide by zero when count comes from user input?",
        "grep -n ' / ' calc.py",
        path="calc.py",
        claim="ratio() divides by count.",
    ),
    Concern("README", "README accuracy", "grep -n 'nonexistent' README.md", path="README.md"),
    Concern(
        "imports",
        "Unused or shadowed imports across app.py and calc.py, and whether sqlite3 is used",
        "grep -n '^import os' app.py calc.py",
    ),
]


class HeldSubagents:
    """A policy that holds each concern's subagent at its first request until released."""

    def __init__(self, script: ReviewScript, hold: int) -> None:
        self._script = script
        self._hold = hold
        self._lock = threading.Lock()
        self._waiting = 0
        self.all_held = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: ModelRequest) -> Reply:
        task = request.first_user_text
        if request.role == "subagent" and request.assistant_turns == 0 and not is_sweep(task):
            with self._lock:
                self._waiting += 1
                if self._waiting == self._hold:
                    self.all_held.set()
            if not self.release.wait(LIMIT):
                raise AssertionError("the test never released the held subagents")
        return self._script(request)


def _read_until(
    leader: int, screen: pyte.Screen, stream: pyte.ByteStream, done: Callable[[], bool]
) -> bytes:
    """Feed what the process prints to ``screen`` until ``done()``; all the bytes read."""
    chunks = []
    deadline = time.monotonic() + LIMIT
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError("gave up waiting for the live view:\n" + "\n".join(screen.display))
        ready, _, _ = select.select([leader], [], [], 0.1)
        if not ready:
            continue
        try:
            data = os.read(leader, 65536)
        except OSError:  # the follower side closed: the process is done
            break
        if not data:
            break
        chunks.append(data)
        stream.feed(data)
    return b"".join(chunks)


def _lines(screen: pyte.Screen) -> list[str]:
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _live_rows(lines: list[str]) -> list[str]:
    """The live table, from its header to its totals line."""
    header = next(i for i, line in enumerate(lines) if re.match(r"agent\s+concern\s", line))
    totals = next(i for i in range(header, len(lines)) if " running" in lines[i])
    return lines[header : totals + 1]


def mask(rows: list[str]) -> list[str]:
    """Elapsed times, token counts other than 0 and the cost so far masked (the first two in
    their right-aligned columns);
    the agents' rows sorted by name (they are listed in the order their threads happened to
    start, which the operating system decides)."""
    header = rows[0]
    spans = [(header.index(word), header.index(word) + len(word)) for word in ("tokens", "elapsed")]
    masked = [header]
    for row in rows[1:-1]:
        for (start, end), name in zip(spans, ("tokens", "elapsed"), strict=True):
            value = row[start:end].strip()
            if name == "elapsed" or value != "0":
                row = row[:start] + "<n>".rjust(end - start) + row[end:]
        masked.append(row)
    totals = re.sub(r"\$[\d.]+", "$<n>", rows[-1])  # the cost so far: what has answered yet
    return [header, *sorted(masked[1:], key=_agent_order), totals]


def _agent_order(row: str) -> tuple[int, str]:
    return (0, "") if row.startswith("main ") else (1, row.split()[0])


@pytest.mark.parametrize("columns", [80, 120])
def test_the_live_view_on_a_real_terminal_matches_golden(
    columns: int, fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    policy = HeldSubagents(ReviewScript(CONCERNS), hold=len(CONCERNS))
    fake_api.policy = policy
    env = {k: v for k, v in api_env.items() if k not in {"NO_COLOR", "COLUMNS", "LINES"}}
    screen = pyte.Screen(columns, ROWS)
    stream = pyte.ByteStream(screen)

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "orch_review", "--all", "--no-journal"],
        cwd=repo,
        env={**env, "TERM": "xterm-256color"},
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    try:

        def all_rows_shown() -> bool:
            shown = "\n".join(screen.display)
            return policy.all_held.is_set() and all(
                re.search(rf"^s{n} review ", shown, re.MULTILINE) for n in range(len(CONCERNS))
            )

        _read_until(leader, screen, stream, all_rows_shown)
        live = _live_rows(_lines(screen))
        policy.release.set()
        rest = _read_until(leader, screen, stream, lambda: False)
        assert process.wait(timeout=LIMIT) == 1
    finally:
        policy.release.set()
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)

    # Nothing but the concern is cut: every row keeps its agent, turns, tokens and elapsed.
    assert all(len(row) <= columns for row in live)
    for row in live[1:-1]:
        assert re.match(r"^(main|s\d review) .*\s\d+\s+(\d+|\d+\.\dk)\s+\d+s$", row), row
    # Nothing is covered while every subagent is held; the cost is the main agent's so far.
    assert re.fullmatch(
        rf"{len(CONCERNS) + 1} running · \$[\d.]+ so far · 0/3 files covered", live[-1]
    ), live[-1]
    assert_snapshot(f"progress/live-{columns}.txt", "\n".join(mask(live)) + "\n")
    plain = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", rest).decode("utf-8", "replace")
    assert "app.py:6" in plain  # and then the report
    assert "[subagent s" not in plain  # the live view, never log lines


def test_mask_keeps_the_columns_in_place() -> None:
    rows = [
        "agent     concern          turns  tokens  elapsed",
        "main      main agent           2    3.1k       4s",
        "s1 review Look at calc.py…     0       0      12s",
        "s0 review Check app.py…        0       0      12s",
        "5 running",
    ]
    assert mask(rows) == [
        rows[0],
        "main      main agent           2     <n>      <n>",
        "s0 review Check app.py…        0       0      <n>",
        "s1 review Look at calc.py…     0       0      <n>",
        "5 running",
    ]
