"""A repository received from a stranger carries a ``.git/config`` naming programs for git
to run: fsmonitor, hooks, filters, diff drivers, pager, credential helper, signing. None of
them may run on the host while orch-review plans, reviews or runs as the commit hook."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script
from tests.security.verdicts import HOST_RESULTS, HostVerdict

HOOKS = (
    "post-index-change",
    "post-checkout",
    "reference-transaction",
    "pre-commit",
    "post-commit",
    "pre-auto-gc",
    "fsmonitor-watchman",
    "post-rewrite",
)


def _tripwire(directory: Path, log: Path) -> Path:
    """A program that writes its name and arguments to ``log``, then passes stdin through
    (so a filter that runs still returns the content)."""
    script = directory / "tripwire"
    script.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec cat\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _plant(repo: Path, tmp_path: Path) -> Path:
    """Every program-running setting git knows of, each a tripwire; returns the log."""
    log = tmp_path / "ran.log"
    tools = tmp_path / "tools"
    tools.mkdir()
    tripwire = _tripwire(tools, log)
    # Committed before the traps are set: the test's own git must not trip them.
    write(repo, {".gitattributes": "* filter=trap diff=trap\n"})
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hooks_dir in (hooks, repo / ".git" / "hooks"):
        for name in HOOKS:
            (hooks_dir / name).write_text(f'#!/bin/sh\necho "hook {name}" >> {log}\n')
            (hooks_dir / name).chmod(0o755)
    settings = {
        "core.fsmonitor": f"{tripwire} fsmonitor",
        "core.hooksPath": str(hooks),
        "filter.trap.clean": f"{tripwire} clean",
        "filter.trap.smudge": f"{tripwire} smudge",
        "filter.trap.process": f"{tripwire} process",
        "filter.trap.required": "true",
        "diff.trap.textconv": f"{tripwire} textconv",
        "diff.trap.command": f"{tripwire} diff-command",
        "diff.external": f"{tripwire} external-diff",
        "core.pager": f"{tripwire} pager",
        "pager.diff": f"{tripwire} pager-diff",
        "credential.helper": f"!{tripwire} credential",
        "core.sshCommand": f"{tripwire} ssh",
        "core.askPass": f"{tripwire} askpass",
        "core.editor": f"{tripwire} editor",
        "gpg.program": f"{tripwire} gpg",
        "commit.gpgSign": "true",
        "log.showSignature": "true",
        "core.alternateRefsCommand": f"{tripwire} alternate-refs",
    }
    for key, value in settings.items():
        git(repo, "config", key, value)
    return log


@pytest.fixture
def trapped(git_repo: GitRepoFactory, tmp_path: Path) -> tuple[Path, Path]:
    repo = make_planted_repo(git_repo)
    log = _plant(repo, tmp_path)
    # A change in the working tree and one in the index: git must read both.
    write(repo, {"calc.py": (repo / "calc.py").read_text() + "# edited\n"})
    write(repo, {"app.py": (repo / "app.py").read_text().replace("SELECT *", "SELECT id")})
    os.utime(repo / "app.py", (1, 1))  # racy stat data: git has to hash the file
    return repo, log


def _ran(log: Path) -> str:
    return log.read_text() if log.exists() else ""


def _record(request: pytest.FixtureRequest, attack: str, ran: str) -> None:
    detail = "; ".join(line for line in ran.split("\n") if line)[:200]
    request.config.stash[HOST_RESULTS].append(HostVerdict(attack, not ran, detail))


def test_plan_runs_nothing_the_repository_configures(
    trapped: tuple[Path, Path], api_env: dict[str, str], request: pytest.FixtureRequest
) -> None:
    repo, log = trapped

    result = run_cli(repo, api_env, "plan")

    _record(request, "6. .git/config programs during `plan`", _ran(log))
    assert result.returncode == 0, result.stderr
    assert "calc.py" in result.stdout and "app.py" in result.stdout
    assert _ran(log) == ""


def test_a_review_runs_nothing_the_repository_configures(
    trapped: tuple[Path, Path],
    api_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    request: pytest.FixtureRequest,
) -> None:
    repo, log = trapped
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all")

    _record(request, "6. .git/config programs during a review", _ran(log))
    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    assert _ran(log) == ""


def test_the_commit_hook_runs_nothing_the_repository_configures(
    trapped: tuple[Path, Path],
    api_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    request: pytest.FixtureRequest,
) -> None:
    repo, log = trapped
    # Staged without the traps: the test's git is not under examination.
    git(repo, "-c", "core.hooksPath=/dev/null", "-c", "filter.trap.clean=", "-c",
        "filter.trap.process=", "-c", "filter.trap.required=false", "-c", "core.fsmonitor=false",
        "add", "app.py")  # fmt: skip
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "hook", "app.py")

    _record(request, "6. .git/config programs during the commit hook", _ran(log))
    assert result.returncode == 1, result.stderr + result.stdout
    assert "app.py:6" in result.stdout
    assert _ran(log) == ""
