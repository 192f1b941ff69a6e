"""Running orch-review as a user does: a real subprocess of this checkout's package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

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
    """
    return subprocess.run(
        [*ORCH_REVIEW, *args],
        cwd=cwd,
        env=cli_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


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
