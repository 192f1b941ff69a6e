"""Standard output that fails the way a report file does: a full disk (``> /dev/full``) or a
closed descriptor (``>&-``) is an :class:`StdoutUnwritable` (exit 2, with a message), and a
reader that stopped reading (``| head``) is :class:`ReaderGone`, which ends the output
quietly: what was read is what the reader asked for.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from orch_review.errors import ExitCode, OrchReviewError, OutputError


class StdoutUnwritable(OutputError):
    """Standard output cannot be written (a full disk, a closed descriptor)."""


class ReaderGone(OrchReviewError):
    """The program reading standard output closed it (``| head``): nothing more is printed.
    A review ends with the exit status of its findings; other commands with 0."""

    exit_code = ExitCode.CLEAN


def _silence() -> None:
    """Point descriptor 1 at /dev/null: what is still buffered is dropped at exit, not
    reported as an error by the interpreter."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)


class _Guarded:
    """``stream``, whose write and flush errors become :class:`StdoutUnwritable` or
    :class:`ReaderGone`; with no stream (descriptor 1 closed) every write fails."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self._error: OrchReviewError | None = None

    def _fail(self, exc: OSError | None) -> OrchReviewError:
        if self._error is not None:
            return self._error
        if isinstance(exc, BrokenPipeError):
            _silence()
            self._error = ReaderGone("the reader of standard output closed it")
            return self._error
        said = "it is closed" if exc is None else (exc.strerror or str(exc))
        if exc is not None:
            _silence()
        self._error = StdoutUnwritable(
            f"could not print on standard output: {said}; redirect it to a file with room "
            "or to /dev/null."
        )
        return self._error

    def write(self, text: str) -> int:
        if self._stream is None or self._error is not None:
            raise self._fail(None)
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._fail(exc) from None

    def flush(self) -> None:
        if self._stream is None or self._error is not None:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._fail(exc) from None

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:
        return getattr(self._stream, "errors", "strict")

    def __getattr__(self, name: str) -> Any:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """Within the block, ``sys.stdout`` fails as :class:`StdoutUnwritable` or
    :class:`ReaderGone`; what the block printed is flushed before it ends."""
    original = sys.stdout
    guard = _Guarded(original)
    sys.stdout = guard
    try:
        yield
        guard.flush()
    finally:
        sys.stdout = original


def check_stdout_open(files: Iterable[tuple[str, Path]], output_format: str, quiet: bool) -> None:
    """:class:`StdoutUnwritable` before any request when descriptor 1 is closed (``>&-``) and
    the report would be printed there."""
    machine = output_format != "text" or any(str(path) == "-" for _, path in files)
    if quiet and not machine:
        return
    try:
        os.fstat(1)
    except OSError:
        raise StdoutUnwritable(
            "standard output is closed (>&-), so the report could not be printed: redirect it "
            "to a file or to /dev/null (and write the report with --json FILE)."
        ) from None
