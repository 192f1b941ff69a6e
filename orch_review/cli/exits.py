"""The one place where errors become messages and exit codes."""

from __future__ import annotations

import functools
import os
import platform
import shutil
import signal
import sys
import textwrap
import threading
import time
import traceback
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import ParamSpec

import click

from orch_review import __version__, tempdirs
from orch_review.errors import NO_JOURNAL_NOTE, ExitCode, OrchReviewError
from orch_review.sanitize import defuse_commands

P = ParamSpec("P")


def crash_dir() -> Path:
    """Where crash logs go: $ORCH_REVIEW_CACHE_DIR, else $XDG_CACHE_HOME/orch-review."""
    explicit = os.environ.get("ORCH_REVIEW_CACHE_DIR")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache, "orch-review")


def write_crash_log(exc: BaseException) -> Path:
    """Write a report ready to paste into a bug report; returns its path."""
    directory = crash_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    versions = [f"orch-review {__version__}", f"python {sys.version.split()[0]}"]
    for dist in ("anthropic", "httpx2", "gitpython", "click", "rich", "pathspec", "tenacity"):
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{dist} not installed")
    # The command line and the error may hold a file name that is not UTF-8.
    path.write_text(
        "### orch-review crash\n\n"
        f"command: {' '.join(sys.argv)}\n"
        f"platform: {platform.platform()}\n"
        f"versions: {', '.join(versions)}\n\n```\n"
        + "".join(traceback.format_exception(exc))
        + "```\n",
        encoding="utf-8",
        errors="backslashreplace",
    )
    return path


def _printable(text: str) -> str:
    """``text`` with any character the terminal cannot take (a byte of a file name that is
    not UTF-8) as a backslash escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def message_width() -> int | None:
    """The width messages are wrapped to: $COLUMNS when set, else the terminal's; None when
    stderr is not a terminal (a log or a pipe: one line per message, so it stays greppable)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size().columns if sys.stderr.isatty() else None


def say(message: str) -> None:
    """Print ``message`` on stderr, wrapped between words to :func:`message_width` (a word
    longer than the width, such as a long path, keeps its own line whole)."""
    message = _printable(message)
    width = message_width()
    if width is not None:
        message = "\n".join(
            textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False)
            for line in message.splitlines()
        )
    # After the wrap, which can put any part of a message at the start of a line.
    click.echo(defuse_commands(message), err=True)


RESUME_HINT = "finished agents are in the journal, run the same command again to resume."
NO_RESUME_HINT = (
    "nothing was kept: the journal is off (--no-journal), so running the same command again "
    "pays for every agent again."
)


def _resume_hint(exc: BaseException) -> str:
    """What a rerun would reuse, as true for a review without a journal as with one."""
    return NO_RESUME_HINT if NO_JOURNAL_NOTE in getattr(exc, "__notes__", ()) else RESUME_HINT


class Terminated(BaseException):
    """SIGTERM (a CI job cancelled, a container stopped) or SIGHUP (the terminal closed)
    arrived: unwind like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, frame: object) -> None:
    raise Terminated(signum)


#: Signals handled like Ctrl-C, with what is said and the exit code (128 + the signal).
HANDLED: dict[int, tuple[str, ExitCode]] = {
    signal.SIGTERM: ("terminated", ExitCode.TERMINATED),
    signal.SIGHUP: ("hung up", ExitCode.HANGUP),
}


def handle_errors(fn: Callable[P, ExitCode | None]) -> Callable[P, None]:
    """The one place exit codes become the process's exit status: a command's returned
    :class:`ExitCode` (None is 0), :class:`OrchReviewError` to its exit code, Ctrl-C to 130,
    SIGTERM to 143 and SIGHUP to 129 (all after cleaning up: agents stopped, finished ones
    journaled, temporary directories removed), crashes to a log and 4."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        in_main = threading.current_thread() is threading.main_thread()
        previous = {s: signal.signal(s, _on_signal) for s in HANDLED} if in_main else {}
        from orch_review.cli.stdout import ReaderGone, guarded_stdout

        try:
            with guarded_stdout():
                code = fn(*args, **kwargs)
        except ReaderGone as exc:  # `| head`: the reader chose to stop; nothing to say
            sys.exit(int(exc.exit_code))
        except Terminated as exc:
            said, signalled = HANDLED.get(exc.signum, ("terminated", ExitCode.TERMINATED))
            say(f"orch-review: {said}; {_resume_hint(exc)}")
            sys.exit(int(signalled))
        except OrchReviewError as exc:
            say(f"orch-review: {exc}")
            sys.exit(int(exc.exit_code))
        except KeyboardInterrupt as exc:
            say(f"orch-review: interrupted; {_resume_hint(exc)}")
            sys.exit(int(ExitCode.INTERRUPTED))
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except Exception as exc:
            try:
                where = f"details are in {write_crash_log(exc)}"
            except Exception as log_error:  # the crash report must never crash
                where = f"no crash log could be written ({type(log_error).__name__}: {log_error})"
            say(
                f"orch-review: unexpected error: {type(exc).__name__}: {exc}\n"
                f"orch-review: this is a bug; {where}. Please attach it to an issue."
            )
            sys.exit(int(ExitCode.CRASH))
        finally:
            # Directories of agents abandoned mid-work (their threads never unwind).
            tempdirs.remove_all()
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if code is not None and code != ExitCode.CLEAN:
            sys.exit(int(code))

    return wrapper
