"""The JSON report: every finding with its status, coverage and usage; deterministic.

Its shape is described by ``orch_review/schemas/report.schema.json`` (JSON Schema 2020-12),
shipped in the package. ``schema_version`` changes only when a key is removed or changes
meaning; new keys may appear within a version.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from orch_review.findings.codec import finding_to_json
from orch_review.findings.coverage import Coverage
from orch_review.findings.records import Severity
from orch_review.findings.report import Report
from orch_review.quoting import dumps, json_safe, path_fields
from orch_review.version import __version__

SCHEMA_VERSION = 1
SCHEMA_RESOURCE = "report.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema of this report, as shipped in the package."""
    text = resources.files("orch_review.schemas").joinpath(SCHEMA_RESOURCE).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _coverage(report: Report) -> dict[str, Any]:
    """Concern counts, and the per-file ledger: what a user counts."""
    concerns = report.concerns
    ledger = (report.coverage or Coverage(())).to_json()
    return {
        "concerns": len(concerns),
        "reviewed": sum(1 for c in concerns if c.status == "reviewed"),
        "failed": sum(1 for c in concerns if c.status == "failed"),
        "skipped": sum(1 for c in concerns if c.status == "skipped"),
        "covered": sum(1 for c in concerns if c.covered),
        "uncovered": len(report.uncovered),
        "files": [{**entry, **path_fields(entry["path"])} for entry in ledger["files"]],
        "skipped_files": [{**entry, **path_fields(entry["path"])} for entry in ledger["skipped"]],
        "changed_files": {
            key: ledger[key]
            for key in ("unit", "total", "covered", "reused", "uncovered", "complete")
        },
        "notes": ledger["notes"],
    }


def to_data(report: Report) -> dict[str, Any]:
    """The report as JSON-ready data (findings of every status included, marked)."""
    usage = report.usage
    confirmed = report.confirmed
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "orch-review", "version": __version__},
        "scope": report.scope,
        "scope_kind": report.scope_kind,
        "filter_mode": report.filter_mode,
        "model": report.model,
        "agent_model": report.agent_model,
        "summary": report.summary,
        "notes": list(report.notes),
        "incomplete": report.incomplete,
        "shard": report.shard,
        "findings": [{**finding_to_json(f), **path_fields(f.path)} for f in report.findings],
        "counts": report.counts(),
        "confirmed_by_severity": {
            s.value: sum(1 for f in confirmed if f.severity is s) for s in Severity
        },
        "coverage": _coverage(report),
        "concerns": [
            {
                "index": c.index + 1,
                "concern": c.concern,
                "status": c.status,
                "covered": c.covered,
                "error": c.error,
                "from_journal": c.from_journal,
                "findings": len(c.findings),
                "summary": c.summary,
            }
            for c in report.concerns
        ],
        "usage": {
            "by_role": {role: u.to_json() for role, u in usage.by_role.items()},
            "total": usage.total.to_json(),
            "agents_started": dict(usage.agents_started),
            "agents_from_journal": dict(usage.agents_from_journal),
            "cap_reached": usage.cap_reached,
            "unknown_price_models": list(usage.unknown_price_models),
            "verified_cost_usd": round(usage.verified_cost_usd, 6),
            "verified_tokens": usage.verified_tokens,
            "verified_share": _share(usage.verified_share),
        },
        "wall_seconds": round(report.wall_seconds, 3),
        "warnings": list(report.warnings),
        "guidance_files": [
            {**path_fields(f.path), "truncated": f.truncated, "applies_to": list(f.applies_to)}
            for f in report.guidance_files
        ],
    }


def _share(share: float | None) -> float | None:
    return None if share is None else round(share, 4)


def render(report: Report) -> str:
    """Pretty JSON with sorted keys."""
    return dumps(json_safe(to_data(report)), indent=2, sort_keys=True) + "\n"
