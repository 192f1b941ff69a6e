"""The figures of an evaluation: overall, per severity, per defect pattern and per case."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orch_review.eval.metrics import Tally, metrics, wilson
from orch_review.eval.runner import CaseResult, EvalResult
from orch_review.findings.records import Severity

UNRATED = "unrated"  # expected issues without a severity


def tally(result: CaseResult, severity: str | None = None) -> Tally:
    """The counts of one scored case, for one severity (None: all)."""
    assert result.match is not None
    issues = [
        (issue, found)
        for issue, found in zip(result.case.expected, result.match.issue_found, strict=True)
        if severity is None or (issue.severity.value if issue.severity else UNRATED) == severity
    ]
    findings = [
        matches
        for finding, matches in zip(result.findings, result.match.finding_matches, strict=True)
        if severity is None or finding.severity.value == severity
    ]
    return Tally(
        expected=len(issues),
        found=sum(found for _, found in issues),
        reported=len(findings),
        matching=sum(findings),
        clean=result.case.clean,
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _by_pattern(scored: Sequence[CaseResult]) -> dict[str, dict[str, Any]]:
    patterns = sorted({r.case.pattern for r in scored if r.case.pattern is not None})
    out = {}
    for pattern in patterns:
        tallies = [tally(r) for r in scored if r.case.pattern == pattern]
        caught = sum(t.found for t in tallies)
        planted = sum(t.expected for t in tallies)
        interval = wilson(caught, planted)
        out[pattern] = {
            "changes": len(tallies),
            "planted": planted,
            "caught": caught,
            "catch_rate": round(caught / planted, 4) if planted else None,
            "catch_rate_ci": None if interval is None else [round(x, 4) for x in interval],
            "false_positives": sum(t.false_positives for t in tallies),
        }
    return out


def _case(result: CaseResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": result.case.id,
        "pattern": result.case.pattern,
        "clean": result.case.clean,
        "cost_usd": round(result.cost_usd, 6),
        "wall_seconds": round(result.wall_seconds, 3),
        "error": result.error,
        "agents_from_journal": result.reused_agents,
    }
    if result.match is not None:
        counts = tally(result)
        out |= {
            "expected": counts.expected,
            "found": counts.found,
            "reported": counts.reported,
            "false_positives": counts.false_positives,
            "issues": [
                {**issue.to_json(), "found": found}
                for issue, found in zip(result.case.expected, result.match.issue_found, strict=True)
            ],
            "findings": [
                {
                    "location": f.location,
                    "severity": f.severity.value,
                    "claim": f.claim,
                    "matches_expected": matches,
                    "proven": f.proof is not None and f.proof.proven,
                }
                for f, matches in zip(result.findings, result.match.finding_matches, strict=True)
            ],
        }
    return out


def summarize(result: EvalResult) -> dict[str, Any]:
    """Everything ``--json`` writes; overall figures under ``"overall"``."""
    scored = result.scored
    ran = [r for r in result.results if r.wall_seconds > 0]  # a review did run
    overall = metrics([tally(r) for r in scored]).to_json()
    cost = sum(r.cost_usd for r in result.results)
    overall |= {
        "cases": len(result.results),
        "scored": len(scored),
        "failed": len(result.failed),
        "cost_usd": round(cost, 6),
        "agents_from_journal": sum(r.reused_agents for r in result.results),
        "cost_usd_per_change": _round(_mean([r.cost_usd for r in ran])),
        "wall_seconds_per_change": _round(_mean([r.wall_seconds for r in ran])),
    }
    severities = [s.value for s in Severity] + [UNRATED]
    by_severity = {
        severity: metrics([tally(r, severity) for r in scored]).to_json() for severity in severities
    }
    judge = result.judge_usage.to_json() | {"from_journal": result.judge_from_journal}
    out: dict[str, Any] = {
        "overall": overall,
        "by_severity": by_severity,
        "judge": judge,
        "wall_seconds": round(result.wall_seconds, 3),
        "cases": [_case(r) for r in result.results],
    }
    patterns = _by_pattern(scored)
    if patterns:
        out["by_pattern"] = patterns
    out["proofs"] = _proofs(scored)
    return out


def _proofs(scored: Sequence[CaseResult]) -> dict[str, Any]:
    """How many reported findings a failing test proved, and the precision of the proven and
    of the other findings apart: a proof should leave few false positives among the proven."""
    groups: dict[bool, list[bool]] = {True: [], False: []}
    for result in scored:
        assert result.match is not None
        for finding, matches in zip(result.findings, result.match.finding_matches, strict=True):
            proven = finding.proof is not None and finding.proof.proven
            groups[proven].append(matches)
    out: dict[str, Any] = {}
    for proven, name in ((True, "proven"), (False, "unproven")):
        matching, reported = sum(groups[proven]), len(groups[proven])
        interval = wilson(matching, reported)
        out |= {
            name: reported,
            f"{name}_matching": matching,
            f"precision_{name}": round(matching / reported, 4) if reported else None,
            f"precision_{name}_ci": None if interval is None else [round(x, 4) for x in interval],
        }
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
