"""Repositories of the scale bench in two layouts, and a large change committed in them.

* ``nested``: the plan bench's repository (``bench/plan_bench.py``): 100 packages of 20
  modules, ignored build trees;
* ``flat``: every file in one directory, the layout git's tree walks pay most for.

Both are built once under ``bench/out`` and reused. The file numbered ``n`` has the same path
in every repository of a layout, whatever its size, so the same change can be made in each.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bench.plan_bench import GIT_ENV, OUT, build_repo

LAYOUTS = ("nested", "flat")
CHANGE_BRANCH = "scale-change-{changed}"


def path_of(layout: str, n: int) -> str:
    """The path of file ``n`` in a repository of ``layout``."""
    if layout == "flat":
        return f"src/file{n}.py"
    return f"pkg{n % 100:02d}/mod{(n // 100) % 20:02d}/file{n}.py"


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode()


def build(layout: str, files: int) -> Path:
    """The repository of ``layout`` with ``files`` tracked files, reused when it exists."""
    if layout == "nested":
        return build_repo(files)
    repo = OUT / f"flat-repo-{files}"
    if (repo / ".git").exists():
        return repo
    (repo / "src").mkdir(parents=True, exist_ok=True)
    for n in range(files):
        (repo / path_of(layout, n)).write_text(f"def f{n}(x):\n    return x + {n}\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "synthetic")
    return repo


def with_change(repo: Path, layout: str, changed: int) -> tuple[str, str]:
    """A branch of ``repo`` changing its first ``changed`` files (made once); (base, head)."""
    base = _git(repo, "rev-parse", "main").strip()
    branch = CHANGE_BRANCH.format(changed=changed)
    exists = _git(repo, "branch", "--list", branch).strip()
    if not exists:
        _git(repo, "checkout", "-q", "-b", branch, "main")
        for n in range(changed):
            with (repo / path_of(layout, n)).open("a", encoding="utf-8") as stream:
                stream.write("# changed for the scale bench\n")
        _git(repo, "commit", "-q", "-am", f"change {changed} files")
        _git(repo, "checkout", "-q", "main")
    # As a user's index is after a while: files written in the second the index was are
    # "racily clean", and every diff against the working tree would hash them again.
    _git(repo, "update-index", "-q", "--really-refresh")
    return base, _git(repo, "rev-parse", branch).strip()
