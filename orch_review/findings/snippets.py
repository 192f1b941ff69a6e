"""The code lines a finding points at, with a little context, for the terminal report.

Each line is capped (:func:`cap_line`), so no reporter prints a megabyte-long minified line.

Collected once from the reviewed content (the snapshot) when the report is built, keyed by
fingerprint, so reporters never read files and the JSON report stays free of code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from orch_review.findings.records import Finding

# Reads a file of the reviewed content as lines (None when it is not there).
LineSource = Callable[[str], list[str] | None]

#: At most this many flagged lines are shown; a long range is cut after them.
MAX_FLAGGED_LINES = 12
#: Characters of one code line shown; a minified file's line can run to megabytes.
MAX_LINE_CHARS = 200
#: Characters of one line of a model's text (claim, evidence, fix): prose runs longer than
#: code, but evidence may quote that same megabyte-long line.
MAX_TEXT_LINE_CHARS = 1000


def cap_line(line: str, limit: int = MAX_LINE_CHARS, column: int | None = None) -> str:
    """``line`` cut to ``limit`` characters, marked with an ellipsis and the columns shown.

    The part shown starts at the beginning, or shortly before ``column`` (1-based) when
    the finding points past the limit.
    """
    if len(line) <= limit:
        return line
    start = 0
    if column is not None and column > limit // 2:
        start = max(0, min(column - 1 - limit // 4, len(line) - limit))
    shown = line[start : start + limit]
    before = "…" if start else ""
    return f"{before}{shown}… [columns {start + 1}-{start + len(shown)} of {len(line):,}]"


class Snippet(NamedTuple):
    """Lines of one file starting at line ``start`` (1-based)."""

    start: int
    lines: tuple[str, ...]

    @property
    def end(self) -> int:
        """The number of the last line held."""
        return self.start + len(self.lines) - 1


def cap_lines(text: str, limit: int = MAX_TEXT_LINE_CHARS) -> str:
    """``text`` with each of its lines capped by :func:`cap_line`."""
    if len(text) <= limit:
        return text
    return "\n".join(cap_line(line, limit) for line in text.split("\n"))


def snippet_for(
    finding: Finding,
    lines: list[str],
    *,
    context: int = 2,
    max_flagged: int = MAX_FLAGGED_LINES,
) -> Snippet | None:
    """The flagged lines of ``finding`` plus ``context`` lines each side, or None when the
    finding points past the end of the file."""
    if finding.start_line < 1 or finding.start_line > len(lines):
        return None
    last_flagged = min(finding.end_line, finding.start_line + max_flagged - 1, len(lines))
    first = max(1, finding.start_line - context)
    last = min(len(lines), max(last_flagged, finding.start_line) + context)
    return Snippet(
        first,
        tuple(
            cap_line(
                line.rstrip("\r\n"),
                column=finding.start_column if number == finding.start_line else None,
            )
            for number, line in enumerate(lines[first - 1 : last], first)
        ),
    )


def collect_snippets(
    findings: Iterable[Finding], read: LineSource, context: int = 2
) -> dict[str, Snippet]:
    """Fingerprint -> :class:`Snippet` for every fingerprinted finding whose file is readable."""
    out: dict[str, Snippet] = {}
    for finding in findings:
        if not finding.fingerprint or finding.fingerprint in out:
            continue
        lines = read(finding.path)
        if lines is None:
            continue
        snippet = snippet_for(finding, lines, context=context)
        if snippet is not None:
            out[finding.fingerprint] = snippet
    return out
