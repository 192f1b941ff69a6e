"""The code lines a finding points at, with a little context, for the terminal report.

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


class Snippet(NamedTuple):
    """Lines of one file starting at line ``start`` (1-based)."""

    start: int
    lines: tuple[str, ...]

    @property
    def end(self) -> int:
        """The number of the last line held."""
        return self.start + len(self.lines) - 1


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
    return Snippet(first, tuple(line.rstrip("\r\n") for line in lines[first - 1 : last]))


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
