"""orch-review's reply to a question asked in one of its threads, whatever the host."""

from __future__ import annotations

from orch_review.hosts.markers import REPLY_MARKER
from orch_review.sanitize import markdown

MAX_BODY = 65_000  # GitHub refuses comment bodies over 65,536 characters
MAX_ANSWER = 60_000


def reply_body(answer: str, orchestrated: bool, notes: list[str], head_sha: str) -> str:
    """The reply: the marker, the model's answer made safe to post, how it was made."""
    how = "with orchestration mode on" if orchestrated else "with orchestration mode off"
    footer = f"orch-review answered {how}, about {head_sha[:12]}."
    if notes:
        footer += " " + " ".join(f"Note: {markdown(n, 500)}." for n in notes)
    text = markdown(answer, MAX_ANSWER) or "(the model gave no answer)"
    return f"{REPLY_MARKER}\n{text}\n\n<sub>{footer}</sub>\n"[:MAX_BODY]
