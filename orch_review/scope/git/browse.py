"""Reading the content under review through git, for agents that have no shell.

Every argument a model influences arrives here already checked (a path confined to the tree,
a revision that is one of the reviewed commits, a pattern in a bounded dialect): the argv is
built from those, options first, each path after ``--`` as a literal or glob pathspec with
its magic written here. Every command runs through the inert settings of
:func:`~.repo.open_repo`, with ``--no-textconv``/``--no-ext-diff`` where git has them, under
a deadline, and its output is read only up to a byte limit: the process group is killed
past either. What it reads is git's objects, never the file system, so a symbolic link in
the content is a name, not a way out.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orch_review.scope.git.repo import work_tree

if TYPE_CHECKING:
    import git

# git grep compiles a model's pattern: a counted repetition can make it take gigabytes
# (`((a{1,100}){1,100}){1,100}`), so its heap is capped (file mappings of packs are not).
GREP_HEAP_BYTES = 512 << 20
_STDERR_LIMIT = 4000
_READ = 65536
# Options every command that can print a diff gets: no program from any configuration runs.
_NO_PROGRAMS = ("--no-color", "--no-ext-diff", "--no-textconv")
# The repository's configuration may name files for git to read whose lines then show in
# its output or its errors (a mailmap, blame's list of revisions to ignore): none is read,
# and no notes are shown (other refs than the reviewed commits').
_GIT = ("git", "-c", "mailmap.file=", "-c", "mailmap.blob=")


@dataclass(frozen=True, slots=True)
class Output:
    """What a bounded git command printed, and how it ended."""

    data: bytes
    status: int | None  # None when it was stopped
    cut: bool = False  # stopped at the byte limit
    timed_out: bool = False
    stderr: str = ""


def run_bounded(
    repo: git.Repo,
    argv: Sequence[str],
    *,
    limit: int,
    timeout: float,
    heap: int | None = None,
) -> Output:
    """Run ``argv`` (a git command) in ``repo``'s environment; stop it past ``limit`` bytes of
    output or ``timeout`` seconds; ``heap`` caps its data segment (Linux)."""
    proc = subprocess.Popen(
        list(argv),
        cwd=work_tree(repo),
        env={**os.environ, **repo.git.environment()},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    if heap is not None and sys.platform.startswith("linux"):  # prlimit is Linux's
        import resource

        with contextlib.suppress(OSError, ValueError, AttributeError):
            resource.prlimit(proc.pid, resource.RLIMIT_DATA, (heap, heap))
    out, err = bytearray(), bytearray()
    cut = timed_out = False
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None and proc.stderr is not None
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in selector.select(remaining):
                chunk = os.read(key.fd, _READ)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                sink = streams[key.fd]
                sink += chunk
                if sink is err:
                    del err[_STDERR_LIMIT:]
            if len(out) > limit:
                cut = True
                del out[limit:]
                break
    if cut or timed_out:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    status = proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    return Output(
        bytes(out),
        None if cut or timed_out else status,
        cut=cut,
        timed_out=timed_out,
        stderr=err.decode("utf-8", "replace").strip(),
    )


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of the reviewed tree."""

    path: str
    mode: str
    oid: str
    size: int  # 0 for a submodule

    @property
    def is_link(self) -> bool:
        return self.mode == "120000"

    @property
    def is_submodule(self) -> bool:
        return self.mode == "160000"


def tree_listing(
    repo: git.Repo, commit: str, *, limit: int, timeout: float, path: str | None = None
) -> tuple[Entry, ...]:
    """Every entry of ``commit``'s tree, recursively (as far as ``limit`` bytes of listing);
    with ``path``, that file's or what is under that directory (ls-tree takes it literally)."""
    argv = ["git", "--literal-pathspecs", "ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--"]
    if path is not None:
        argv.append(path)
    done = run_bounded(repo, argv, limit=limit, timeout=timeout)
    entries = []
    records = done.data.split(b"\0")
    if done.cut:
        records = records[:-1]  # the last one may be cut
    for record in records:
        meta, tab, raw = record.partition(b"\t")
        fields = meta.split()
        if not tab or len(fields) != 4:
            continue
        mode, _, oid, size = (f.decode("ascii", "replace") for f in fields)
        path = raw.decode("utf-8", "surrogateescape")
        entries.append(Entry(path, mode, oid, int(size) if size.isdigit() else 0))
    return tuple(entries)


