"""Merging the JSON reports of a split review (``--shard K/N`` jobs) into one report.

Coverage is summed (each file once), concerns are renumbered in shard order, findings with the
same fingerprint are merged (the strongest status kept, every concern listed), usage is added
up. A shard whose report is missing or unreadable makes the merged report incomplete.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from orch_review.findings.codec import finding_from_json
from orch_review.findings.coverage import Coverage, FileCoverage, merge_coverage
from orch_review.findings.provenance import (
    check_report_paths,
    known_category,
    trusted_patches,
    unproven_shard_proofs,
)
from orch_review.findings.records import ConcernOutcome, Finding, rank_key
from orch_review.findings.report import GuidanceFile, Report, build_report
from orch_review.findings.usage import Usage, UsageReport
from orch_review.trust import Signer


@dataclass(frozen=True, slots=True)
class ShardReport:
    """One shard's report as read back from its JSON, with where it came from."""

    source: str
    shard: str | None
    report: Report


def _usage(data: Mapping[str, Any]) -> UsageReport:
    def usage(u: Mapping[str, Any]) -> Usage:
        return Usage(
            int(u["input_tokens"]),
            int(u["output_tokens"]),
            int(u["cache_write_tokens"]),
            int(u["cache_read_tokens"]),
            float(u["cost_usd"]),
            int(u["requests"]),
        )

    return UsageReport(
        by_role={role: usage(u) for role, u in data["by_role"].items()},
        agents_started={k: int(v) for k, v in data["agents_started"].items()},
        agents_from_journal={k: int(v) for k, v in data["agents_from_journal"].items()},
        cap_reached=data.get("cap_reached"),
        unknown_price_models=tuple(data.get("unknown_price_models") or ()),
        verified_cost_usd=float(data.get("verified_cost_usd") or 0.0),
        verified_tokens=int(data.get("verified_tokens") or 0),
    )


def _coverage(data: Mapping[str, Any]) -> Coverage:
    unit = data.get("changed_files", {}).get("unit") or "changed files"
    return Coverage.from_json(
        {
            "files": data["files"],
            "skipped": data["skipped_files"],
            "unit": unit,
            "notes": data.get("notes") or (),
        }
    )


def report_from_json(data: Mapping[str, Any]) -> Report:
    """A :class:`Report` rebuilt from ``orch-review --json`` output (schema version 1)."""
    if data.get("schema_version") != 1 or data.get("tool", {}).get("name") != "orch-review":
        raise ValueError("not an orch-review JSON report (schema version 1)")
    check_report_paths(data)
    findings = [
        replace(found, category=known_category(found.category))
        for found in (finding_from_json(f) for f in data["findings"])
    ]
    concerns = [
        ConcernOutcome(
            index=int(c["index"]) - 1,
            concern=c["concern"],
            status=c["status"],
            # Each concern gets back the findings that name it, so `covered` holds again.
            findings=tuple(f for f in findings if c["concern"] in f.all_concerns),
            summary=c.get("summary") or "",
            error=c.get("error"),
            from_journal=bool(c.get("from_journal")),
        )
        for c in data["concerns"]
    ]
    return build_report(
        scope=data["scope"],
        summary=data.get("summary") or "",
        concerns=concerns,
        usage=_usage(data["usage"]),
        wall_seconds=float(data.get("wall_seconds") or 0.0),
        model=data["model"],
        agent_model=data["agent_model"],
        warnings=list(data.get("warnings") or ()),
        findings=findings,
        scope_kind=data["scope_kind"],
        filter_mode=data["filter_mode"],
        coverage=_coverage(data["coverage"]),
        shard=data.get("shard"),
        notes=tuple(str(n) for n in data.get("notes") or ()),
        guidance_files=_guidance_files(data.get("guidance_files")),
    )


def _guidance_files(entries: object) -> tuple[GuidanceFile, ...]:
    """The guidance files a shard's report lists (none from an older report)."""
    if not isinstance(entries, list):
        return ()
    return tuple(
        GuidanceFile(
            str(e["path"]),
            bool(e.get("truncated")),
            tuple(str(g) for g in e.get("applies_to") or ()),
        )
        for e in entries
        if isinstance(e, dict) and isinstance(e.get("path"), str)
    )


def read_shard(path: Path, signer: Signer | None = None) -> ShardReport:
    """One shard's JSON report, validated as orch-review writes it; raises ValueError (with
    the reason) when unusable. A verified patch not signed with ``signer``'s key is
    downgraded to unverified, with a warning."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        report = report_from_json(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    report, downgraded = trusted_patches(report, signer)
    report = unproven_shard_proofs(report)
    if downgraded:
        note = (
            f"{downgraded} verified patch(es) were not signed by a review with this "
            "credential (give the merge the shard jobs' API key, or the report was forged): "
            "shown as unverified."
        )
        report = replace(report, warnings=(*report.warnings, note))
    return ShardReport(str(path), report.shard, report)


def _shard_number(shard: str | None) -> tuple[int, int] | None:
    if shard is None or "/" not in shard:
        return None
    index, _, count = shard.partition("/")
    return (int(index), int(count)) if index.isdigit() and count.isdigit() else None


def missing_shards(shards: Sequence[ShardReport]) -> list[str]:
    """Shards of the split that no report came from (``K/N``), judged by the reports' N."""
    numbers = [n for n in (_shard_number(s.shard) for s in shards) if n is not None]
    if not numbers:
        return []
    count = max(n for _, n in numbers)
    seen = {i for i, _ in numbers}
    return [f"{k}/{count}" for k in range(1, count + 1) if k not in seen]


