"""The user turn of an ``explain_finding`` call: the finding it is about, then the question."""

from __future__ import annotations

from orch_review.findings.records import Finding


def compose(finding: Finding, question: str) -> str:
    """The finding's location, claim, evidence and verdict, then the caller's question."""
    parts = [
        "A coding agent asks about this finding of your review:",
        f"- file: {finding.path}, lines {finding.start_line}-{finding.end_line}",
        f"- severity: {finding.severity.value}, category: {finding.category}",
        f"- claim: {finding.claim}",
        f"- evidence: {finding.evidence}",
    ]
    verdict = finding.verdict
    if verdict is not None:
        outcome = "confirmed" if verdict.confirmed else "refuted"
        parts.append(
            f"- verdict: {outcome} by a verifier ({verdict.confidence} confidence): "
            f"{verdict.reason}"
        )
    parts += ["", "Question:", question, "", "Answer briefly, in Markdown."]
    return "\n".join(parts)
