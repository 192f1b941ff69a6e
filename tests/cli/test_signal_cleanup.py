"""A signal at any point of a review leaves nothing in TMPDIR. The review waits at a named
point (``ORCH_REVIEW_PAUSE_AT``: a directory made but not yet recorded, or one about to be
removed), says so with a file, gets the signal there, and TMPDIR, its own, must be empty
once it has exited."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from orch_review.tempdirs import PAUSE_MARK_VARIABLE, PAUSE_VARIABLE
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import popen_cli
from tests.scripted import ReviewScript

SIGNALS = {"TERM": (signal.SIGTERM, 143), "HUP": (signal.SIGHUP, 129), "INT": (signal.SIGINT, 130)}
CASES = [
    # Made, not yet recorded: only its name says whose it is.
    *(("made:snapshot", name) for name in SIGNALS),
    ("made:index", "TERM"),
    ("made:home", "HUP"),
    ("made:home", "INT"),
    # About to be removed at the end of the review: the signal interrupts the removal.
    *(("removing:snapshot", name) for name in SIGNALS),
    ("removing:home", "TERM"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("point", "name"), CASES)
def test_a_signal_at_any_point_leaves_tmpdir_empty(
    point: str,
    name: str,
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    signum, code = SIGNALS[name]
    repo = git_repo({"app.py": "a = 1\n", ".orch-review.toml": "effort = 'low'\n"})
    (repo / "app.py").write_text("a = 2\n")
    scratch, mark = tmp_path / "tmp", tmp_path / "paused"
    scratch.mkdir()
    fake_api.policy = ReviewScript([])
    env = {**api_env, "TMPDIR": str(scratch), PAUSE_VARIABLE: point, PAUSE_MARK_VARIABLE: str(mark)}
    proc = popen_cli(repo, env, "--sandbox", "off", "--no-progress")
    try:
        deadline = time.monotonic() + 120
        while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # waiting for the review to reach the point, not timing it
        reached = mark.exists()
        if reached:
            proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = err

    assert reached, f"the review never reached {point}: {stderr}"
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr
    assert sorted(os.listdir(scratch)) == []
