"""A finding's verified patch as a ```suggestion block, which GitHub and GitLab offer to
commit, only when the comment covers exactly the finding's lines: a comment clamped to a
hunk would have the suggestion replace other lines than the patch was checked against."""

from __future__ import annotations

from orch_review.findings.records import Finding
from orch_review.sanitize import controls, fence


def suggestion_block(finding: Finding, lines: tuple[int, int] | None) -> str | None:
    """A ```suggestion block of the finding's verified patch when the comment covers
    ``lines`` (first, last) and they are exactly the finding's; else None.

    The replacement is code and is posted as it is (a mention in a code block notifies
    nobody, a marker there is shown, not hidden): so it must hold no control character,
    and the fence is longer than any run of backticks in it, so no line can close it.
    """
    patch = finding.verified_patch
    if patch is None or lines != (finding.start_line, finding.end_line):
        return None
    if controls(patch) != patch:
        return None
    fenced = fence(patch)
    return f"{fenced}suggestion\n{patch}\n{fenced}"