def blob_bytes(repo: git.Repo, oid: str, *, limit: int, timeout: float) -> Output:
    """The first ``limit`` bytes of the blob ``oid`` (an id from :func:`tree_listing`)."""
    return run_bounded(repo, ["git", "cat-file", "blob", oid], limit=limit, timeout=timeout)


def literal(path: str) -> str:
    """``path`` as a pathspec that matches exactly it (or what is under it)."""
    return ":(top,literal)" + path


def glob(pattern: str) -> str:
    """``pattern`` as a glob pathspec (``*`` stays in one directory, ``**`` crosses them)."""
    return ":(top,glob)" + pattern


def grep_argv(
    commit: str, pattern: str, pathspecs: Sequence[str], *, fixed: bool, ignore_case: bool
) -> list[str]:
    """``git grep`` of ``pattern`` in ``commit``'s tree: file, line number and text of each
    matching line, NUL-separated; binary files skipped."""
    argv = ["git", "grep", "--no-color", "--no-textconv", "-I", "-n", "-z", "--full-name"]
    argv.append("-F" if fixed else "-E")
    if ignore_case:
        argv.append("-i")
    return [*argv, "-e", pattern, commit, "--", *pathspecs]


def log_argv(
    revisions: Sequence[str], pathspecs: Sequence[str], count: int, patch: bool
) -> list[str]:
    """``git log`` of ``revisions`` (commit ids, ``^id`` to exclude) limited to ``pathspecs``."""
    shape = ["-p", *_NO_PROGRAMS] if patch else ["--stat", *_NO_PROGRAMS]
    fmt = "--format=commit %H%nAuthor: %an%nDate:   %ad%n%n%w(0,4,4)%B"
    return [
        *_GIT,
        "log",
        fmt,
        "--no-notes",
        f"--max-count={count}",
        *shape,
        *revisions,
        "--",
        *pathspecs,
    ]


def show_argv(commit: str, pathspecs: Sequence[str]) -> list[str]:
    """``git show`` of one commit: its message, stat and patch (limited to ``pathspecs``)."""
    return [
        *_GIT,
        "show",
        "--format=fuller",
        "--no-notes",
        "--stat",
        "-p",
        *_NO_PROGRAMS,
        commit,
        "--",
        *pathspecs,
    ]


def blame_argv(commit: str, path: str, start: int, end: int) -> list[str]:
    """``git blame`` of lines ``start``..``end`` of ``path`` at ``commit``."""
    return [
        *_GIT,
        "blame",
        "--no-textconv",
        "--no-ignore-revs-file",
        f"-L{start},{end}",
        commit,
        "--",
        path,
    ]


def diff_argv(old: str, new: str, pathspecs: Sequence[str], stat: bool) -> list[str]:
    """``git diff`` between two commits (limited to ``pathspecs``)."""
    shape = ["--stat"] if stat else ["-p"]
    return ["git", "diff", *shape, *_NO_PROGRAMS, old, new, "--", *pathspecs]


def commits_in(
    repo: git.Repo, head: str, base: str | None, *, count: int, timeout: float
) -> tuple[str, ...]:
    """The commits of ``base..head`` (the history of ``head`` without a base), newest first,
    at most ``count``."""
    revisions = [head, f"^{base}"] if base else [head]
    argv = ["git", "rev-list", f"--max-count={count}", *revisions, "--"]
    done = run_bounded(repo, argv, limit=(count + 1) * 72, timeout=timeout)
    return tuple(line for line in done.data.decode("ascii", "replace").split() if line)
