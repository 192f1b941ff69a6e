"""Sentences about a report that every format shows a person: why the review is
incomplete, which files could not be read, which guidance was read. The report itself
(``findings/report.py``) holds records and decisions; the words are built here."""

from __future__ import annotations

from orch_review.findings.report import Report
from orch_review.quoting import quote_path
from orch_review.wording import counted, unit_noun


def unreadable_note(report: Report) -> str | None:
    """Why unreadable files make the review incomplete, naming a few; None when none."""
    if not report.unreadable:
        return None
    shown = ", ".join(quote_path(p) for p in report.unreadable[:3])
    more = ", ..." if len(report.unreadable) > 3 else ""
    return f"{counted(len(report.unreadable), 'unreadable file')} not reviewed: {shown}{more}"


def incomplete_reasons(report: Report) -> list[str]:
    """Why the review is incomplete, in words (empty when it is complete)."""
    if not report.incomplete:
        return []
    reasons = []
    if report.coverage is not None:
        missing = len(report.coverage.uncovered)
        total = len(report.coverage.files)
        if missing:
            reasons.append(
                f"{missing} of {total} {unit_noun(total, report.coverage.unit)} not covered"
            )
        reasons += report.coverage.notes
    else:
        if report.uncovered:
            reasons.append(f"{counted(len(report.uncovered), 'concern')} not covered")
        if not report.concerns:
            reasons.append("no review workflow ran")
    if report.usage.cap_reached:
        reasons.append(report.usage.cap_reached)
    note = unreadable_note(report)
    if note:
        reasons.append(note)
    return reasons


def guidance_line(report: Report) -> str | None:
    """The guidance files read, in one sentence (None when none was read)."""
    files = report.guidance_files
    if not files:
        return None
    shown = [quote_path(f.path) + (" (cut)" if f.truncated else "") for f in files[:12]]
    more = f" and {len(files) - 12} more" if len(files) > 12 else ""
    return f"Review guidance read: {', '.join(shown)}{more}."
