"""The records a review produces: findings, verdicts, concern outcomes, and their ranking."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from orch_review.findings.proof import Proof
from orch_review.quoting import quote_path


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
CONFIDENCE_RANK = {"high": 0, "medium": 1, "low": 2}


class Status(StrEnum):
    """Where a finding stands after verification and triage."""

    CONFIRMED = "confirmed"  # verified and reported
    REFUTED = "refuted"  # its verifier refuted it
    UNVERIFIED = "unverified"  # its verifier failed or was not run
    FILTERED = "filtered"  # confirmed, but outside the lines the filter mode keeps
    SUPPRESSED = "suppressed"  # confirmed, but an inline comment or the baseline hides it


@dataclass(frozen=True, slots=True)
class Verdict:
    """A verifier's structured decision on one finding."""

    confirmed: bool
    reason: str
    evidence: str = ""
    confidence: str = "medium"  # high, medium, low
    # On the finding's proposed replacement: True only when the verifier approved it as a
    # fix; None when it did not judge one (no replacement, or it said nothing).
    fix_ok: bool | None = None
    fix_reason: str = ""


@dataclass(frozen=True, slots=True)
class PatchCheck:
    """Whether a finding's replacement is a verified patch and, either way, why."""

    verified: bool
    reason: str
    # Lines start_line..end_line as reviewed (joined by newlines, no final one): what the
    # patch replaces, so that applying it later can tell whether the file changed since.
    reviewed: str | None = None
    # A verified patch in a JSON report is signed by the review that verified it, so that
    # merging shard reports can tell it from a forged one (see findings/provenance.py).
    signature: str | None = None


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
    concerns: tuple[str, ...] = field(default=())  # when several reported it; () is `concern`
    start_column: int | None = None
    fingerprint: str = ""
    filtered: str | None = None  # why the filter mode dropped it
    suppressed: str | None = None  # why it is suppressed
    # The reporter's complete new text for lines start_line..end_line (no final newline).
    replacement: str | None = None
    patch_check: PatchCheck | None = None  # None: no replacement, or not checked yet
    proof: Proof | None = None  # None: no proof was attempted

    @property
    def verified_patch(self) -> str | None:
        """The replacement, when the finding is confirmed, its verifier approved the fix and
        the patch was verified."""
        if self.replacement is None or self.patch_check is None or self.verdict is None:
            return None
        if not self.patch_check.verified or self.status is not Status.CONFIRMED:
            return None
        if self.verdict.fix_ok is not True:
            return None
        return self.replacement

    @property
    def status(self) -> Status:
        """The finding's final status; only CONFIRMED findings are reported."""
        if self.verdict is None:
            return Status.UNVERIFIED
        if not self.verdict.confirmed:
            return Status.REFUTED
        if self.suppressed is not None:
            return Status.SUPPRESSED
        if self.filtered is not None:
            return Status.FILTERED
        return Status.CONFIRMED

    @property
    def location(self) -> str:
        """``path:line`` or ``path:start-end``, the path C-quoted when it must be."""
        path = quote_path(self.path)
        if self.end_line > self.start_line:
            return f"{path}:{self.start_line}-{self.end_line}"
        return f"{path}:{self.start_line}"

    @property
    def all_concerns(self) -> tuple[str, ...]:
        """Every concern that reported this finding."""
        return self.concerns or (self.concern,)

    def with_verdict(self, verdict: Verdict | None) -> Finding:
        """A copy carrying ``verdict``."""
        return replace(self, verdict=verdict)


@dataclass(frozen=True, slots=True)
class ConcernOutcome:
    """What became of one concern."""

    index: int
    concern: str
    status: str  # "reviewed", "failed", "skipped"
    findings: tuple[Finding, ...] = ()
    summary: str = ""
    error: str | None = None
    from_journal: bool = False

    @property
    def covered(self) -> bool:
        """Reviewed and every finding verified."""
        return self.status == "reviewed" and all(f.verdict is not None for f in self.findings)


_STATUS_RANK = {
    Status.CONFIRMED: 0,
    Status.FILTERED: 1,
    Status.SUPPRESSED: 2,
    Status.UNVERIFIED: 3,
    Status.REFUTED: 4,
}


def rank_key(finding: Finding) -> tuple[int, int, int, str, int, str]:
    """Deterministic order: status, severity, verifier confidence, path, line, claim."""
    confidence = CONFIDENCE_RANK.get(finding.verdict.confidence if finding.verdict else "", 3)
    return (
        _STATUS_RANK[finding.status],
        finding.severity.rank,
        confidence,
        finding.path,
        finding.start_line,
        finding.claim,
    )


def ranked(findings: list[Finding]) -> list[Finding]:
    """``findings`` sorted by :func:`rank_key`."""
    return sorted(findings, key=rank_key)
