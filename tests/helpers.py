"""Running orch-review as a user does: a real subprocess of the installed package."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.scripted import PLANTED_FILES


def run_cli(
    cwd: Path, env: Mapping[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``orch-review ARGS`` in ``cwd``; stdout and stderr captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "orch_review", *args],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def make_planted_repo(git_repo: object) -> Path:
    """A committed repository with the planted bugs of :data:`PLANTED_FILES`."""
    return git_repo(PLANTED_FILES)  # type: ignore[operator,no-any-return]
