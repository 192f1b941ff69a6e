"""Report files (``--json``, ``--sarif``): checked before a review pays for anything, written
whole or not at all once it is done. Every command that writes report files uses these.

``-`` names standard output, as for every command-line tool: the report is printed there
instead of written to a file (at most one report can be, and then nothing else is printed
on stdout)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from orch_review.errors import OutputError, UsageError
from orch_review.findings.report import Report

ReportFile = tuple[str, Path]  # (format name, where to write it)
STDOUT = Path("-")


class ReportNotWritten(OutputError):
    """A finished review's report files could not be written; the report is carried along so
    that it can still be shown or posted, and the message says where else it is."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


def report_files(json_file: Path | None, sarif_file: Path | None) -> list[ReportFile]:
    """The report files asked for, as (format, path)."""
    wanted = (("json", json_file), ("sarif", sarif_file))
    files = [(name, Path(path)) for name, path in wanted if path is not None]
    if sum(1 for _, path in files if path == STDOUT) > 1:
        raise UsageError(
            "--json - and --sarif - would both print on stdout: write one of them to a file."
        )
    return files


def to_stdout(files: Iterable[ReportFile]) -> bool:
    """True when one of ``files`` is standard output (``-``)."""
    return any(path == STDOUT for _, path in files)


def check_writable(files: Iterable[ReportFile]) -> None:
    """Create each file's folder and make sure a file can be written there; raises
    :class:`OutputError` naming the file and what to do, before any API request is made."""
    seen: dict[Path, str] = {}
    for name, path in files:
        if path == STDOUT:
            continue
        resolved = Path(os.path.abspath(path))
        if resolved in seen:
            raise OutputError(
                f"the {seen[resolved]} and {name} reports would both be written to {path}: "
                "give each its own file."
            )
        seen[resolved] = name
        check_writable_path(path, f"the {name} report")


def check_writable_path(path: Path, what: str) -> None:
    """Make sure ``path`` can be written (its folder created): a trial file is created and
    removed in the folder, since permission bits do not tell (root may write anywhere the
    bits say, yet not in /proc; a read-only file system refuses everyone)."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create the folder for {what} {path}: {exc.strerror or exc}; "
            "choose another path."
        ) from None
    if path.is_dir():
        raise OutputError(f"{what} path {path} is a folder: name a file (- for stdout).")
    if not _replaceable(path):
        raise OutputError(
            f"{path} exists and is not a JSON file: orch-review will not overwrite it with "
            f"{what}; name another file (- for stdout)."
        )
    try:
        fd, trial = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as exc:
        raise OutputError(
            f"cannot write {what} to {path}: {exc.strerror or exc}; choose another path."
        ) from None
    os.close(fd)
    Path(trial).unlink(missing_ok=True)


def _replaceable(path: Path) -> bool:
    """True unless ``path`` holds something other than JSON (every report and plan is
    JSON): a source file typed where a report file was meant is never overwritten."""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return True
        with path.open("rb") as stream:
            json.load(stream)
    except OSError:
        return True  # unreadable: the trial file says whether it can be replaced
    except ValueError:
        return False
    return True


def write_reports(report: Report, files: Iterable[ReportFile]) -> list[tuple[Path, bytes]]:
    """Render ``report`` in each format and write it atomically (a crash leaves the old file
    or none, never half a report); ``-`` prints it on stdout. Returns the files written and
    their bytes."""
    from orch_review.reporters import json_report, sarif

    renderers = {"json": json_report.render, "sarif": sarif.render}
    written = []
    for name, path in files:
        text = renderers[name](report)
        if path == STDOUT:
            sys.stdout.write(text)
            sys.stdout.flush()
            continue
        written.append((path, write_text(path, text, f"the {name} report")))
    return written


def write_text(path: Path, text: str, what: str) -> bytes:
    """Write ``text`` to ``path`` atomically; the bytes written. OutputError on failure."""
    data = text.encode("utf-8")
    try:
        if path.exists() and not path.is_file():
            # A device or a pipe (/dev/stdout, /dev/full): written in place, never replaced.
            with path.open("wb") as device:
                device.write(data)
            return data
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            # mkstemp makes the file private; a report is as readable as any file.
            os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise OutputError(f"could not write {what} to {path}: {exc.strerror or exc}.") from None
    return data
