"""File contents at a revision."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.errors import GitError
from orch_review.scope.git.repo import work_tree

if TYPE_CHECKING:
    import git


def show_file(repo: git.Repo, rev: str, path: str) -> bytes | None:
    """The content of ``path`` at ``rev``, or None when it does not exist there."""
    import git

    try:
        out = repo.git.execute(
            ["git", "show", f"{rev}:{path}"], stdout_as_string=False, strip_newline_in_stdout=False
        )
    except git.GitCommandError:
        return None
    assert isinstance(out, bytes)
    return out


def blob_head(repo: git.Repo, rev: str, path: str, limit: int) -> bytes | None:
    """The first ``limit`` bytes of ``path`` at ``rev`` (":0" for the index), or None when it
    does not exist there; the rest of a large blob is never read."""
    command = ["git", "cat-file", "blob", f"{rev}:{path}"]
    with subprocess.Popen(
        command,
        cwd=work_tree(repo),
        env={**os.environ, **repo.git.environment()},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdout is not None
        data = process.stdout.read(limit)
        if len(data) < limit:
            return data if process.wait() == 0 else None
        process.kill()
    return data


def blob(repo: git.Repo, rev: str, path: str) -> bytes | None:
    """The content of the file ``path`` at ``rev`` (a symlink's target name), or None when it
    is no file there."""
    import git

    try:
        out = repo.git.execute(
            ["git", "cat-file", "blob", f"{rev}:{path}"],
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
    except git.GitCommandError:
        return None
    assert isinstance(out, bytes)
    return out


def write_blobs(repo: git.Repo, blobs: Sequence[tuple[str, Path]]) -> None:
    """Write each (blob id, file) pair's content to the file, with one ``git cat-file``."""
    if not blobs:
        return
    import subprocess

    env = {**os.environ, **repo.git.environment()}
    with subprocess.Popen(
        ["git", "cat-file", "--batch"],
        cwd=work_tree(repo),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(f"{oid}\n" for oid, _ in blobs).encode())
        proc.stdin.close()
        for oid, target in blobs:
            header = proc.stdout.readline().split()
            if len(header) != 3:
                raise GitError(f"object {oid} is missing from the repository")
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            target.write_bytes(data)
    if proc.returncode != 0:
        raise GitError(f"git cat-file failed (exit status {proc.returncode})")
