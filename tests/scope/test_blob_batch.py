"""Reading the content under review: one long-lived ``git cat-file --batch`` per review, each
blob asked for once, whatever the repository's size or how often a file is read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from orch_review.scope import git as gitops
from orch_review.scope.resolve import ScopeRequest, resolve_scope
from orch_review.scope.snapshot import snapshot
from tests.conftest import GitRepoFactory
from tests.gitrepos import branch_repo, commit

# A git on PATH that logs each run's arguments, and what each batch is asked on its input
# (in a file of its own, named by its process id).
WRAPPER = """#!/bin/sh
printf 'run %s\\n' "$*" >> "{log}"
case "$*" in
  *"cat-file --batch"*)
    exec tee -a "{log}.batch.$$" | "{git}" "$@" ;;
esac
exec "{git}" "$@"
"""


@pytest.fixture
def git_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The log of every git run (``run ARGS``) and of every line a batch is given."""
    real = shutil.which("git")
    assert real is not None
    bin_dir, log = tmp_path / "logging-bin", tmp_path / "git.log"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(WRAPPER.format(log=log, git=real))
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def test_the_content_under_review_is_read_through_one_batch_each_blob_once(
    git_repo: GitRepoFactory, git_log: Path
) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {"a.py": "print('a')\n", "b.py": "print('b')\n", "pkg/c.py": "c = 1\n"})
    scope = resolve_scope(gitops.open_repo(repo), ScopeRequest(base="main"), env=dict(os.environ))
    git_log.write_text("")  # what resolving the scope ran is not the question

    with snapshot(gitops.open_repo(repo), scope, os.environ) as content:
        reads = [content.read(p) for p in ("a.py", "b.py", "a.py", "pkg", "gone.py", "a.py")]
        assert content.read("b.py") == b"print('b')\n"

    assert reads == [b"print('a')\n", b"print('b')\n", b"print('a')\n", None, None, b"print('a')\n"]
    lines = git_log.read_text().splitlines()
    # No process per read: the batches (the reader's, and the one writing the changed
    # files for the agents' view) are all.
    runs = {line for line in lines if line.startswith("run ") and "cat-file" in line}
    assert runs == {"run cat-file --batch"}
    batches = [b.read_text().splitlines() for b in git_log.parent.glob("git.log.batch.*")]
    (asked,) = [b for b in batches if any(name.endswith(":gone.py") for name in b)]
    # Each asked once: the files under review by blob id, the others by name.
    assert len(asked) == len(set(asked)) == 4, asked
    assert sorted(n.partition(":")[2] for n in asked if ":" in n) == ["gone.py", "pkg"]


def test_a_name_a_batch_cannot_be_asked_for_is_still_read(
    git_repo: GitRepoFactory, git_log: Path
) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {"two\nlines.py": "x = 1\n", "plain.py": "y = 2\n"})
    scope = resolve_scope(gitops.open_repo(repo), ScopeRequest(base="main"), env=dict(os.environ))
    with snapshot(gitops.open_repo(repo), scope, os.environ) as content:
        assert content.read("two\nlines.py") == b"x = 1\n"
        assert content.read("plain.py") == b"y = 2\n"
