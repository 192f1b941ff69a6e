"""The terminal report people read: findings by severity, then coverage and cost."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from orch_review.findings import Finding, Severity
from orch_review.report import Report

SEVERITY_STYLE = {
    Severity.HIGH: "bold red",
    Severity.MEDIUM: "bold yellow",
    Severity.LOW: "bold cyan",
    Severity.INFO: "bold blue",
}


INDENT = "   "


def _finding(number: int, finding: Finding) -> Text:
    text = Text.assemble(
        (f"{number}. ", "bold"),
        (f"{finding.severity.value.upper():<6}", SEVERITY_STYLE[finding.severity]),
        " ",
        (finding.location, "bold underline"),
        (f"  [{finding.category}]", "dim"),
    )
    rows = [("", finding.claim), ("evidence: ", finding.evidence)]
    if finding.suggestion:
        rows.append(("fix: ", finding.suggestion))
    if finding.verdict is not None:
        rows.append(("verified: ", finding.verdict.reason))
    for label, value in rows:
        text.append("\n" + INDENT)
        text.append(label, "dim")
        text.append(value.strip().replace("\n", "\n" + INDENT + "  "))
    return text


def _counts(report: Report) -> Text:
    text = Text()
    confirmed = report.confirmed
    for severity in Severity:
        count = sum(1 for f in confirmed if f.severity is severity)
        style = SEVERITY_STYLE[severity] if count else "dim"
        text.append(f"{count} {severity.value}", style)
        text.append("  ")
    return text


def _usage_table(report: Report, boxed: bool) -> Table:
    table = Table(box=box.SIMPLE if boxed else None, show_edge=False, pad_edge=False)
    for column in ("role", "agents", "requests", "input", "cache read", "output", "cost"):
        table.add_column(column, justify="left" if column == "role" else "right")
    usage = report.usage
    for role, used in usage.by_role.items():
        reused = usage.agents_from_journal.get(role, 0)
        agents = str(usage.agents_started.get(role, 0)) + (
            f" (+{reused} journal)" if reused else ""
        )
        table.add_row(
            role,
            agents if role != "main" else "1",
            str(used.requests),
            f"{used.input_tokens + used.cache_write_tokens:,}",
            f"{used.cache_read_tokens:,}",
            f"{used.output_tokens:,}",
            f"${used.cost_usd:.2f}",
        )
    total = usage.total
    table.add_row(
        "total",
        "",
        str(total.requests),
        f"{total.input_tokens + total.cache_write_tokens:,}",
        f"{total.cache_read_tokens:,}",
        f"{total.output_tokens:,}",
        f"${total.cost_usd:.2f}",
        style="bold",
    )
    return table


def print_report(report: Report, console: Console, *, quiet: bool = False) -> None:
    """Write the report to ``console`` (plain text when it is not a terminal)."""
    boxed = console.is_terminal
    if not boxed:
        console.soft_wrap = True  # plain output: one line per line, no padding
    console.print(Text.assemble(("orch-review", "bold"), "  ", report.scope))
    console.print(Text.assemble("confirmed findings: ", _counts(report)))
    confirmed = report.confirmed
    if confirmed:
        console.print()
    for number, finding in enumerate(confirmed, 1):
        console.print(_finding(number, finding))
        console.print()
    if not confirmed:
        console.print(Text("No confirmed findings.", "green"))
    if quiet:
        return
    refuted = sum(1 for f in report.findings if f.status.value == "refuted")
    covered = sum(1 for c in report.concerns if c.covered)
    console.print(
        Text(
            f"{len(report.concerns)} concerns reviewed ({covered} fully covered); "
            f"{refuted} findings refuted by verifiers and not shown.",
            "dim",
        )
    )
    for outcome in report.uncovered:
        console.print(
            Text.assemble(
                ("NOT COVERED ", "bold red"),
                f"[{outcome.index + 1}] ",
                outcome.concern.splitlines()[0][:100],
                (f" — {outcome.error}", "dim"),
            )
        )
    if report.summary:
        console.print()
        console.print(Text(report.summary))
    console.print()
    console.print(_usage_table(report, boxed))
    console.print(Text(f"wall time {report.wall_seconds:.1f}s · model {report.model}", "dim"))
    for warning in report.warnings:
        console.print(Text.assemble(("warning: ", "yellow"), warning))
    if report.incomplete:
        console.print(Text("The review is INCOMPLETE: see what was not covered above.", "bold red"))
