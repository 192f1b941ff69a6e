"""``git diff`` output: patches and the names of changed files."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from orch_review.scope.git.index import _index_copy
from orch_review.scope.git.repo import _lines0

if TYPE_CHECKING:
    import git


def diff_lines(repo: git.Repo, *args: str) -> list[str]:
    """``git diff`` patch output as lines (names C-quoted, content bytes kept)."""
    # Pin every option user configuration could change the shape of the output with
    # (diff.mnemonicPrefix, diff.noprefix, diff.submodule, textconv drivers, ...).
    command = [
        "git", "-c", "core.quotePath=true", "diff", "--no-color", "--no-ext-diff",
        "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--submodule=short",
        # A submodule's own configuration is not ours to neutralize: never run git in it.
        "--ignore-submodules=dirty",
        "-M", "--unified=3", *args,
    ]  # fmt: skip
    with _index_copy(repo, os.environ) as copy_env:
        out = repo.git.execute(
            command, env=copy_env, stdout_as_string=False, strip_newline_in_stdout=False
        )
    assert isinstance(out, bytes)
    return out.decode("utf-8", errors="surrogateescape").split("\n")


def changed_names(repo: git.Repo, *args: str) -> list[str]:
    """``git diff --name-only`` of ``args``: names only, so no file content is read (an
    unreadable file is listed, not an error)."""
    with _index_copy(repo, os.environ) as copy_env:
        out = repo.git.execute(["git", "diff", "--name-only", "-z", *args], env=copy_env)
    return _lines0(str(out))


def differences_from(repo: git.Repo, rev: str) -> list[str]:
    """Paths whose working copy differs from the tree of ``rev`` (deleted ones included), for
    every path in that tree or the index: compared through a copy of the index."""
    command = ["git", "diff", "--name-only", "-z", "--no-renames", rev, "--"]
    with _index_copy(repo, os.environ) as copy_env:
        out = repo.git.execute(command, env=copy_env)
    return _lines0(str(out))
