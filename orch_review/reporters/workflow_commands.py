"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per
confirmed finding, most severe first, for ``--format github`` in a workflow step."""

from __future__ import annotations

from collections import Counter

from orch_review.findings.records import Finding, Severity
from orch_review.findings.report import Report
from orch_review.findings.snippets import cap_lines
from orch_review.quoting import path_for_text
from orch_review.reporters.sentences import incomplete_reasons
from orch_review.sanitize import controls

COMMAND = {
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "notice",
    Severity.INFO: "notice",
}

# GitHub shows at most 10 annotations of each level per step and 50 per job; the others stay
# in the log only, silently. Source: actions/toolkit docs/problem-matchers.md "Limitations"
# (added in actions/toolkit#734: "10 warning annotations and 10 error annotations per step,
# 50 annotations per job"); notices, added later, are capped the same way (reports in
# github.com/orgs/community/discussions/68471 and /26680).
ANNOTATIONS_PER_LEVEL = 10
ANNOTATIONS_PER_JOB = 50


def escape_data(value: str) -> str:
    """Escape a command's message (actions/toolkit packages/core/src/command.ts escapeData)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a property value (command.ts escapeProperty): also ``:`` and ``,``."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: object) -> str:
    """One workflow command line, properties in the given order, None ones left out."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(finding: Finding) -> str:
    """The annotation of one finding, on its file and lines."""
    # Escaping keeps the text inside its command; the controls are made visible too, as on
    # every other sink, so the log viewer shows them rather than obeying them.
    return command(
        COMMAND[finding.severity],
        controls(cap_lines(f"{finding.claim.strip()} Evidence: {finding.evidence.strip()}")),
        file=controls(path_for_text(finding.path)),
        line=finding.start_line,
        endLine=max(finding.end_line, finding.start_line),
        col=finding.start_column,
        title=controls(f"orch-review: {finding.category} ({finding.severity.value})"),
    )


def hidden_count(levels: list[str]) -> int:
    """How many of annotations at ``levels`` (in order) one step's limits keep GitHub from
    showing."""
    shown = sum(min(n, ANNOTATIONS_PER_LEVEL) for n in Counter(levels).values())
    return len(levels) - min(shown, ANNOTATIONS_PER_JOB)


def render(report: Report) -> str:
    """Workflow commands, one per line: an incomplete-review warning first if needed, then
    the findings by severity, then a notice if GitHub will not display them all."""
    lines: list[str] = []
    levels: list[str] = []
    if report.incomplete:
        reasons = incomplete_reasons(report)
        lines.append(
            command(
                "warning",
                f"The review is INCOMPLETE ({'; '.join(reasons)}): findings may be missing.",
                title="orch-review: incomplete review",
            )
        )
        levels.append("warning")
    for finding in report.confirmed:
        lines.append(annotation(finding))
        levels.append(COMMAND[finding.severity])
    for warning in report.warnings:
        lines.append(command("warning", warning, title="orch-review: warning"))
        levels.append("warning")
    hidden = hidden_count(levels)
    if hidden:
        lines.append(
            command(
                "notice",
                f"{hidden} of {len(levels)} orch-review annotations are beyond what GitHub "
                f"displays for one step ({ANNOTATIONS_PER_LEVEL} each of errors, warnings and "
                f"notices; {ANNOTATIONS_PER_JOB} per job): they are in this log above, and the "
                "full list is in the job summary and the SARIF report.",
                title="orch-review: more findings",
            )
        )
    return "".join(line + "\n" for line in lines)
