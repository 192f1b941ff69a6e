"""Git attributes cannot take a change's own code out of its review; the attributes that are
honoured come from the trusted side."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orch_review.scope import git as gitops
from orch_review.scope.attributes import is_lfs_pointer
from orch_review.scope.resolve import Scope, ScopeRequest, resolve_scope
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import branch_repo, commit, write

EVAL = "def greet(name):\n    return eval(name)\n"
POINTER = (
    b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"ab" * 32 + b"\nsize 12345\n"
)


def resolve(repo: Path, request: ScopeRequest) -> Scope:
    return resolve_scope(gitops.open_repo(repo), request, env=dict(os.environ))


def skipped(scope: Scope) -> dict[str, str]:
    return {s.path: s.reason for s in scope.skipped}


@pytest.mark.parametrize(
    "attributes",
    ["*.py -diff\n", "*.py binary\n", "*.py diff=bin\n"],
    ids=["-diff", "binary", "binary-driver"],
)
def test_a_pull_request_cannot_mark_its_own_code_binary(
    git_repo: GitRepoFactory, attributes: str
) -> None:
    repo = branch_repo(git_repo)
    git(repo, "config", "diff.bin.binary", "true")
    # The PR's head is checked out, as actions/checkout leaves it.
    commit(repo, {".gitattributes": attributes, "app.py": EVAL})

    scope = resolve(repo, ScopeRequest("base", base="main", head="HEAD"))

    assert "app.py" in scope.paths
    change = scope.changes["app.py"]
    assert not change.binary
    assert change.added_lines == {2}


def test_the_working_tree_scope_reviews_text_marked_binary(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {".gitattributes": "*.py -diff\n", "app.py": EVAL})

    scope = resolve(repo, ScopeRequest("change", base="main"))

    assert scope.changes["app.py"].added_lines == {2}


def test_the_staged_scope_reviews_text_marked_binary(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {".gitattributes": "*.py binary\n", "app.py": EVAL})
    git(repo, "add", "-A")

    scope = resolve(repo, ScopeRequest("staged"))

    assert scope.changes["app.py"].added_lines == {2}


def test_real_binary_content_is_still_skipped(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {".gitattributes": "*.py -diff\n", "blob.py": b"\0\1\2" * 10, "app.py": EVAL})

    scope = resolve(repo, ScopeRequest("base", base="main", head="HEAD"))

    assert skipped(scope)["blob.py"] == "binary"


def test_generated_and_vendored_attributes_of_the_base_are_honoured(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo(
        {".gitattributes": "gen/** linguist-generated\nlib/** linguist-vendored=true\n", "a.py": ""}
    )
    git(repo, "checkout", "-q", "-b", "pr")
    commit(repo, {"gen/api.py": "x = 1\n", "lib/dep.py": "y = 1\n", "a.py": "a = 1\n"})

    scope = resolve(repo, ScopeRequest("base", base="main", head="HEAD"))

    assert scope.paths == ("a.py",)
    assert skipped(scope) == {
        "gen/api.py": "generated code (linguist-generated attribute)",
        "lib/dep.py": "vendored code (linguist-vendored attribute)",
    }


def test_a_pull_request_cannot_mark_its_own_code_generated(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    attributes = "*.py linguist-generated\napp.py linguist-vendored\n"
    # Nested too: every .gitattributes of the head is ignored, not only the top one.
    commit(repo, {".gitattributes": attributes, "lib/.gitattributes": attributes})
    commit(repo, {"app.py": EVAL, "lib/util.py": "def add(a, b):\n    return eval(a)\n"})

    scope = resolve(repo, ScopeRequest("base", base="main", head="HEAD"))

    assert {"app.py", "lib/util.py"} <= set(scope.paths)


def test_nested_attributes_of_the_base_apply(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"gen/.gitattributes": "*.py linguist-generated\n", "a.py": ""})
    git(repo, "checkout", "-q", "-b", "pr")
    commit(repo, {"gen/api.py": "x = 1\n", "a.py": "a = 1\n"})

    scope = resolve(repo, ScopeRequest("base", base="main", head="HEAD"))

    assert scope.paths == ("a.py",)


def test_without_base_the_users_own_attributes_apply(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {".gitattributes": "gen.py linguist-generated\n", "gen.py": "g = 1\n"})

    only = resolve(repo, ScopeRequest("change", pathspecs=("gen.py",)))
    assert only.files == () and [s.path for s in only.skipped] == ["gen.py"]
    everything = resolve(repo, ScopeRequest("all"))
    assert "gen.py" not in everything.paths


def test_lfs_pointers_are_skipped_as_such(git_repo: GitRepoFactory) -> None:
    repo = git_repo({".gitattributes": "*.csv filter=lfs diff=lfs merge=lfs -text\n", "a.py": ""})
    git(repo, "checkout", "-q", "-b", "pr")
    commit(repo, {"data.csv": POINTER, "a.py": "a = 1\n"})

    scope = resolve(repo, ScopeRequest("base", base="main", head="HEAD"))

    assert scope.paths == ("a.py",)
    assert skipped(scope)["data.csv"].startswith("Git LFS pointer")


def test_only_a_real_pointer_passes_for_one() -> None:
    assert is_lfs_pointer(POINTER)
    assert not is_lfs_pointer(POINTER + b"import os; os.system('x')\n")
    assert not is_lfs_pointer(POINTER.replace(b"size 12345", b"size 1; import os"))
    assert not is_lfs_pointer(None)
