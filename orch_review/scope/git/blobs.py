"""File contents at a revision."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

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
    return _cat_blob(repo, f"{rev}:{path}")


def _cat_blob(repo: git.Repo, name: str) -> bytes | None:
    import git

    try:
        out = repo.git.execute(
            ["git", "cat-file", "blob", name],
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
        # The ids are written from another thread while the objects are read here: git
        # stops reading ids while nobody reads what it wrote, and past a pipe's buffer of
        # ids (64 KiB, about 1,600 of them) writing them all first would wait forever.
        feeder = threading.Thread(
            target=_feed,
            args=(proc.stdin, "".join(f"{oid}\n" for oid, _ in blobs).encode()),
            name="orch-review-blob-ids",
            daemon=True,
        )
        feeder.start()
        try:
            for oid, target in blobs:
                header = proc.stdout.readline().split()
                if len(header) != 3:
                    raise GitError(f"object {oid} is missing from the repository")
                data = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)  # the newline after each object
                target.write_bytes(data)
        except BaseException:
            proc.kill()  # the feeder's write fails and it ends
            raise
        finally:
            feeder.join()
    if proc.returncode != 0:
        raise GitError(f"git cat-file failed (exit status {proc.returncode})")


def _feed(stream: IO[bytes], data: bytes) -> None:
    """Write ``data`` to ``stream`` and close it; a reader that went away ends it quietly."""
    with contextlib.suppress(OSError), stream:
        stream.write(data)


# What a :class:`BlobReader` keeps of the blobs it read, in bytes: a review reads a changed
# file several times (packing, the task, the journal's key, the checks), each once from git.
KEEP_BYTES = 16 << 20


class BlobReader:
    """Blobs read through one long-lived ``git cat-file --batch``, started on the first read
    and stopped by :meth:`close`: a process per review, not one per read, whose cost grows
    with the repository. The blobs read last are kept, up to ``keep_bytes`` in all. Safe to
    share between threads."""

    def __init__(self, repo: git.Repo, keep_bytes: int = KEEP_BYTES) -> None:
        self._repo = repo
        self._keep_bytes = keep_bytes
        self._kept: OrderedDict[str, bytes | None] = OrderedDict()
        self._kept_bytes = 0
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._broken = False  # the process failed: read blob by blob from then on
        self._closed = False

    def read(self, rev: str, path: str) -> bytes | None:
        """The content of the file ``path`` at ``rev`` (a symlink's target name), or None
        when it is no file there (as :func:`blob`)."""
        name = f"{rev}:{path}"
        if "\n" in name or name.endswith("\r"):  # not expressible on a batch's input line
            return blob(self._repo, rev, path)
        return self._read(name, lambda: blob(self._repo, rev, path))

    def read_object(self, oid: str) -> bytes | None:
        """The content of the blob ``oid``, or None when it is no blob. Faster than
        :meth:`read` in a large tree: git finds a path by scanning each tree on the way."""
        return self._read(oid, lambda: _cat_blob(self._repo, oid))

    def _read(self, name: str, alone: Callable[[], bytes | None]) -> bytes | None:
        with self._lock:
            if name in self._kept:
                self._kept.move_to_end(name)
                return self._kept[name]
            data = self._batch_read(name)
            if isinstance(data, _Failed):
                data = alone()
            self._keep(name, data)
            return data

    def _batch_read(self, name: str) -> bytes | _Failed | None:
        process = self._running()
        if process is None:
            return _FAILED
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            process.stdin.flush()
            header = process.stdout.readline().split()
            if len(header) != 3:  # "<name> missing" or "ambiguous", or the process ended
                if header:
                    return None
                raise OSError("git cat-file --batch ended")
            data = _read_exactly(process.stdout, int(header[2]) + 1)[:-1]
        except (OSError, ValueError):
            self._broken = True
            self._stop()
            return _FAILED
        return data if header[1] == b"blob" else None

    def _running(self) -> subprocess.Popen[bytes] | None:
        if self._broken or self._closed:
            return None
        if self._process is None:
            try:
                self._process = subprocess.Popen(
                    ["git", "cat-file", "--batch"],
                    cwd=work_tree(self._repo),
                    env={**os.environ, **self._repo.git.environment()},
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError:
                self._broken = True
                return None
        return self._process

    def _keep(self, name: str, data: bytes | None) -> None:
        size = len(data or b"")
        if size > self._keep_bytes:
            return
        self._kept[name] = data
        self._kept_bytes += size
        while self._kept_bytes > self._keep_bytes:
            _, dropped = self._kept.popitem(last=False)
            self._kept_bytes -= len(dropped or b"")

    def close(self) -> None:
        """Stop the process; later reads go blob by blob."""
        with self._lock:
            self._closed = True
            self._stop()

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class _Failed:
    """The batch could not answer (read the blob on its own)."""


_FAILED = _Failed()


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = stream.read(size)
        if not chunk:
            raise OSError("git cat-file --batch ended in the middle of an object")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
