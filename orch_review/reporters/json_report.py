"""The JSON report: every finding with its status, coverage and usage; deterministic."""

from __future__ import annotations

import json
from typing import Any

from orch_review import __version__
from orch_review.report import Report

SCHEMA_VERSION = 1


def to_data(report: Report) -> dict[str, Any]:
    """The report as JSON-ready data (refuted and unverified findings included, marked)."""
    usage = report.usage
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "orch-review", "version": __version__},
        "scope": report.scope,
        "model": report.model,
        "agent_model": report.agent_model,
        "summary": report.summary,
        "incomplete": report.incomplete,
        "findings": [f.to_json() for f in report.findings],
        "counts": {
            "confirmed": len(report.confirmed),
            "refuted": sum(1 for f in report.findings if f.status.value == "refuted"),
            "unverified": sum(1 for f in report.findings if f.status.value == "unverified"),
        },
        "concerns": [
            {
                "index": c.index + 1,
                "concern": c.concern,
                "status": c.status,
                "covered": c.covered,
                "error": c.error,
                "from_journal": c.from_journal,
                "findings": len(c.findings),
            }
            for c in report.concerns
        ],
        "usage": {
            "by_role": {role: u.to_json() for role, u in usage.by_role.items()},
            "total": usage.total.to_json(),
            "agents_started": usage.agents_started,
            "agents_from_journal": usage.agents_from_journal,
            "cap_reached": usage.cap_reached,
        },
        "wall_seconds": round(report.wall_seconds, 3),
        "warnings": list(report.warnings),
    }


def render(report: Report) -> str:
    """Pretty JSON with sorted keys."""
    return json.dumps(to_data(report), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
