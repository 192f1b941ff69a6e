"""Report files (``--json``, ``--sarif``): checked before a review pays for anything, written
whole or not at all once it is done. Every command that writes report files uses these."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from orch_review.errors import OutputError
from orch_review.findings.report import Report

ReportFile = tuple[str, Path]  # (format name, where to write it)


class ReportNotWritten(OutputError):
    """A finished review's report files could not be written; the report is carried along so
    that it can still be shown or posted, and the message says where else it is."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


def report_files(json_file: Path | None, sarif_file: Path | None) -> list[ReportFile]:
    """The report files asked for, as (format, path)."""
    wanted = (("json", json_file), ("sarif", sarif_file))
    return [(name, path) for name, path in wanted if path is not None]


def check_writable(files: Iterable[ReportFile]) -> None:
    """Create each file's folder and make sure the file can be written there; raises
    :class:`OutputError` naming the file and what to do, before any API request is made."""
    for name, path in files:
        folder = path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(
                f"cannot create the folder for the {name} report {path}: {exc.strerror or exc}; "
                "choose another path."
            ) from None
        if path.is_dir():
            raise OutputError(f"the {name} report path {path} is a folder: name a file.")
        target = path if path.exists() else folder
        if not os.access(target, os.W_OK):
            raise OutputError(
                f"cannot write the {name} report to {path}: permission denied; choose another path."
            )


def write_reports(report: Report, files: Iterable[ReportFile]) -> None:
    """Render ``report`` in each format and write it atomically (a crash leaves the old file
    or none, never half a report)."""
    from orch_review.reporters import json_report, sarif

    renderers = {"json": json_report.render, "sarif": sarif.render}
    for name, path in files:
        text = renderers[name](report)
        try:
            if path.exists() and not path.is_file():
                # A device or a pipe (/dev/stdout): written in place, never replaced.
                with path.open("w", encoding="utf-8") as out:
                    out.write(text)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(text)
                # mkstemp makes the file private; a report is as readable as any file.
                os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise OutputError(
                f"could not write the {name} report to {path}: {exc.strerror or exc}."
            ) from None
