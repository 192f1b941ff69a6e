"""The summary comment on the pull request, and the job summary (``$GITHUB_STEP_SUMMARY``).

One markdown document for both: counts by severity, the findings that are not inline
comments (with why), what became of orch-review's review threads (resolved now, reopened,
left open and why), the findings the team dismissed with the learnings to commit, coverage,
cost and the agents reused from the journal, and the refuted findings folded away. The PR
comment starts with a hidden marker so the next run finds it and edits it in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from orch_review.config.learnings import LEARNINGS_FILE, Learning, to_toml
from orch_review.findings.records import Finding, Severity, Status, rank_key
from orch_review.findings.report import Report
from orch_review.hosts.comment_body import safe_text
from orch_review.hosts.dismissals import Dismissal
from orch_review.hosts.markers import SUMMARY_MARKER
from orch_review.hosts.posted import PostedComment, ThreadChange
from orch_review.quoting import quote_path
from orch_review.reporters.sentences import incomplete_reasons
from orch_review.sanitize import controls, fence, markdown_code, markdown_url
from orch_review.wording import counted, noun_for, usd

MAX_ROWS = 50  # rows per table
CELL_LIMIT = 300
COMMENT_LIMIT = 65_536  # GitHub refuses a longer comment body


@dataclass(frozen=True, slots=True)
class Placement:
    """Where each confirmed finding ended up, as the summary reports it."""

    inline: tuple[Finding, ...] = ()  # has an inline comment (new or from an earlier run)
    not_inline: tuple[tuple[Finding, str], ...] = ()  # (finding, why it is not inline)
    already_posted: int = 0  # inline findings commented in an earlier run, not posted again
    threads: tuple[ThreadChange, ...] = field(default=())  # orch-review's earlier threads
    dismissed: tuple[Dismissal, ...] = ()  # findings the team dismissed in the pull request
    to_learn: tuple[Learning, ...] = ()  # those dismissals, not yet in the learnings file
    notes: tuple[str, ...] = ()  # how reading the conversation fell short, if it did

    @classmethod
    def none_inline(cls, report: Report, reason: str) -> Placement:
        """Every confirmed finding listed in the summary, none inline."""
        return cls(not_inline=tuple((f, reason) for f in report.confirmed))


def cell(text: str, limit: int = CELL_LIMIT) -> str:
    """Text for one table cell or list item: one line, safe (pipes escaped too), short."""
    return safe_text(" ".join(text.split()), limit)


def code(text: str, limit: int = 120, *, in_table: bool = True) -> str:
    """``text`` (a file name: hostile) as inline code, in a table cell unless told: the
    backtick fence is longer than any run of backticks inside, so the name cannot close it.
    A name that is not UTF-8, or holds control characters, is shown as git quotes it."""
    return markdown_code(quote_path(text), limit, in_table=in_table)


def _counts(report: Report) -> str:
    confirmed = report.confirmed
    if not confirmed:
        return "**No confirmed findings.**"
    by = {s: sum(1 for f in confirmed if f.severity is s) for s in Severity}
    parts = " · ".join(f"{by[s]} {s.value}" for s in Severity)
    return f"**{counted(len(confirmed), 'confirmed finding')}**: {parts}"


def _incomplete(report: Report) -> list[str]:
    if not report.incomplete:
        return []
    reasons = incomplete_reasons(report)
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
        lines.append(f"- {code(file.path, 150, in_table=False)}: {cell(file.reason, 200)}")
    if len(coverage.uncovered) > MAX_ROWS:
        lines.append(f"- …and {len(coverage.uncovered) - MAX_ROWS} more (see the JSON report)")
    if coverage.skipped:
        lines += ["", f"Skipped before the review ({len(coverage.skipped)}):"]
    for entry in coverage.skipped[:MAX_ROWS]:
        lines.append(f"- {code(entry.path, 150, in_table=False)}: {cell(entry.reason, 200)}")
    if len(coverage.skipped) > MAX_ROWS:
        lines.append(f"- …and {len(coverage.skipped) - MAX_ROWS} more (see the JSON report)")
    return [*lines, ""]


WALKTHROUGH_HEADING = "### Walkthrough (unverified)"
WALKTHROUGH_NOTE = (
    "> Written by the model from what the review read, as a guide to the change: a "
    "description, not checked by a verifier like the findings above."
)


def _walkthrough(report: Report) -> list[str]:
    """The walkthrough, marked as unverified description: a table of the changed files
    (hostile text escaped cell by cell) and the diagram, canonical Mermaid written from its
    parsed structure (plain labels only, so nothing in it can close the fence)."""
    walkthrough = report.walkthrough
    if walkthrough is None:
        return []
    lines = [
        "",
        WALKTHROUGH_HEADING,
        "",
        WALKTHROUGH_NOTE,
        "",
        "| Files | Change |",
        "| --- | --- |",
    ]
    for entry in walkthrough.entries:
        files = "<br>".join(code(path, 150) for path in entry.paths)
        lines.append(f"| {files} | {cell(entry.summary, 200)} |")
    if walkthrough.diagram is not None:
        lines += ["", "```mermaid", walkthrough.diagram, "```"]
    return lines


def _coverage(report: Report) -> list[str]:
    concerns = report.concerns
    covered = sum(1 for c in concerns if c.covered)
    lines = [
        "",
        "### Coverage",
        "",
        *_files(report),
        f"{covered} of {len(concerns)} {noun_for(len(concerns), 'concern')} covered.",
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
        f"Estimated cost **{usd(total.cost_usd)}** ({counted(total.total_tokens, 'token')}, "
        f"{counted(total.requests, 'request')}); {counted(started, 'agent')} run"
    )
    if reused:
        line += f", **{reused} reused from the journal** of an earlier run (not paid again)"
    models = {report.model, report.agent_model}
    shown = report.model if len(models) == 1 else f"{report.model} / {report.agent_model}"
    return ["", line + f"; {shown}.", *_against_estimate(report)]


def _against_estimate(report: Report) -> list[str]:
    """What ``plan`` estimated before the review, against what it cost."""
    estimate = report.estimate
    if estimate is None:
        return []
    low, high, actual = estimate.low_usd, estimate.high_usd, report.usage.total.cost_usd
    if actual > high:
        where = f"above it ({actual / high:.1f}x the high end)" if high else "above it"
    elif actual < low:
        where = f"below it ({actual / low:.1f}x the low end)"
    else:
        where = "within it"
    basis = f" The estimate is {estimate.calibrated_on}." if estimate.calibrated_on else ""
    return [
        "",
        f"Estimated before the review: {usd(low)}-{usd(high)}; actual {usd(actual)}, {where}."
        + basis,
    ]


def _link(comment: PostedComment) -> str:
    where = f"{comment.path}:{comment.line}" if comment.line else comment.path
    shown = code(where, in_table=False)
    url = markdown_url(comment.url)
    return f"[{shown}]({url})" if url else shown


_THREAD_GROUPS = (
    ("resolved", "Resolved now: no longer found", True),
    ("dismissed", "Resolved now: dismissed by the team", True),
    ("reopened", "Reopened: found again", False),
    ("stuck", "No longer found, but the thread could not be resolved", True),
    ("not-reviewed", "Left open: its file was not covered by this run", False),
)


def _threads(changes: Sequence[ThreadChange]) -> list[str]:
    shown = [c for c in changes if c.state not in ("open", "earlier")]
    earlier = sum(1 for c in changes if c.state == "earlier")
    if not shown and not earlier:
        return []
    lines = ["", "### Review threads"]
    for state, title, struck in _THREAD_GROUPS:
        group = [c for c in shown if c.state == state]
        if not group:
            continue
        lines += ["", f"{title} ({len(group)}):"]
        for change in group[:MAX_ROWS]:
            link = f"~~{_link(change.comment)}~~" if struck else _link(change.comment)
            lines.append(f"- {link}")
        notes = sorted({c.note for c in group if c.note and state == "stuck"})
        lines += [f"\n> {cell(note, 600)}" for note in notes]
    if earlier:
        stay = "stays" if earlier == 1 else "stay"
        lines += ["", f"{counted(earlier, 'thread')} resolved in an earlier run {stay} resolved."]
    return lines


def _dismissed(dismissed: Sequence[Dismissal], to_learn: Sequence[Learning]) -> list[str]:
    if not dismissed:
        return []
    lines = [
        "",
        f"### Dismissed in this pull request ({len(dismissed)})",
        "",
        "Not raised again in this pull request, and not failing the check.",
        "",
        "| location | dismissed by | reason |",
        "| --- | --- | --- |",
    ]
    for item in dismissed[:MAX_ROWS]:
        lines.append(f"| {code(item.path)} | {code(item.who, 80)} | {cell(item.reason)} |")
    if to_learn:
        snippet = controls("".join("\n" + to_toml(learning) for learning in to_learn)[1:])
        fenced = fence(snippet)
        lines += [
            "",
            f"To keep these dismissals in every review, add them to `{LEARNINGS_FILE}` "
            "(or run `orch-review learn`):",
            "",
            f"{fenced}toml",
            snippet.rstrip("\n"),
            fenced,
        ]
    return lines


def _guidance(report: Report) -> list[str]:
    """The guidance files the review read (from the base for a pull request), by name."""
    files = report.guidance_files
    if not files:
        return []
    shown = [
        code(f.path, in_table=False) + (" (cut)" if f.truncated else "") for f in files[:MAX_ROWS]
    ]
    more = f" and {len(files) - MAX_ROWS} more" if len(files) > MAX_ROWS else ""
    return [f"\nReview guidance read: {', '.join(shown)}{more}."]


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
    lines += [f"\n> {cell(note, 1000)}" for note in (*notes, *placement.notes)]
    rows = list(placement.not_inline)
    if all_findings:
        rows += [(f, "inline comment") for f in placement.inline]
        rows.sort(key=lambda row: rank_key(row[0]))
    lines += _findings_table(rows, all_findings)
    lines += _threads(placement.threads)
    lines += _dismissed(placement.dismissed, placement.to_learn)
    lines += _walkthrough(report)
    lines += _coverage(report)
    lines += _guidance(report)
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
