"""The markdown of one finding's comment on a host, starting with its hidden fingerprint
marker, and the sanitizer for model text posted there."""

from __future__ import annotations

import re

from orch_review.findings.records import Finding
from orch_review.hosts.markers import FINDING_MARKER
from orch_review.hosts.suggestion import suggestion_block
from orch_review.reporters.proof_text import markdown_proof
from orch_review.sanitize import markdown

# The heading comment_body writes: "**orch-review · high · security**: ..."
_CATEGORY_RE = re.compile(r"^\*\*orch-review · \w+ · ([a-z][a-z0-9-]{0,39})\*\*", re.MULTILINE)
_SLUG = re.compile(r"[a-z][a-z0-9-]{0,39}")
FIELD_LIMIT = 4000  # characters of one claim, evidence or fix in a comment


def posted_category(body: str) -> str | None:
    """The category in the heading :func:`comment_body` writes, if ``body`` has one."""
    match = _CATEGORY_RE.search(body)
    return match.group(1) if match else None


def comment_body(finding: Finding, lines: tuple[int, int] | None = None) -> str:
    """The markdown of one inline comment, starting with its hidden fingerprint marker;
    ``lines`` are the (first, last) lines the comment is placed on, for a suggestion."""
    parts = [
        FINDING_MARKER.format(finding.fingerprint),
        f"**orch-review · {finding.severity.value} · {_category(finding.category)}**: "
        + safe_text(finding.claim),
        "",
        f"**Evidence:** {safe_text(finding.evidence)}",
    ]
    if finding.suggestion:
        parts += ["", f"**Suggested fix:** {safe_text(finding.suggestion)}"]
    block = suggestion_block(finding, lines)
    if block is not None:
        parts += ["", block]
    if finding.verdict is not None:
        verdict = finding.verdict
        parts += [
            "",
            f"<sub>Verified by a second agent that tried to refute it "
            f"({verdict.confidence} confidence): {safe_text(' '.join(verdict.reason.split()), 600)}"
            "</sub>",
        ]
    parts += markdown_proof(finding)
    return "\n".join(parts) + "\n"


def _category(category: str) -> str:
    """A category as the heading shows it: a slug as it is (the record allows no other, and
    :func:`posted_category` reads it back), anything else made safe."""
    return category if _SLUG.fullmatch(category) else safe_text(category, 80)


def safe_text(text: str, limit: int = FIELD_LIMIT) -> str:
    """Model text made safe to post (see :func:`orch_review.sanitize.markdown`): shown as
    the characters it is, no Markdown construct of it (fences, quotes, HTML, links, images,
    markers of ours), nobody notified, nothing referenced, no control characters, cut at
    ``limit`` characters."""
    return markdown(text, limit)
