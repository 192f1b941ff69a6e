"""What a change is compared with when no --base is given: the remote's default branch,
never a stale local one, and the header says which and why."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepoFactory, git
from tests.helpers import run_cli

pytestmark = pytest.mark.slow


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


def _plan(cwd: Path, *args: str) -> dict[str, Any]:
    result = run_cli(cwd, _env(), "plan", *args, "--json", "-")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _files(plan: dict[str, Any]) -> list[str]:
    return [f["path"] for f in plan["files"]]


@pytest.fixture
def stale_main(git_repo: GitRepoFactory, tmp_path: Path) -> tuple[Path, Path]:
    """A repository that got its remote by ``git remote add`` (so no origin/HEAD), whose local
    main is three upstream commits behind origin/main."""
    upstream = git_repo({"app.py": "print('v1')\n"})
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    git(work, "remote", "add", "origin", str(upstream))
    git(work, "fetch", "-q", "origin")
    git(work, "checkout", "-q", "-B", "main", "origin/main")
    for name in ("one.py", "two.py", "three.py"):  # the team's work, not the user's change
        (upstream / name).write_text(f"# {name}\n")
        git(upstream, "add", name)
        git(upstream, "commit", "-q", "-m", f"add {name}")
    git(work, "fetch", "-q", "origin")
    return upstream, work


def test_a_stale_local_main_does_not_become_the_base(stale_main: tuple[Path, Path]) -> None:
    _, work = stale_main
    git(work, "checkout", "-q", "--no-track", "-b", "feature", "origin/main")
    (work / "mine.py").write_text("print('mine')\n")
    git(work, "add", "mine.py")
    git(work, "commit", "-q", "-m", "my change")

    plan = _plan(work)

    assert _files(plan) == ["mine.py"]  # not one.py, two.py, three.py
    assert plan["scope"]["base_ref"] == "origin/main"
    description = plan["scope"]["description"]
    assert "against origin/main [origin's main, preferred to a local branch" in description
    assert "no origin/HEAD" in description
    shown = run_cli(work, _env(), "plan")
    assert "against origin/main [origin's main" in shown.stdout


def test_the_branch_upstream_is_the_base_when_it_is_another_branch(
    stale_main: tuple[Path, Path],
) -> None:
    _, work = stale_main
    git(work, "checkout", "-q", "--track", "-b", "feature", "origin/main")
    (work / "mine.py").write_text("print('mine')\n")

    plan = _plan(work)

    assert _files(plan) == ["mine.py"]
    assert "against origin/main [the upstream of feature]" in plan["scope"]["description"]


def test_on_main_itself_the_remote_copy_is_the_base(stale_main: tuple[Path, Path]) -> None:
    _, work = stale_main  # main tracks origin/main and is behind it: nothing of ours to review
    git(work, "merge", "-q", "--ff-only", "origin/main")
    (work / "mine.py").write_text("print('mine')\n")
    git(work, "add", "mine.py")
    git(work, "commit", "-q", "-m", "unpushed")

    plan = _plan(work)

    assert _files(plan) == ["mine.py"]
    assert plan["scope"]["base_ref"] == "origin/main"


def test_a_clone_compares_with_origin_head_and_says_so(
    stale_main: tuple[Path, Path], tmp_path: Path
) -> None:
    upstream, _ = stale_main
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    (clone / "mine.py").write_text("print('mine')\n")

    plan = _plan(clone)

    assert _files(plan) == ["mine.py"]
    assert "[origin/HEAD, the remote's default branch]" in plan["scope"]["description"]


def test_without_a_remote_local_main_is_the_base_with_nothing_to_explain(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo({"app.py": "print('v1')\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "mine.py").write_text("print('mine')\n")

    plan = _plan(repo)

    assert _files(plan) == ["mine.py"]
    assert plan["scope"]["base_ref"] == "main"
    assert "[" not in plan["scope"]["description"]
