"""What resolving a scope and making its snapshot ask of git follows the change, not the
repository: the same commands in a small and a large repository, the working tree compared
with the base once, sizes looked up for the changed files alone, and a file's change time
(which a tree of links changes) no reason to read it again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from orch_review.scope import git as gitops
from orch_review.scope.resolve import ScopeRequest, resolve_scope
from orch_review.scope.snapshot import snapshot
from tests.conftest import GitRepoFactory, git, write
from tests.gitrepos import commit

# A git on PATH that logs each run's arguments, one line each.
WRAPPER = """#!/bin/sh
printf '%s\\n' "$*" >> "{log}"
exec "{git}" "$@"
"""


@pytest.fixture
def git_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The log of every git run's arguments."""
    real = shutil.which("git")
    assert real is not None
    bin_dir, log = tmp_path / "logging-bin", tmp_path / "git.log"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(WRAPPER.format(log=log, git=real))
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def _repository(git_repo: GitRepoFactory, files: int) -> Path:
    """A repository of ``files`` files in ten directories, two of them then edited."""
    tracked: dict[str, str | bytes] = {f"d{n % 10}/f{n}.py": f"x = {n}\n" for n in range(files)}
    repo = git_repo({**tracked, ".gitignore": "build/\n*.log\n"})
    write(repo, {"d0/f0.py": "x = 'zero'\n", "d1/f1.py": "x = 'one'\n"})
    # Untracked files under review, and ignored ones the agents must not see.
    write(repo, {"new/a.py": "a = 1\n", "new/b.log": "", "build/out.py": "", "d2/x.log": ""})
    return repo


def _review_runs(repo: Path, log: Path) -> list[str]:
    """The git runs of resolving the default scope and making its snapshot."""
    log.write_text("")
    opened = gitops.open_repo(repo)
    scope = resolve_scope(opened, ScopeRequest(base="main"), env=dict(os.environ))
    assert scope.paths == ("d0/f0.py", "d1/f1.py", "new/a.py")
    with snapshot(opened, scope, os.environ) as content:
        assert content.read("d0/f0.py") == b"x = 'zero'\n"
        assert content.read("new/a.py") == b"a = 1\n"
        assert content.read("build/out.py") is None
    # GitPython asks git's version once a process: not a question about the repository.
    return [run for run in log.read_text().splitlines() if run != "version"]


def _whole_tree_comparisons(runs: list[str]) -> list[str]:
    """The diffs that compare every tracked file's working copy: neither two trees, nor the
    index alone, nor limited to named paths."""
    found = []
    for run in runs:
        words = run.split()
        if "diff" not in words or "--cached" in words:
            continue
        paths = words[words.index("--") + 1 :] if "--" in words else []
        if not any(p.startswith(":(top,literal)") for p in paths):
            found.append(run)
    return found


def test_a_change_asks_git_the_same_in_a_small_and_a_large_repository(
    git_repo: GitRepoFactory, git_log: Path
) -> None:
    small = _review_runs(_repository(git_repo, 10), git_log)
    large = _review_runs(_repository(git_repo, 600), git_log)

    assert len(large) == len(small), (small, large)
    # The working tree is compared with the base for the changed names and for the patch;
    # the snapshot records those names without comparing every file again.
    assert len(_whole_tree_comparisons(large)) == 2, large
    # The working tree is walked once for untracked files: what the scope reviews and what
    # the snapshot hides come from the same listing.
    walks = [run for run in large if "--others" in run.split() and run.endswith(" --")]
    assert len(walks) == 1, large
    # No listing of the whole index to find no sparse checkout.
    assert not [run for run in large if run.startswith("ls-files") and " -t" in run], large


