"""Step outputs (``$GITHUB_OUTPUT``) and the job summary (``$GITHUB_STEP_SUMMARY``).

Outputs use the multi-line form ``name<<DELIMITER`` with a random delimiter, as the Actions
toolkit does (packages/core/src/file-command.ts), so no value can inject another output.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path

from orch_review.findings.records import Severity
from orch_review.findings.report import Report

#: Every output the `github` command sets; action.yml maps each to an action output.
OUTPUT_NAMES = ("findings-count", "high-count", "sarif-file", "json-file", "cost-usd", "incomplete")


def output_values(
    report: Report | None, sarif_file: Path | None, json_file: Path | None
) -> dict[str, str]:
    """The outputs of one run; ``report`` is None when there was nothing to review."""
    confirmed = report.confirmed if report is not None else []
    return {
        "findings-count": str(len(confirmed)),
        "high-count": str(sum(1 for f in confirmed if f.severity is Severity.HIGH)),
        "sarif-file": str(sarif_file) if sarif_file is not None else "",
        "json-file": str(json_file) if json_file is not None else "",
        "cost-usd": f"{report.usage.total.cost_usd:.4f}" if report is not None else "0.0000",
        "incomplete": "true" if report is not None and report.incomplete else "false",
    }


def write_outputs(env: Mapping[str, str], values: Mapping[str, str]) -> Path | None:
    """Append ``values`` to ``$GITHUB_OUTPUT``; returns the file, or None outside Actions."""
    target = env.get("GITHUB_OUTPUT")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as out:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            out.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return Path(target)


def write_step_summary(env: Mapping[str, str], markdown: str) -> Path | None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY``; returns the file, or None."""
    target = env.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as out:
        out.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return Path(target)