def _renumbered(report: Report, offset: int) -> tuple[list[ConcernOutcome], Coverage | None]:
    concerns = [replace(c, index=c.index + offset) for c in report.concerns]
    coverage = report.coverage
    if coverage is not None:
        files = tuple(
            FileCoverage(
                f.path, f.lines, f.hunks, f.status, tuple(i + offset for i in f.concerns), f.reason
            )
            for f in coverage.files
        )
        coverage = replace(coverage, files=files)
    return concerns, coverage


def _merged_findings(findings: Sequence[Finding]) -> list[Finding]:
    """One finding per fingerprint: the strongest, with every concern that reported it."""
    kept: dict[str, Finding] = {}
    for finding in sorted(findings, key=rank_key):
        key = finding.fingerprint or f"{finding.location}:{finding.category}:{finding.claim}"
        other = kept.get(key)
        if other is None:
            kept[key] = finding
        else:
            merged = tuple(dict.fromkeys((*other.all_concerns, *finding.all_concerns)))
            kept[key] = replace(other, concerns=merged)
    return list(kept.values())


def merge_reports(shards: Sequence[ShardReport], problems: Sequence[str] = ()) -> Report:
    """One report from shard reports; ``problems`` (unreadable reports) and shards missing
    from the split make it incomplete."""
    if not shards:
        raise ValueError("no shard report to merge")
    notes = [*problems, *(f"shard {s} produced no report" for s in missing_shards(shards))]
    concerns: list[ConcernOutcome] = []
    coverages: list[Coverage] = []
    usage: UsageReport | None = None
    warnings: list[str] = []
    for shard in sorted(shards, key=lambda s: _shard_number(s.shard) or (0, 0)):
        report = shard.report
        renumbered, coverage = _renumbered(report, len(concerns))
        concerns += renumbered
        if coverage is not None:
            coverages.append(coverage)
        usage = report.usage if usage is None else _add(usage, report.usage)
        label = f"shard {shard.shard}" if shard.shard else shard.source
        warnings += [f"{label}: {w}" for w in report.warnings]
    first = shards[0].report
    assert usage is not None
    count = len(shards)
    summaries = [s.report.summary.strip() for s in shards if s.report.summary.strip()]
    return build_report(
        scope=first.scope.split(" [shard ")[0] + f" [{count} shard report(s) merged]",
        summary="\n\n".join(summaries),
        concerns=concerns,
        usage=usage,
        wall_seconds=max(s.report.wall_seconds for s in shards),
        model=first.model,
        agent_model=first.agent_model,
        warnings=warnings,
        findings=_merged_findings([f for s in shards for f in s.report.findings]),
        scope_kind=first.scope_kind,
        filter_mode=first.filter_mode,
        coverage=merge_coverage(coverages, notes),
        notes=tuple(
            f"shard {s.shard}: {n}" if s.shard else n for s in shards for n in s.report.notes
        ),
        # Every shard reads the same guidance from the same revision: the first one's list.
        guidance_files=first.guidance_files,
    )


def _add(a: UsageReport, b: UsageReport) -> UsageReport:
    roles = sorted(set(a.by_role) | set(b.by_role))
    caps = [c for c in (a.cap_reached, b.cap_reached) if c]
    return UsageReport(
        by_role={r: a.by_role.get(r, Usage()) + b.by_role.get(r, Usage()) for r in roles},
        agents_started=_sum(a.agents_started, b.agents_started),
        agents_from_journal=_sum(a.agents_from_journal, b.agents_from_journal),
        cap_reached="; ".join(dict.fromkeys(caps)) or None,
        unknown_price_models=tuple(
            sorted(set(a.unknown_price_models) | set(b.unknown_price_models))
        ),
        verified_cost_usd=a.verified_cost_usd + b.verified_cost_usd,
        verified_tokens=a.verified_tokens + b.verified_tokens,
    )


def _sum(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in sorted(set(a) | set(b))}


def merge_files(paths: Sequence[Path], signer: Signer | None = None) -> Report:
    """The merged report of the shard reports at ``paths``; a missing or unreadable one makes
    it incomplete (it is named). Verified patches are trusted only when signed with
    ``signer``'s key. Raises ValueError when none can be read."""
    shards, problems = [], []
    for path in paths:
        try:
            shards.append(read_shard(path, signer))
        except ValueError as exc:
            problems.append(f"no usable shard report: {exc}")
    if not shards:
        raise ValueError("; ".join(problems) or "no shard report given")
    return merge_reports(shards, problems)