def test_a_file_staged_then_put_back_is_reviewed_as_it_is_on_disk(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo({"kept.py": "x = 1\n", "back.py": "y = 1\n"})
    write(repo, {"back.py": "y = 2\n"})
    git(repo, "add", "back.py")
    write(repo, {"back.py": "y = 1\n", "kept.py": "x = 2\n"})  # back to the base's content

    opened = gitops.open_repo(repo)
    scope = resolve_scope(opened, ScopeRequest(base="main"), env=dict(os.environ))
    assert scope.paths == ("kept.py",)
    with snapshot(opened, scope, os.environ) as content:
        # The working copy is under review, not the staged version.
        assert content.read("back.py") == b"y = 1\n"
        assert content.read("kept.py") == b"x = 2\n"


def test_sizes_of_more_changed_files_than_are_named_are_those_of_the_head(
    git_repo: GitRepoFactory, git_log: Path
) -> None:
    repo = git_repo({f"f{n}.py": "" for n in range(250)})
    git(repo, "checkout", "-q", "-b", "feature")
    head = commit(repo, {f"f{n}.py": "x" * n + "\n" for n in range(1, 250)})

    git_log.write_text("")
    scope = resolve_scope(
        gitops.open_repo(repo), ScopeRequest("base", base="main", head=head), env={}
    )

    assert {f.path: f.size for f in scope.files} == {f"f{n}.py": n + 1 for n in range(1, 250)}
    # Only the changed files' sizes are looked up, not every blob of the tree.
    runs = git_log.read_text().splitlines()
    assert not [run for run in runs if "ls-tree" in run.split() and "-l" in run.split()], runs


def test_a_file_linked_elsewhere_is_not_changed_to_the_reviews_git(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo({"a.py": "a = 1\n", "b.py": "b = 1\n"})
    past = 1_000_000_000  # before the index was written: no file is racily clean
    for name in ("a.py", "b.py"):
        os.utime(repo / name, (past, past))
    git(repo, "update-index", "--really-refresh")
    recorded = max(int(os.stat(repo / name).st_ctime) for name in ("a.py", "b.py"))
    links = tmp_path / "links"
    links.mkdir()
    # As a tree of links does, each file's change time moves, past the second git records
    # (the clock is waited for, at most a second: git compares whole seconds).
    while min(int(os.stat(repo / name).st_ctime) for name in ("a.py", "b.py")) <= recorded:
        for name in ("a.py", "b.py"):
            (links / name).unlink(missing_ok=True)
            os.link(repo / name, links / name)

    opened = gitops.open_repo(repo)
    stat_dirty = opened.git.execute(["git", "diff-files", "--name-only"])

    assert stat_dirty == ""  # nothing to read again, nothing reported changed
    assert git(repo, "diff-files", "--name-only").split() == ["a.py", "b.py"]  # git's default


def test_a_commit_with_many_changed_files_is_listed_once(
    git_repo: GitRepoFactory, git_log: Path
) -> None:
    repo = git_repo({f"d{n % 5}/f{n}.py": "" for n in range(300)})
    git(repo, "checkout", "-q", "-b", "feature")
    head = commit(repo, {f"d{n % 5}/f{n}.py": f"x = {n}\n" for n in range(250)})
    git(repo, "checkout", "-q", "main")
    opened = gitops.open_repo(repo)
    scope = resolve_scope(opened, ScopeRequest("base", base="main", head=head), env={})

    git_log.write_text("")
    with snapshot(opened, scope, os.environ) as content:
        assert content.read("d3/f3.py") == b"x = 3\n"
        assert content.blob_ids(["d4/f4.py", "d4/f299.py"]).keys() == {"d4/f4.py", "d4/f299.py"}
        content.use(mounted=True)
        content.wait()

    # Its submodules, the blob ids of the 250 files and the view: one listing of the tree.
    runs = git_log.read_text().splitlines()
    whole = [run for run in runs if "ls-tree" in run.split() and run.split()[-1] in (head, "--")]
    assert len(whole) == 1, runs


def test_files_called_a_name_are_found_in_a_tree_without_listing_it(
    git_repo: GitRepoFactory, git_log: Path
) -> None:
    repo = git_repo(
        {
            "REVIEW.md": "top",
            "pkg/REVIEW.md": "nested",
            "pkg/deep/er/REVIEW.md": "deep",
            "pkg/NOT-REVIEW.md": "other",
            "REVIEW.md.bak": "other",
            "odd[1].md": "a name with glob characters",
            "x/odd[1].md": "again",
        }
    )
    opened = gitops.open_repo(repo)
    rev = gitops.resolve_commit(opened, "HEAD")

    git_log.write_text("")
    found = gitops.files_called(opened, rev, ["REVIEW.md"])
    named = gitops.files_named(opened, rev, "REVIEW.md")
    runs = git_log.read_text().splitlines()

    assert found == named == ["REVIEW.md", "pkg/REVIEW.md", "pkg/deep/er/REVIEW.md"]
    assert not [run for run in runs if "ls-tree" in run.split()], runs
    # A name git would read as a pattern is looked for the long way, literally.
    assert gitops.files_called(opened, rev, ["odd[1].md"]) == ["odd[1].md", "x/odd[1].md"]
    assert gitops.files_called(opened, "HEAD", ["REVIEW.md"]) == found
