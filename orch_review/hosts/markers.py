"""The hidden markers orch-review starts its host comments with, so the next run finds its
own: a finding's inline comment, the summary, a reply. Anyone can write a marker, so each
adapter also checks who wrote the comment."""

from __future__ import annotations

import re

FINDING_MARKER = "<!-- orch-review:finding {} -->"
_FINDING_MARKER_RE = re.compile(r"<!-- orch-review:finding (\S+) -->")
SUMMARY_MARKER = "<!-- orch-review:summary -->"
REPLY_MARKER = "<!-- orch-review:reply -->"


def marked_fingerprint(body: str) -> str | None:
    """The fingerprint in the finding marker ``body`` starts with, if it starts with one."""
    match = _FINDING_MARKER_RE.match(body)
    return match.group(1) if match else None
