"""The records a review produces: findings, verdicts, and their ranking."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    """How much a finding matters; ordered high to info."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for high ... 3 for info (lower sorts first)."""
        return _SEVERITY_ORDER.index(self)

    def at_least(self, level: str) -> bool:
        """True if this severity is at or above ``level`` ("never" is never reached)."""
        if level == "never":
            return False
        return self.rank <= Severity(level).rank


_SEVERITY_ORDER = [Severity.HIGH, Severity.MEDIUM, Severity.LOW, Severity.INFO]


class Status(StrEnum):
    """Where a finding stands after verification."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    UNVERIFIED = "unverified"  # its verifier failed or was not run


@dataclass(frozen=True, slots=True)
class Verdict:
    """A verifier's structured decision on one finding."""

    confirmed: bool
    reason: str
    evidence: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    """One located, argued problem reported by a subagent."""

    path: str
    start_line: int
    end_line: int
    severity: Severity
    category: str
    claim: str
    evidence: str
    concern: str
    suggestion: str | None = None
    verdict: Verdict | None = None
    concerns: tuple[str, ...] = field(default=())

    @property
    def status(self) -> Status:
        """Confirmed or refuted by its verifier, unverified without a verdict."""
        if self.verdict is None:
            return Status.UNVERIFIED
        return Status.CONFIRMED if self.verdict.confirmed else Status.REFUTED

    @property
    def location(self) -> str:
        """``path:line`` or ``path:start-end``."""
        if self.end_line > self.start_line:
            return f"{self.path}:{self.start_line}-{self.end_line}"
        return f"{self.path}:{self.start_line}"

    def with_verdict(self, verdict: Verdict | None) -> Finding:
        """A copy carrying ``verdict``."""
        return replace(self, verdict=verdict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (stable keys) used by the journal and the JSON report."""
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "severity": self.severity.value,
            "category": self.category,
            "claim": self.claim,
            "evidence": self.evidence,
            "suggestion": self.suggestion,
            "concern": self.concern,
            "concerns": list(self.concerns or (self.concern,)),
            "status": self.status.value,
            "verdict": None
            if self.verdict is None
            else {
                "confirmed": self.verdict.confirmed,
                "reason": self.verdict.reason,
                "evidence": self.verdict.evidence,
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        """Inverse of :meth:`to_json`."""
        verdict = data.get("verdict")
        return cls(
            path=data["path"],
            start_line=int(data["start_line"]),
            end_line=int(data["end_line"]),
            severity=Severity(data["severity"]),
            category=data["category"],
            claim=data["claim"],
            evidence=data["evidence"],
            concern=data["concern"],
            suggestion=data.get("suggestion"),
            verdict=None if verdict is None else Verdict(**verdict),
            concerns=tuple(data.get("concerns") or ()),
        )


def rank_key(finding: Finding) -> tuple[int, int, str, int, str]:
    """Deterministic order: confirmed first, severity, then path, line and claim."""
    status_rank = {Status.CONFIRMED: 0, Status.UNVERIFIED: 1, Status.REFUTED: 2}[finding.status]
    return (status_rank, finding.severity.rank, finding.path, finding.start_line, finding.claim)


def ranked(findings: list[Finding]) -> list[Finding]:
    """``findings`` sorted by :func:`rank_key`."""
    return sorted(findings, key=rank_key)
