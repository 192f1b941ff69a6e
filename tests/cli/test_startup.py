"""Start-up as a user meets it: a fresh interpreter from the installed entry point.

The other CLI tests run through a fork server that has imported everything already, so an
import-time regression (``--version`` loading the anthropic SDK and the engine, seconds
instead of a fraction of one) passes them all. These commands start the way a shell or
pre-commit starts them; Python's own import report (``PYTHONPROFILEIMPORTTIME``, the
environment form of ``-X importtime``) says what each process imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from orch_review import __version__
from tests.conftest import GitRepoFactory

pytestmark = pytest.mark.slow

#: What a command that makes no API request must not import.
NOT_AT_START_UP = ("anthropic",)


def entry_point() -> list[str]:
    """The console script installed next to this interpreter, as a user's shell finds it."""
    script = Path(sys.executable).with_name("orch-review")
    return [str(script)] if script.exists() else [sys.executable, "-m", "orch_review"]


def imported(stderr: str) -> set[str]:
    """The modules named in Python's import-time report on ``stderr``."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def start(
    cwd: Path, tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``orch-review ARGS`` as a new process; its result and the modules it imported."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "HOME": str(home),
        # A user of the hook has a key set; no request may be made, so the server is unused.
        "ANTHROPIC_API_KEY": "sk-ant-startup-test",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "PYTHONPROFILEIMPORTTIME": "1",
    }
    done = subprocess.run(
        [*entry_point(), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    modules = imported(done.stderr)
    assert "click" in modules, done.stderr[-2000:]  # the report is there to be read
    return done, modules


def loaded_too_early(modules: set[str]) -> list[str]:
    return sorted(
        m for m in modules if any(m == n or m.startswith(f"{n}.") for n in NOT_AT_START_UP)
    )


def test_version_starts_without_the_anthropic_sdk(tmp_path: Path) -> None:
    done, modules = start(tmp_path, tmp_path, "--version")

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == f"orch-review, version {__version__}\n"
    assert loaded_too_early(modules) == []


def test_plan_help_starts_without_the_anthropic_sdk(tmp_path: Path) -> None:
    done, modules = start(tmp_path, tmp_path, "plan", "--help")

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("Usage: orch-review plan")
    assert loaded_too_early(modules) == []


def test_the_hook_with_nothing_staged_starts_without_the_anthropic_sdk(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo({"app.py": "print('hello')\n"})

    done, modules = start(repo, tmp_path, "hook")

    assert done.returncode == 0, done.stderr[-2000:]
    assert loaded_too_early(modules) == []
