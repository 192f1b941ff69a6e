"""The evaluation as Markdown tables: overall and per severity, per defect pattern, failures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from orch_review.hosts.summary import cell, code
from orch_review.wording import counted, noun_for, usd


def percent(value: float | None, interval: Sequence[float] | None = None) -> str:
    """``62.5% (30.6-86.3)``, or ``n/a`` when there is nothing to measure."""
    if value is None:
        return "n/a"
    text = f"{value:.1%}"
    if interval is not None:
        text += f" ({interval[0]:.1%}-{interval[1]:.1%})"
    return text


def number(value: float | None, interval: Sequence[float] | None = None) -> str:
    """``1.50 (0.00-3.00)``, or ``n/a``."""
    if value is None:
        return "n/a"
    text = f"{value:.2f}"
    if interval is not None:
        text += f" ({interval[0]:.2f}-{interval[1]:.2f})"
    return text


def money(value: float | None) -> str:
    """``$0.0042``, or ``n/a``."""
    return "n/a" if value is None else usd(value)


def _row(name: str, m: Mapping[str, Any]) -> str:
    fp = m["false_positives_per_clean_change"]
    return (
        f"| {name} | {percent(m['recall'], m['recall_ci'])} ({m['found']}/{m['expected']}) "
        f"| {percent(m['precision'], m['precision_ci'])} ({m['matching']}/{m['reported']}) "
        f"| {percent(m['f1'], m['f1_ci'])} "
        f"| {number(fp, m['false_positives_per_clean_change_ci'])} |"
    )


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """The summary of :func:`orch_review.eval.summary.summarize` as Markdown."""
    overall = summary["overall"]
    lines = [
        f"## orch-review eval: {overall['scored']} of {overall['cases']} "
        f"{noun_for(overall['cases'], 'change')} scored",
        "",
        "| | recall (95% CI) | precision (95% CI) | F1 (95% CI) | FP per clean change (95% CI) |",
        "|---|---|---|---|---|",
        _row("**overall**", overall),
    ]
    for severity, m in summary["by_severity"].items():
        if m["expected"] or m["reported"]:
            lines.append(_row(severity, m))
    judge = summary["judge"]
    lines += [
        "",
        f"Cost: {money(overall['cost_usd'])} for the reviews "
        f"({money(overall['cost_usd_per_change'])} per change), "
        f"plus {money(judge['cost_usd'])} for {counted(judge['requests'], 'judge call')} "
        f"({judge['from_journal']} from the journal). "
        f"Wall time per change: {number(overall['wall_seconds_per_change'])} s.",
    ]
    proofs = summary.get("proofs")
    if proofs and proofs["proven"]:
        lines.append(
            f"Proven by a failing test: {proofs['proven']} of "
            f"{proofs['proven'] + proofs['unproven']} reported findings; precision "
            f"{percent(proofs['precision_proven'], proofs['precision_proven_ci'])} proven "
            f"({proofs['proven_matching']}/{proofs['proven']}), "
            f"{percent(proofs['precision_unproven'], proofs['precision_unproven_ci'])} unproven "
            f"({proofs['unproven_matching']}/{proofs['unproven']})."
        )
    if overall["agents_from_journal"]:
        lines.append(
            f"{counted(overall['agents_from_journal'], 'agent result')} came from the journal; "
            "their cost is not counted again (use --no-journal to measure a full run)."
        )
    patterns = summary.get("by_pattern")
    if patterns:
        lines += [
            "",
            "| defect pattern | changes | caught | catch rate (95% CI) | false positives |",
            "|---|---|---|---|---|",
        ]
        for name, p in patterns.items():
            lines.append(
                f"| {cell(name)} | {p['changes']} | {p['caught']}/{p['planted']} "
                f"| {percent(p['catch_rate'], p['catch_rate_ci'])} | {p['false_positives']} |"
            )
    failed = [c for c in summary["cases"] if c["error"]]
    if failed:
        lines += ["", f"Not scored ({len(failed)}):", ""]
        lines += [f"- {code(c['id'], 100, in_table=False)}: {cell(c['error'])}" for c in failed]
    return "\n".join(lines) + "\n"
