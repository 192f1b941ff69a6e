"""A large change: every shell of the review shares one tree of links, two mounts each,
kept in the git directory for the next review."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from orch_review.engine.shell.bash import BashSession
from orch_review.engine.shell.sandbox import SandboxUnavailable, resolve_sandbox
from orch_review.scope import git as gitops
from orch_review.scope.resolve import ScopeRequest, resolve_scope
from orch_review.scope.snapshot import snapshot
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import branch_repo, commit, write

CHANGED = 80  # files under review: their mounts would cost every shell more than the tree


@pytest.fixture
def large_change(git_repo: GitRepoFactory) -> Path:
    """A feature branch editing many files, an executable script and a symbolic link kept
    as they are, then a working tree with an edit, an untracked and an ignored file."""
    repo = branch_repo(git_repo)
    base = {f"pkg/m{n}.py": f"value = {n}\n" for n in range(CHANGED)}
    write(repo, {**base, "run.sh": "#!/bin/sh\necho run\n", ".gitignore": "*.log\n"})
    (repo / "run.sh").chmod(0o755)
    (repo / "link.py").symlink_to("pkg/m0.py")
    commit(repo)
    commit(repo, {f"pkg/m{n}.py": f"value = {n + 1}\n" for n in range(CHANGED)})
    write(repo, {"pkg/m1.py": "edited on disk\n", "new.py": "untracked\n", "x.log": "noise\n"})
    return repo


def test_a_large_change_is_shown_through_one_shared_tree(large_change: Path) -> None:
    opened = gitops.open_repo(large_change)
    request = ScopeRequest("base", base="HEAD~1", head="HEAD")
    scope = resolve_scope(opened, request, env=dict(os.environ))
    before = {p: os.lstat(large_change / p).st_mode for p in ("run.sh", "pkg/m5.py")}

    with snapshot(opened, scope, os.environ) as content:
        assert content.view is not None
        try:
            sandbox = resolve_sandbox(
                "on", content.root, search_path=os.environ["PATH"], view=content.view
            )
        except SandboxUnavailable as exc:
            pytest.skip(f"bubblewrap cannot run here: {exc}")
        content.use(mounted=True)
        content.wait()
        env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
        with BashSession(content.root, env=env, timeout=30, sandbox=sandbox) as bash:
            mounts = bash.run(f"grep -c ' {content.root}' /proc/self/mountinfo").output
            m1 = bash.run("cat pkg/m1.py").output
            m5 = bash.run("cat pkg/m5.py").output
            script = bash.run("./run.sh").output
            link = bash.run("readlink link.py; cat link.py").output
            hidden = bash.run("ls new.py x.log 2>&1; echo; ls -A").output
            tried = bash.run("echo x >> pkg/m5.py; chmod 777 run.sh; touch t; echo $?")
            status = bash.run("git status --porcelain --untracked-files=all").output
            diff = bash.run("git diff --stat HEAD~1 HEAD | tail -1").output
        linked = os.stat(large_change / "run.sh").st_nlink  # shown, not copied

    assert int(mounts) <= 3  # the tree and the git directory, whatever the change's size
    assert m1 == "value = 2\n"  # the commit under review, not the edit on disk
    assert m5 == "value = 6\n"
    assert script == "run\n" and linked == 2
    assert link == "pkg/m0.py\nvalue = 1\n"
    assert "No such file" in hidden and "new.py" not in hidden.split("\n\n")[-1]
    assert "Read-only file system" in tried.output
    assert status == ""
    assert f"{CHANGED} files changed" in diff
    after = {p: os.lstat(large_change / p).st_mode for p in before}
    kept = large_change / ".git" / "orch-review-tree" / "tree"
    assert os.stat(large_change / "run.sh").st_ino == os.stat(kept / "run.sh").st_ino
    assert after == before and stat.S_IMODE(after["run.sh"]) & 0o200  # links left alone
    assert (large_change / "pkg" / "m5.py").read_text() == "value = 6\n"
    assert (large_change / "pkg" / "m1.py").read_text() == "edited on disk\n"
    assert git(large_change, "status", "--porcelain").split() == ["M", "pkg/m1.py", "??", "new.py"]


def test_a_small_change_keeps_its_few_mounts_and_makes_no_tree(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {f"pkg/m{n}.py": f"value = {n}\n" for n in range(CHANGED)})
    commit(repo)
    commit(repo, {"pkg/m1.py": "value = 2\n"})
    opened = gitops.open_repo(repo)
    scope = resolve_scope(opened, ScopeRequest("base", base="HEAD~1", head="HEAD"), env={})

    with snapshot(opened, scope, os.environ) as content:
        assert content.view is not None
        sources = [step[1] for step in content.view.steps if step[0] == "bind"]

    assert str(repo) in sources  # the working tree itself, with the one file over it
    assert not any(Path(s).name == "tree" for s in sources)
