"""Building the git repositories the scope, snapshot and plan tests run against."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.conftest import GitRepoFactory, git, write

#: The committed content of :func:`branch_repo`'s default branch.
BASE_FILES: dict[str, str | bytes] = {
    "app.py": "def greet(name):\n    return 'hello ' + name\n",
    "lib/util.py": "def add(a, b):\n    return a + b\n",
    "README.md": "# demo\n",
    ".gitignore": "*.log\nbuild/\n.env\n",
}


def commit(repo: Path, files: Mapping[str, str | bytes] | None = None, message: str = "c") -> str:
    """Write ``files``, stage everything and commit; returns the new commit's sha."""
    if files:
        write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def head(repo: Path) -> str:
    """The sha of HEAD."""
    return git(repo, "rev-parse", "HEAD").strip()


def branch_repo(git_repo: GitRepoFactory, branch: str = "feature") -> Path:
    """A repository whose ``main`` holds :data:`BASE_FILES`, checked out on a new ``branch``."""
    repo = git_repo(BASE_FILES)
    git(repo, "checkout", "-q", "-b", branch)
    return repo


def shallow_clone(upstream: Path, clone: Path, branch: str = "feature") -> Path:
    """A depth-1 clone of ``upstream`` (every branch) at ``clone``, on ``branch``."""
    git(
        clone.parent,
        "clone",
        "-q",
        "--depth",
        "1",
        "--no-single-branch",
        f"file://{upstream}",
        str(clone),
    )
    git(clone, "checkout", "-q", branch)
    return clone


def run_git(
    repo: Path, *args: str, env: Mapping[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run git without raising; for commands whose exit code is part of the answer."""
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        input=input,
        env=None if env is None else {**os.environ, **env},
        check=False,
    )
