"""The outcome of a review: findings, coverage and usage, and the exit code it implies."""

from __future__ import annotations

from dataclasses import dataclass, field

from orch_review.engine.budget import UsageReport
from orch_review.engine.workflow import ConcernOutcome
from orch_review.errors import ExitCode
from orch_review.findings import Finding, Status, ranked


@dataclass(frozen=True, slots=True)
class Report:
    """Everything reporters render; built once at the end of a review."""

    scope: str
    summary: str
    findings: tuple[Finding, ...]
    concerns: tuple[ConcernOutcome, ...]
    usage: UsageReport
    wall_seconds: float
    model: str
    agent_model: str
    warnings: tuple[str, ...] = field(default=())

    @property
    def confirmed(self) -> list[Finding]:
        """Findings that survived verification, ranked."""
        return [f for f in self.findings if f.status is Status.CONFIRMED]

    @property
    def uncovered(self) -> list[ConcernOutcome]:
        """Concerns that failed, were skipped, or whose findings were not all verified."""
        return [c for c in self.concerns if not c.covered]

    @property
    def incomplete(self) -> bool:
        """True when part of the review did not happen."""
        return bool(self.uncovered) or self.usage.cap_reached is not None or not self.concerns

    def exit_code(self, fail_on: str) -> ExitCode:
        """3 when incomplete, else 1 when a confirmed finding reaches ``fail_on``, else 0."""
        if self.incomplete:
            return ExitCode.INCOMPLETE
        if any(f.severity.at_least(fail_on) for f in self.confirmed):
            return ExitCode.FINDINGS
        return ExitCode.CLEAN


def build_report(
    *,
    scope: str,
    summary: str,
    concerns: list[ConcernOutcome],
    usage: UsageReport,
    wall_seconds: float,
    model: str,
    agent_model: str,
    warnings: list[str],
) -> Report:
    """Collect the findings of every concern, ranked, into a :class:`Report`."""
    findings = [f for c in concerns for f in c.findings]
    return Report(
        scope=scope,
        summary=summary,
        findings=tuple(ranked(findings)),
        concerns=tuple(sorted(concerns, key=lambda c: c.index)),
        usage=usage,
        wall_seconds=wall_seconds,
        model=model,
        agent_model=agent_model,
        warnings=tuple(warnings),
    )
