"""The last report of each working tree, kept in the journal: a review that is paid for is
never lost, even when its report files cannot be written (a full disk).

``orch-review journal show-report`` shows it again. When a report file cannot be written at
the end of a review, the report is also printed and written whole to the user's cache
directory, and the error says where.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from orch_review.engine.memory.journal import JournalLike, journal_key
from orch_review.environment import user_cache_home
from orch_review.errors import OrchReviewError, OutputError
from orch_review.findings.merge import report_from_json
from orch_review.findings.report import Report
from orch_review.reporters import json_report

REPORT_KIND = "report"


class NoKeptReport(OrchReviewError):
    """The journal holds no report of this working tree."""


def report_key(work_tree: Path) -> str:
    """The journal key of the last report of ``work_tree``."""
    return "report:" + journal_key("work tree", str(work_tree.resolve()))


def keep_report(journal: JournalLike, report: Report, work_tree: Path) -> bool:
    """Store ``report`` as the last one of ``work_tree``; False when it could not be."""
    return journal.put(report_key(work_tree), REPORT_KIND, json_report.to_data(report))


def load_report(journal: JournalLike, work_tree: Path) -> Report:
    """The last report kept for ``work_tree``; :class:`NoKeptReport` when there is none."""
    stored = journal.get(report_key(work_tree))
    if stored is None:
        raise NoKeptReport(
            "the journal holds no report of a review in this working tree (or it was not "
            "written with this credential): run `orch-review` first, with the journal enabled."
        )
    try:
        return report_from_json(stored)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise NoKeptReport(
            f"the kept report cannot be read ({exc}): run the review again."
        ) from None


def rescue_report(report: Report, env: Mapping[str, str]) -> Path | None:
    """Write ``report`` as JSON to a new private file under the user's cache directory
    (``$XDG_CACHE_HOME`` or ``~/.cache``, ``orch-review/reports``); None when that fails too."""
    cache = user_cache_home(env)
    if cache is None:
        return None
    folder = Path(cache) / "orch-review" / "reports"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = folder / f"report-{stamp}-{os.getpid()}.json"
    text = json_report.render(report)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as out:
            out.write(text)
    except OSError:
        path.unlink(missing_ok=True)
        return None
    return path


def not_written(error: OutputError, rescued: Path | None, kept: bool) -> str:
    """The message of a :class:`~orch_review.reporters.files.ReportNotWritten`: what
    failed, and where the report is."""
    where = [f"saved to {rescued}"] if rescued is not None else []
    if kept:
        where.append("`orch-review journal show-report` shows it again")
    return (
        f"{str(error).rstrip('.')}. The review itself is complete and its report is not lost: "
        + ", ".join(where or ["it is shown above"])
        + "; free the space or choose another path."
    )
