"""Where the work tree is: ``core.worktree`` in a stranger's ``.git/config`` must not send
orch-review to another directory, and the ordinary layouts with a ``.git`` file
(``git init --separate-git-dir``, a linked worktree) are reviewed like any other, through
the real CLI against the fake Messages API."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.scripted import PLANTED_FILES, planted_script
from tests.security.verdicts import HOST_RESULTS, HostVerdict

pytestmark = pytest.mark.slow

SECRET = "CANARY-outside-the-repository"
IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@t.invalid")


def _commit_planted(work: Path) -> None:
    for name, text in PLANTED_FILES.items():
        (work / name).write_text(text)
    git(work, "add", "-A")
    git(work, *IDENTITY, "commit", "-qm", "planted")


def _outside(tmp_path: Path) -> Path:
    """A directory with files of its own, which no review of the repository may read."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "app.py").write_text(f"TOKEN = {SECRET!r}\n")
    (elsewhere / "notes.txt").write_text(SECRET + "\n")
    return elsewhere


@pytest.mark.parametrize("command", [("plan",), ("--all", "--no-progress"), ("--no-progress",)])
def test_core_worktree_elsewhere_is_a_clear_error(
    command: tuple[str, ...],
    tmp_path: Path,
    api_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    request: pytest.FixtureRequest,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    _commit_planted(repo)
    elsewhere = _outside(tmp_path)
    git(repo, "config", "core.worktree", str(elsewhere))
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, *command)

    read = any(SECRET.encode() in r.raw for r in fake_api.requests) or SECRET in result.stdout
    request.config.stash[HOST_RESULTS].append(
        HostVerdict(
            f"6. core.worktree outside the repository (`{' '.join(command)}`)",
            result.returncode == 2 and not read,
            f"exit {result.returncode}, read outside: {read}",
        )
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "sets core.worktree to" in result.stderr and str(elsewhere) in result.stderr
    assert "git config --unset core.worktree" in result.stderr
    assert "Traceback" not in result.stderr and "this is a bug" not in result.stderr
    assert fake_api.requests == []
    assert not read


def test_core_worktree_naming_its_own_directory_is_fine(
    tmp_path: Path, api_env: dict[str, str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    _commit_planted(repo)
    git(repo, "config", "core.worktree", str(repo))
    (repo / "calc.py").write_text(PLANTED_FILES["calc.py"] + "# edited\n")

    result = run_cli(repo, api_env, "plan")

    assert result.returncode == 0, result.stderr
    assert "calc.py" in result.stdout


def test_a_separate_git_dir_is_reviewed(
    tmp_path: Path, api_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    work, store = tmp_path / "work", tmp_path / "store"
    git(tmp_path, "init", "-q", f"--separate-git-dir={store}", str(work))
    assert (work / ".git").is_file()
    _commit_planted(work)
    (work / "app.py").write_text(PLANTED_FILES["app.py"] + "\n# edited\n")
    fake_api.policy = planted_script()

    changes = run_cli(work, api_env, "--no-progress", "--filter-mode", "nofilter")
    fake_api.reset()
    fake_api.policy = planted_script()
    everything = run_cli(work, api_env, "--all", "--no-progress")

    for result in (changes, everything):
        assert result.returncode == 1, result.stdout + result.stderr
        assert "app.py:6" in result.stdout
        assert "Traceback" not in result.stderr
    assert not (store / "orch-review-snapshot").exists()
    assert git(work, "status", "--porcelain") == " M app.py\n"  # nothing else written


def test_a_linked_worktree_is_reviewed(
    tmp_path: Path, api_env: dict[str, str], fake_api: FakeMessagesAPI
) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    _commit_planted(main)
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked))
    (linked / "app.py").write_text(PLANTED_FILES["app.py"] + "\n# edited\n")
    fake_api.policy = planted_script()

    result = run_cli(linked, api_env, "--no-progress", "--filter-mode", "nofilter")

    assert result.returncode == 1, result.stdout + result.stderr
    assert "app.py:6" in result.stdout
