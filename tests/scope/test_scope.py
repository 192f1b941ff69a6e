"""Resolving each scope against real repositories, and every way it can go wrong."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orch_review.errors import ExitCode, GitError
from orch_review.scope import git as gitops
from orch_review.scope.git import open_repo
from orch_review.scope.resolve import (
    NothingToReview,
    Scope,
    ScopeRequest,
    content_id,
    resolve_scope,
)
from orch_review.scope.reviewable import DEFAULT_MAX_FILE_SIZE
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import branch_repo, commit, head, run_git, shallow_clone, write


def resolve(repo: Path, kind: str = "change", **kwargs: object) -> Scope:
    exclude = kwargs.pop("exclude", ())
    request = ScopeRequest(kind, **kwargs)  # type: ignore[arg-type]
    return resolve_scope(
        gitops.open_repo(repo),
        request,
        exclude=exclude,  # type: ignore[arg-type]
        env=dict(os.environ),
    )


def skipped(scope: Scope) -> dict[str, str]:
    return {s.path: s.reason for s in scope.skipped}


# --- the default scope: the branch's change, committed or not --------------------------------


def test_default_scope_is_committed_staged_unstaged_and_untracked_against_the_merge_base(
    git_repo: GitRepoFactory,
) -> None:
    repo = branch_repo(git_repo)
    fork = head(repo)
    # main moves on after the fork: its new commits are not part of this change.
    git(repo, "checkout", "-q", "main")
    commit(repo, {"main_only.py": "m = 1\n"})
    git(repo, "checkout", "-q", "feature")
    commit(repo, {"committed.py": "c = 1\n"})
    write(repo, {"staged.py": "s = 1\n"})
    git(repo, "add", "staged.py")
    write(repo, {"app.py": "def greet(name):\n    return 'hi ' + name\n"})  # unstaged
    write(repo, {"untracked.py": "u = 1\n", "debug.log": "ignored\n", "build/out.py": "x\n"})

    scope = resolve(repo)

    assert scope.paths == ("app.py", "committed.py", "staged.py", "untracked.py")
    assert scope.base_commit == fork and scope.base_ref == "main"
    assert scope.source == "worktree" and scope.kind == "change"
    assert scope.untracked == ("untracked.py",)
    assert scope.changes["app.py"].added_lines == frozenset({2})
    assert scope.changes["untracked.py"].status == "added"
    assert scope.describe().startswith("working tree changes against main (feature at ")


def test_default_branch_comes_from_origin_head(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    upstream = git_repo({"a.py": "a = 1\n"})
    git(upstream, "branch", "-m", "main", "trunk")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    git(clone, "checkout", "-q", "-b", "topic")
    commit(clone, {"b.py": "b = 1\n"})

    scope = resolve(clone)

    assert scope.base_ref == "origin/trunk"
    assert scope.paths == ("b.py",)


def test_master_is_the_fallback_default_branch(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a = 1\n"})
    git(repo, "branch", "-m", "main", "master")
    git(repo, "checkout", "-q", "-b", "topic")
    commit(repo, {"b.py": "b = 1\n"})

    assert resolve(repo).base_ref == "master"


def test_base_overrides_the_default_branch(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {"first.py": "1\n"})
    git(repo, "branch", "checkpoint")
    commit(repo, {"second.py": "2\n"})

    scope = resolve(repo, base="checkpoint")

    assert scope.paths == ("second.py",)
    assert scope.base_ref == "checkpoint"


def test_on_the_default_branch_with_a_clean_tree_there_is_nothing_to_compare(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo({"a.py": "a = 1\n", ".gitignore": "*.log\n"})
    write(repo, {"noise.log": "ignored\n"})

    with pytest.raises(NothingToReview) as caught:
        resolve(repo)

    assert caught.value.exit_code == ExitCode.CLEAN
    assert "the working tree is clean" in str(caught.value)
    assert "--all" in str(caught.value)


def test_on_the_default_branch_uncommitted_work_is_the_change(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a = 1\n"})
    write(repo, {"a.py": "a = 2\n", "new.py": "n = 1\n"})

    assert resolve(repo).paths == ("a.py", "new.py")


def test_detached_head_is_reviewed_against_the_default_branch(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {"feature.py": "f = 1\n"})
    git(repo, "checkout", "-q", "--detach", "HEAD")

    scope = resolve(repo)

    assert scope.paths == ("feature.py",)
    assert scope.head.startswith("detached at ")


def test_new_repository_has_nothing_to_compare_with(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a = 1\n"}, commit=False)

    with pytest.raises(NothingToReview) as caught:
        resolve(repo)

    assert "no commits yet" in str(caught.value) and "`git add`" in str(caught.value)


def test_intent_to_add_files_are_part_of_the_change(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"later.py": "l = 1\n"})
    git(repo, "add", "-N", "later.py")

    assert resolve(repo).changes["later.py"].added_lines == frozenset({1})


# --- --staged: exactly the index ------------------------------------------------------------


def test_staged_scope_is_the_index_not_the_working_copy(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"app.py": "def greet(name):\n    return 'staged ' + name\n", "new.py": "n\n"})
    git(repo, "add", "app.py", "new.py")
    # After staging: more edits, an unstaged file and an untracked one.
    write(repo, {"app.py": "# a comment\n# another\ndef greet(name):\n    return 'wt'\n"})
    write(repo, {"lib/util.py": "changed but not staged\n", "untracked.py": "u\n"})
    git(repo, "rm", "-q", "README.md")

    scope = resolve(repo, "staged")

    assert scope.paths == ("app.py", "new.py")
    assert scope.changes["app.py"].added_lines == frozenset({2})  # staged line numbers
    assert scope.files[0].size == len("def greet(name):\n    return 'staged ' + name\n")
    assert skipped(scope) == {"README.md": "deleted in this change"}
    assert scope.source == "index" and scope.base_commit == head(repo)
    assert scope.untracked == ()


def test_staged_scope_in_a_repository_without_commits(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a = 1\n", "b.py": "b = 1\n"}, commit=False)
    git(repo, "add", "a.py")

    scope = resolve(repo, "staged")

    assert scope.paths == ("a.py",)
    assert scope.base_commit is None
    assert scope.describe() == "staged changes (the first commit: everything is new)"


def test_nothing_staged_is_nothing_to_review(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"app.py": "changed\n"})

    with pytest.raises(NothingToReview, match=r"no staged changes.*--all"):
        resolve(repo, "staged")


def test_staged_scope_honours_a_temporary_index(
    git_repo: GitRepoFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `git commit path` runs hooks with GIT_INDEX_FILE pointing at a temporary index.
    repo = branch_repo(git_repo)
    write(repo, {"in_real_index.py": "r\n", "in_temp_index.py": "t\n"})
    git(repo, "add", "in_real_index.py")
    temp_index = tmp_path / "hook-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(temp_index)}
    import subprocess

    subprocess.run(["git", "read-tree", "HEAD"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "add", "in_temp_index.py"], cwd=repo, env=env, check=True)
    monkeypatch.setenv("GIT_INDEX_FILE", str(temp_index))

    assert resolve(repo, "staged").paths == ("in_temp_index.py",)


# --- --base/--head: a pull request ------------------------------------------------------------


def test_pull_request_scope_is_the_head_commit_against_the_merge_base(
    git_repo: GitRepoFactory,
) -> None:
    repo = branch_repo(git_repo)
    fork = head(repo)
    commit(repo, {"pr.py": "p = 1\n", "app.py": "def greet(name):\n    return name\n"})
    pr_head = head(repo)
    git(repo, "checkout", "-q", "main")
    commit(repo, {"main_only.py": "m\n"})
    write(repo, {"dirty.py": "not committed\n"})  # uncommitted work is not in a PR

    scope = resolve(repo, "base", base="main", head="feature")

    assert scope.paths == ("app.py", "pr.py")
    assert (scope.base_commit, scope.head_commit) == (fork, pr_head)
    assert scope.source == "commit"
    assert scope.describe() == f"{pr_head[:12]} against merge-base with main"


def test_pull_request_scope_reads_exclusions_from_the_base(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a\n", ".orch-reviewignore": "docs/\n"})
    git(repo, "checkout", "-q", "-b", "pr")
    # The PR tries to exempt its own code from review.
    commit(repo, {".orch-reviewignore": "docs/\nsneaky.py\n", "sneaky.py": "s\n", "docs/x.md": "d"})

    scope = resolve(repo, "base", base="main", head="HEAD")

    assert "sneaky.py" in scope.paths
    assert skipped(scope)["docs/x.md"] == "excluded by .orch-reviewignore"


def test_unknown_base_is_a_git_error(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)

    with pytest.raises(GitError, match="unknown ref `nope`"):
        resolve(repo, base="nope")
    with pytest.raises(GitError, match="unknown ref `--output=x`"):
        resolve(repo, "base", base="--output=x", head="HEAD")


def test_unrelated_histories_have_no_merge_base(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a\n"})
    git(repo, "checkout", "-q", "--orphan", "island")
    commit(repo, {"b.py": "b\n"})

    with pytest.raises(GitError, match=r"^main and HEAD have no common ancestor"):
        resolve(repo)


def test_shallow_clone_missing_the_merge_base_says_how_to_fetch(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    upstream = branch_repo(git_repo)
    commit(upstream, {"f1.py": "1\n"})
    commit(upstream, {"f2.py": "2\n"})
    git(upstream, "checkout", "-q", "main")
    commit(upstream, {"m1.py": "1\n"})
    clone = shallow_clone(upstream, tmp_path / "shallow")

    with pytest.raises(GitError) as caught:
        resolve(clone)

    message = str(caught.value)
    assert message.startswith("this shallow clone lacks the common ancestor of origin/main and")
    assert "git fetch --deepen" in message and "fetch-depth: 0" in message


def test_no_default_branch_asks_for_base(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a\n"})
    git(repo, "branch", "-m", "main", "trunk")

    with pytest.raises(GitError, match="pass --base REF"):
        resolve(repo)


# --- --all --------------------------------------------------------------------------------------


def test_all_scope_is_every_tracked_file_as_on_disk(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"untracked.py": "u\n", "debug.log": "x\n"})
    (repo / "README.md").unlink()

    scope = resolve(repo, "all")

    assert scope.paths == (".gitignore", "app.py", "lib/util.py")
    assert skipped(scope) == {"README.md": "deleted in the working tree"}
    assert scope.base_commit is None and scope.changes == {}


def test_all_scope_skips_binary_files_as_they_are_on_disk(git_repo: GitRepoFactory) -> None:
    repo = git_repo(
        {
            "image.png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
            "data.bin": b"plain text after all\n",
            "big.dat": b"\0" + b"x" * 2_000_000,
            "settings.conf": "a = 1\n",
        }
    )
    (repo / "settings.conf").write_bytes(b"\0binary now")  # the working copy is reviewed

    scope = resolve(repo, "all")

    assert scope.paths == ("data.bin",)
    assert skipped(scope) == {
        "big.dat": "binary",
        "image.png": "binary",
        "settings.conf": "binary",
    }


# --- pathspecs narrow every scope -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["change", "staged", "all"])
def test_pathspecs_narrow_every_scope(git_repo: GitRepoFactory, kind: str) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"lib/util.py": "changed\n", "lib/new.py": "n\n", "app.py": "changed\n"})
    git(repo, "add", "-A")

    assert resolve(repo, kind, pathspecs=("lib",)).paths == ("lib/new.py", "lib/util.py")


def test_pathspecs_narrow_a_pull_request(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {"lib/util.py": "changed\n", "app.py": "changed\n"})

    scope = resolve(repo, "base", base="main", head="HEAD", pathspecs=("lib",))

    assert scope.paths == ("lib/util.py",)
    assert scope.describe().endswith(" under lib")


def test_pathspec_with_a_leading_dash_is_a_path_not_an_option(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"-n": "n\n", "--cached": "c\n", "other.py": "o\n"})

    assert resolve(repo, pathspecs=("-n", "--cached")).paths == ("--cached", "-n")


# --- reviewable files and skip reasons --------------------------------------------------------


def test_each_skip_reason_is_shown(git_repo: GitRepoFactory) -> None:
    repo = git_repo(
        {"keep.py": "k\n", ".orch-reviewignore": "docs/\n", "old.py": "o\n", "link_target.py": "t"}
    )
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "old.py").unlink()
    write(
        repo,
        {
            "keep.py": "k2\n",
            "image.png": b"\x89PNG\r\n\x00\x00",
            "huge.py": "x" * (DEFAULT_MAX_FILE_SIZE + 1),
            "poetry.lock": "lock\n",
            "package-lock.json": "{}\n",
            "static/app.min.js": "x\n",
            "vendor/lib.py": "v\n",
            "api_pb2.py": "g\n",
            "docs/guide.md": "d\n",
            "tmp/scratch.py": "s\n",
        },
    )
    (repo / "escape").symlink_to("/etc/passwd")
    (repo / "up").symlink_to("../outside.py")
    (repo / "inside").symlink_to("link_target.py")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head(repo)},sub")
    (repo / "sub").mkdir()  # a submodule not checked out yet

    scope = resolve(repo, exclude=("tmp/",))

    assert scope.paths == ("inside", "keep.py")
    assert skipped(scope) == {
        "api_pb2.py": "lock file or generated/vendored code",
        "docs/guide.md": "excluded by .orch-reviewignore",
        "escape": "symlink pointing outside the repository (/etc/passwd)",
        "huge.py": f"larger than {DEFAULT_MAX_FILE_SIZE:,} bytes ({DEFAULT_MAX_FILE_SIZE + 1:,})",
        "image.png": "binary",
        "old.py": "deleted in this change",
        "package-lock.json": "lock file or generated/vendored code",
        "poetry.lock": "lock file or generated/vendored code",
        "static/app.min.js": "lock file or generated/vendored code",
        "sub": "submodule",
        "tmp/scratch.py": "excluded by the `exclude` setting",
        "up": "symlink pointing outside the repository (../outside.py)",
        "vendor/lib.py": "lock file or generated/vendored code",
    }
    assert scope.excluded == frozenset(skipped(scope))


@pytest.mark.parametrize("kind", ["staged", "base", "all"])
def test_symlinks_outside_and_submodules_are_skipped_in_every_scope(
    git_repo: GitRepoFactory, kind: str
) -> None:
    repo = branch_repo(git_repo)
    (repo / "escape").symlink_to("/etc/passwd")
    write(repo, {"ok.py": "o\n"})
    git(repo, "add", "-A")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head(repo)},sub")
    (repo / "sub").mkdir()
    if kind == "base":
        git(repo, "commit", "-q", "-m", "links")
    extra = {"base": "main", "head": "HEAD"} if kind == "base" else {}

    scope = resolve(repo, kind, **extra)

    assert skipped(scope)["escape"] == "symlink pointing outside the repository (/etc/passwd)"
    assert skipped(scope)["sub"] == "submodule"
    assert "ok.py" in scope.paths


@pytest.mark.parametrize("kind", ["staged", "base"])
def test_sizes_of_a_change_too_large_to_name_on_one_command_line(
    git_repo: GitRepoFactory, kind: str
) -> None:
    # 1,500 names of 100 characters: more than git is given as arguments in one command.
    repo = branch_repo(git_repo)
    names = [f"generated/{n:04d}_{'x' * 85}.py" for n in range(1500)]
    write(repo, {name: "v\n" * (n % 7 + 1) for n, name in enumerate(names)})
    git(repo, "add", "-A")
    if kind == "base":
        git(repo, "commit", "-q", "-m", "many")
    extra = {"base": "main", "head": "HEAD"} if kind == "base" else {}

    scope = resolve(repo, kind, **extra)

    assert {f.path: f.size for f in scope.files} == {
        name: 2 * (n % 7 + 1) for n, name in enumerate(names)
    }


def test_a_nested_repository_is_skipped_and_kept_out_of_the_snapshot_list(
    git_repo: GitRepoFactory,
) -> None:
    repo = branch_repo(git_repo)
    (repo / "nested").mkdir()
    git(repo / "nested", "init", "-q")
    write(repo, {"nested/inner.py": "i\n", "new.py": "n\n"})

    scope = resolve(repo)

    assert scope.paths == ("new.py",)
    assert skipped(scope) == {"nested": "submodule"}
    assert scope.untracked == ("new.py",)


def test_everything_skipped_says_so(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"yarn.lock": "x\n"})

    scope = resolve(repo)

    assert scope.files == ()
    assert skipped(scope) == {"yarn.lock": "lock file or generated/vendored code"}
    said = scope.nothing_reviewable()
    assert said is not None and "the 1 changed file in scope is skipped" in said
    assert "`generated`" in said and "--all" not in said and "plan" not in said


def test_renamed_file_is_reviewed_under_its_new_name(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    git(repo, "mv", "lib/util.py", "lib/helpers.py")
    git(repo, "commit", "-q", "-m", "rename")

    change = resolve(repo).changes["lib/helpers.py"]

    assert (change.status, change.old_path) == ("renamed", "lib/util.py")


def test_awkward_names_in_every_part_of_the_change(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {"committed file.py": "c\n", "ünï/côdé.py": "u\n"})
    write(repo, {"line\nbreak.py": "s\n"})
    git(repo, "add", "line\nbreak.py")
    write(repo, {"-untracked dash.py": "u\n"})

    scope = resolve(repo)

    assert scope.paths == (
        "-untracked dash.py",
        "committed file.py",
        "line\nbreak.py",
        "ünï/côdé.py",
    )
    assert all(f.size == 2 for f in scope.files)


def test_content_id_follows_the_content(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"app.py": "v1\n", "new.py": "n1\n"})

    def digest() -> str:
        return content_id(open_repo(repo), resolve(repo))

    first, same = digest(), digest()
    write(repo, {"new.py": "n2\n"})
    second = digest()
    write(repo, {"app.py": "v2\n"})
    third = digest()

    assert first == same
    assert len({first, second, third}) == 3


# --- not a usable repository ------------------------------------------------------------------


@pytest.mark.slow
def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="is not inside a git repository"):
        gitops.open_repo(tmp_path)


@pytest.mark.slow
def test_bare_repository(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "bare.git")

    with pytest.raises(GitError, match="bare repository"):
        gitops.open_repo(tmp_path / "bare.git")


def test_running_from_a_subdirectory_finds_the_top(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"lib/new.py": "n\n", "top.py": "t\n"})

    opened = gitops.open_repo(repo / "lib")
    scope = resolve_scope(opened, ScopeRequest(), env=dict(os.environ))

    assert scope.root == repo
    assert scope.paths == ("lib/new.py", "top.py")


def test_staged_review_during_an_unresolved_merge_conflict_is_a_git_error(
    git_repo: GitRepoFactory,
) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {"app.py": "feature\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, {"app.py": "main\n"})
    git(repo, "checkout", "-q", "feature")
    run_git(repo, "merge", "main")

    with pytest.raises(GitError, match=r"unresolved merge conflicts \(app.py\)"):
        resolve(repo, "staged")
    # The working tree, conflict markers and all, is still a change to review.
    assert "<<<<<<<" in (repo / "app.py").read_text()
    assert resolve(repo).paths == ("app.py",)


def test_an_unfetched_remote_branch_says_how_to_fetch_it(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)

    with pytest.raises(GitError, match=r"unknown ref `origin/main`.*`git fetch origin main`"):
        resolve(repo, "base", base="origin/main", head="HEAD")


def test_a_file_untracked_but_kept_on_disk_is_reviewed_not_deleted(
    git_repo: GitRepoFactory,
) -> None:
    repo = branch_repo(git_repo)
    git(repo, "rm", "-q", "--cached", "app.py")

    scope = resolve(repo)

    assert scope.paths == ("app.py",) and scope.skipped == ()
