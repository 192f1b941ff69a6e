"""``--format markdown``: the confirmed findings as compact Markdown, to paste into a coding
agent or a chat. One block per finding (location, claim, evidence, verdict, verified patch),
then the coverage line. Text from the repository or a model goes through the Markdown
sanitizer; code goes in fences it cannot close.
"""

from __future__ import annotations

from orch_review.findings.patches import PatchError, diff_of_lines, replacement_lines
from orch_review.findings.records import Finding
from orch_review.findings.report import Report
from orch_review.quoting import quote_path
from orch_review.reporters.proof_text import markdown_proof
from orch_review.reporters.sentences import guidance_line, incomplete_reasons
from orch_review.sanitize import controls, fence
from orch_review.sanitize import markdown as safe


def _code(text: str) -> str:
    """``text`` as an inline code span it cannot close."""
    ticks = fence(text, minimum=1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _location(finding: Finding) -> str:
    lines = (
        str(finding.start_line)
        if finding.start_line == finding.end_line
        else f"{finding.start_line}-{finding.end_line}"
    )
    return _code(f"{controls(quote_path(finding.path))}:{lines}")


def _patch(report: Report, finding: Finding) -> list[str]:
    replacement = finding.verified_patch
    if replacement is None:
        return []
    new = replacement_lines(replacement)
    snippet = report.snippets.get(finding.fingerprint) if finding.fingerprint else None
    if snippet is not None and snippet.start <= finding.start_line <= finding.end_line <= (
        snippet.end
    ):
        old = list(
            snippet.lines[finding.start_line - snippet.start : finding.end_line - snippet.start + 1]
        )
        try:
            diff = diff_of_lines(quote_path(finding.path), finding.start_line, old, new)
        except PatchError:
            diff = "\n".join(f"+{line}" for line in new) + "\n"
    else:
        diff = "\n".join(f"+{line}" for line in new) + "\n"
    diff = controls(diff)
    ticks = fence(diff)
    return [
        "",
        "Verified patch (`orch-review --fix` applies it):",
        "",
        f"{ticks}diff",
        diff.rstrip("\n"),
        ticks,
    ]


def _finding(number: int, report: Report, finding: Finding) -> list[str]:
    head = (
        f"### {number}. {finding.severity.value.upper()} · {safe(finding.category, 40)} · "
        f"{_location(finding)}"
    )
    block = [
        head,
        "",
        f"**Claim:** {safe(finding.claim)}",
        "",
        f"**Evidence:** {safe(finding.evidence)}",
    ]
    verdict = finding.verdict
    if verdict is not None:
        block += [
            "",
            f"**Verified:** confirmed ({verdict.confidence} confidence): {safe(verdict.reason)}",
        ]
    block += _patch(report, finding)
    return block + markdown_proof(finding)


def _coverage(report: Report) -> str:
    coverage = report.coverage
    if coverage is None:
        return "Coverage: not measured."
    covered = len(coverage.covered) + len(coverage.reused)
    line = f"Coverage: {covered} of {len(coverage.files)} {coverage.unit} covered"
    if not report.incomplete:
        return line + "."
    uncovered = ", ".join(_code(controls(quote_path(f.path))) for f in coverage.uncovered[:20])
    more = ", ..." if len(coverage.uncovered) > 20 else ""
    reasons = "; ".join(safe(r, 200) for r in incomplete_reasons(report))
    return f"{line}. **The review is incomplete** ({reasons})" + (
        f": not covered {uncovered}{more}." if uncovered else "."
    )


def render(report: Report) -> str:
    """The report as Markdown: the confirmed findings, most severe first, then coverage."""
    confirmed = report.confirmed
    noun = "finding" if len(confirmed) == 1 else "findings"
    lines = [f"## orch-review: {len(confirmed)} confirmed {noun}", ""]
    if not confirmed:
        lines += ["No confirmed findings.", ""]
    for number, finding in enumerate(confirmed, 1):
        lines += [*_finding(number, report, finding), ""]
    lines.append(_coverage(report))
    guidance = guidance_line(report)
    if guidance:
        lines += ["", safe(guidance, 2000)]
    return "\n".join(lines) + "\n"
