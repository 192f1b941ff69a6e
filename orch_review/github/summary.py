"""The summary comment on the pull request, and the job summary (``$GITHUB_STEP_SUMMARY``).

One markdown document for both: counts by severity, the findings that are not inline
comments (with why), coverage, cost and the agents reused from the journal, earlier comments
whose finding is gone, and the refuted findings folded away. The PR comment starts with a
hidden marker so the next run finds it and edits it in place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from orch_review.findings.records import Finding, Severity, Status, rank_key
from orch_review.findings.report import Report
from orch_review.github.comments import PostedComment, safe_text

SUMMARY_MARKER = "<!-- orch-review:summary -->"
MAX_ROWS = 50  # rows per table
CELL_LIMIT = 300
COMMENT_LIMIT = 65_536  # GitHub refuses a longer comment body


@dataclass(frozen=True, slots=True)
class Placement:
    """Where each confirmed finding ended up, as the summary reports it."""

    inline: tuple[Finding, ...] = ()  # has an inline comment (new or from an earlier run)
    not_inline: tuple[tuple[Finding, str], ...] = ()  # (finding, why it is not inline)
    resolved: tuple[PostedComment, ...] = field(default=())
    already_posted: int = 0  # inline findings commented in an earlier run, not posted again

    @classmethod
    def none_inline(cls, report: Report, reason: str) -> Placement:
        """Every confirmed finding listed in the summary, none inline."""
        return cls(not_inline=tuple((f, reason) for f in report.confirmed))


def cell(text: str, limit: int = CELL_LIMIT) -> str:
    """Text for one table cell: one line, pipes escaped, safe, short."""
    return safe_text(" ".join(text.split()), limit).replace("|", "\\|")


def code(text: str, limit: int = 120) -> str:
    """``text`` (a file name: hostile) as inline code in a table cell: the backtick fence is
    longer than any run of backticks inside, so the name cannot close it."""
    inner = cell(text, limit)
    fence = "`" * (max((len(run) for run in re.findall("`+", inner)), default=0) + 1)
    pad = " " if inner.startswith("`") or inner.endswith("`") else ""
    return f"{fence}{pad}{inner}{pad}{fence}"


def _counts(report: Report) -> str:
    confirmed = report.confirmed
    if not confirmed:
        return "**No confirmed findings.**"
    by = {s: sum(1 for f in confirmed if f.severity is s) for s in Severity}
    parts = " · ".join(f"{by[s]} {s.value}" for s in Severity)
    noun = "finding" if len(confirmed) == 1 else "findings"
    return f"**{len(confirmed)} confirmed {noun}**: {parts}"


def _incomplete(report: Report) -> list[str]:
    if not report.incomplete:
        return []
    reasons = report.incomplete_reasons()
    return [
        "",
        f"> [!WARNING]\n> The review is **incomplete** ({cell('; '.join(reasons))}): "
        "findings may be missing.",
    ]


def _findings_table(rows: Sequence[tuple[Finding, str]], all_findings: bool) -> list[str]:
    if not rows:
        return []
    title, column = (
        ("Findings", "where")
        if all_findings
        else ("Findings not commented inline", "why not inline")
    )
    lines = [
        "",
        f"### {title} ({len(rows)})",
        "",
        f"| severity | location | finding | {column} |",
        "| --- | --- | --- | --- |",
    ]
    for finding, reason in rows[:MAX_ROWS]:
        lines.append(
            f"| {finding.severity.value} | {code(finding.location)} | "
            f"{cell(finding.claim)} | {cell(reason, 80)} |"
        )
    if len(rows) > MAX_ROWS:
        lines.append(f"\n…and {len(rows) - MAX_ROWS} more: see the job summary or the JSON report.")
    return lines


def _files(report: Report) -> list[str]:
    coverage = report.coverage
    if coverage is None:
        return []
    lines = [f"**{coverage.headline()}.**"]
    if coverage.uncovered:
        lines += ["", "Not covered:"]
    for file in coverage.uncovered[:MAX_ROWS]:
        lines.append(f"- `{cell(file.path, 150)}`: {cell(file.reason, 200)}")
    if len(coverage.uncovered) > MAX_ROWS:
        lines.append(f"- …and {len(coverage.uncovered) - MAX_ROWS} more (see the JSON report)")
    if coverage.skipped:
        lines += ["", f"Skipped before the review ({len(coverage.skipped)}):"]
    for entry in coverage.skipped[:MAX_ROWS]:
        lines.append(f"- `{cell(entry.path, 150)}`: {cell(entry.reason, 200)}")
    if len(coverage.skipped) > MAX_ROWS:
        lines.append(f"- …and {len(coverage.skipped) - MAX_ROWS} more (see the JSON report)")
    return [*lines, ""]


def _coverage(report: Report) -> list[str]:
    concerns = report.concerns
    covered = sum(1 for c in concerns if c.covered)
    lines = [
        "",
        "### Coverage",
        "",
        *_files(report),
        f"{covered} of {len(concerns)} concerns covered.",
    ]
    if report.uncovered:
        lines.append("")
    for outcome in report.uncovered[:MAX_ROWS]:
        why = f": {cell(outcome.error, 200)}" if outcome.error else ""
        lines.append(f"- {outcome.status}: {cell(outcome.concern, 150)}{why}")
    if report.warnings:
        lines += ["", "Warnings:"]
    lines += [f"- {cell(w, 300)}" for w in report.warnings[:MAX_ROWS]]
    return lines


def _cost(report: Report) -> list[str]:
    usage = report.usage
    total = usage.total
    started = sum(usage.agents_started.values())
    reused = sum(usage.agents_from_journal.values())
    line = (
        f"Estimated cost **${total.cost_usd:.2f}** ({total.total_tokens:,} tokens, "
        f"{total.requests} requests); {started} agents run"
    )
    if reused:
        line += f", **{reused} reused from the journal** of an earlier run (not paid again)"
    models = {report.model, report.agent_model}
    shown = report.model if len(models) == 1 else f"{report.model} / {report.agent_model}"
    return ["", line + f"; {shown}."]


def _resolved(resolved: Sequence[PostedComment]) -> list[str]:
    if not resolved:
        return []
    lines = ["", f"### Resolved since an earlier run ({len(resolved)})", ""]
    for comment in resolved[:MAX_ROWS]:
        where = f"{comment.path}:{comment.line}" if comment.line else comment.path
        link = f"[{code(where)}]({comment.url})" if comment.url else code(where)
        lines.append(f"- ~~{link}~~ no longer reported")
    return lines


def _refuted(report: Report) -> list[str]:
    refuted = report.with_status(Status.REFUTED)
    if not refuted:
        return []
    lines = [
        "",
        f"<details><summary>Refuted findings ({len(refuted)}): a second agent disproved "
        "them</summary>",
        "",
        "| location | claim | why it was refuted |",
        "| --- | --- | --- |",
    ]
    for finding in refuted[:MAX_ROWS]:
        reason = finding.verdict.reason if finding.verdict else ""
        lines.append(f"| {code(finding.location)} | {cell(finding.claim)} | {cell(reason)} |")
    return [*lines, "", "</details>"]


def render(
    report: Report,
    placement: Placement,
    *,
    head_sha: str = "",
    marker: bool = True,
    notes: Sequence[str] = (),
    all_findings: bool = False,
) -> str:
    """The summary markdown; with ``marker`` it starts with the hidden summary marker (the PR
    comment); with ``all_findings`` the table lists inline ones too (the job summary)."""
    commit = f" for `{head_sha[:12]}`" if head_sha else ""
    lines = [SUMMARY_MARKER] if marker else []
    lines += [f"## orch-review{commit}", "", _counts(report)]
    if placement.inline:
        earlier = placement.already_posted
        lines.append(
            f"\nCommented inline on the diff: {len(placement.inline)}"
            + (f" ({earlier} of them in an earlier run)." if earlier else ".")
        )
    lines += _incomplete(report)
    lines += [f"\n> {cell(note, 1000)}" for note in notes]
    rows = list(placement.not_inline)
    if all_findings:
        rows += [(f, "inline comment") for f in placement.inline]
        rows.sort(key=lambda row: rank_key(row[0]))
    lines += _findings_table(rows, all_findings)
    lines += _resolved(placement.resolved)
    lines += _coverage(report)
    lines += _cost(report)
    lines += _refuted(report)
    return "\n".join(lines) + "\n"


def fit_comment(markdown: str, limit: int = COMMENT_LIMIT) -> str:
    """``markdown`` cut at a line boundary to fit in one comment, saying where the rest is."""
    if len(markdown) <= limit:
        return markdown
    note = "\n\n…cut to fit in a comment: the job summary and the JSON report have it all.\n"
    head = markdown[: limit - len(note)]
    return head[: head.rfind("\n")] + note
