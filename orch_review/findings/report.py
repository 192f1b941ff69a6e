"""The outcome of a review: findings, coverage and usage, and the exit code it implies."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from orch_review.errors import ExitCode
from orch_review.findings.coverage import Coverage
from orch_review.findings.records import ConcernOutcome, Finding, Status, ranked
from orch_review.findings.snippets import Snippet
from orch_review.findings.usage import CostRange, UsageReport
from orch_review.findings.walkthrough import Walkthrough

# "2 high", "three confirmed", "no bugs", "1 finding": a count of findings in a sentence.
_NUMBER = r"(?:\d+|no|zero|one|two|three|four|five|six|seven|eight|nine|ten|several|many)"
_COUNTS = re.compile(
    rf"\b{_NUMBER}\s+(?:\w+\s+)?(?:confirmed|high|medium|low|critical|severe|findings?|"
    r"issues?|bugs?|problems?|vulnerabilit(?:y|ies)|defects?)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class GuidanceFile:
    """A file of review guidance the review read (REVIEW.md, AGENTS.md, a Cursor rule, ...)."""

    path: str
    truncated: bool = False  # longer than the per-file cap: only its start was read
    applies_to: tuple[str, ...] = ()  # its globs; empty: its directory, or every file


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
    scope_kind: str = "all"
    filter_mode: str = "nofilter"
    # Fingerprint -> the code a finding points at (see orch_review.findings.snippets); display only.
    snippets: Mapping[str, Snippet] = field(default_factory=dict)
    # Files in scope this process could not read: skipped, so not covered.
    unreadable: tuple[str, ...] = ()
    # The per-file ledger; None only for reports built without one (older callers, tests).
    coverage: Coverage | None = None
    shard: str | None = None  # "K/N" for one shard of a split review
    # What orch-review itself did to reach full coverage (the sweep, the critic's concerns):
    # facts of the run, kept apart from the main agent's unverified summary.
    notes: tuple[str, ...] = ()
    # The guidance files read, from the trusted revision (the base with --base).
    guidance_files: tuple[GuidanceFile, ...] = ()
    # The model's walkthrough of the change (unverified description), when one was asked for.
    walkthrough: Walkthrough | None = None
    # What the review was estimated to cost before it started (shown against the actual).
    estimate: CostRange | None = None

    @property
    def reviewer_summary(self) -> str:
        """The main agent's summary without the sentences that count findings: it wrote
        them before verification, so they can contradict the verified results."""
        kept = []
        for line in self.summary.strip().splitlines():
            sentences = _SENTENCE.split(line)
            kept.append(" ".join(s for s in sentences if not _COUNTS.search(s)).rstrip())
        return "\n".join(kept).strip()

    @property
    def dropped(self) -> list[Finding]:
        """Findings reported and then not shown: refuted, unverified, filtered or suppressed."""
        return [f for f in self.findings if f.status is not Status.CONFIRMED]

    @property
    def summary_withheld(self) -> bool:
        """Whether the main agent's summary is kept out of the report people read: it was
        written before verification, filtering and suppression, so once any finding was
        dropped it may name that one, in words no check can recognise every time."""
        return bool(self.reviewer_summary) and bool(self.dropped)

    @property
    def confirmed(self) -> list[Finding]:
        """Findings that survived verification, filtering and suppression, ranked."""
        return self.with_status(Status.CONFIRMED)

    def with_status(self, status: Status) -> list[Finding]:
        """The findings that ended with ``status``, ranked."""
        return [f for f in self.findings if f.status is status]

    def counts(self) -> dict[str, int]:
        """How many findings ended with each status."""
        return {status.value: len(self.with_status(status)) for status in Status}

    @property
    def uncovered(self) -> list[ConcernOutcome]:
        """Concerns that failed, were skipped, or whose findings were not all verified."""
        return [c for c in self.concerns if not c.covered]

    @property
    def incomplete(self) -> bool:
        """True when part of the review did not happen: with a ledger, a reviewable file
        left uncovered (or a file this process could not read); users count files, not
        concerns. A budget cap reached makes a review incomplete only without a ledger: with
        one, the files it left uncovered say what is missing, and a cap touched once every
        file was covered took nothing away."""
        if self.unreadable:
            return True
        if self.coverage is not None:
            return not self.coverage.complete
        if self.usage.cap_reached is not None:
            return True
        return bool(self.uncovered) or not self.concerns

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
    findings: list[Finding],
    scope_kind: str,
    filter_mode: str,
    unreadable: tuple[str, ...] = (),
    coverage: Coverage | None = None,
    shard: str | None = None,
    notes: tuple[str, ...] = (),
    guidance_files: tuple[GuidanceFile, ...] = (),
) -> Report:
    """Assemble a :class:`Report` from triaged ``findings`` and the concerns' outcomes."""
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
        scope_kind=scope_kind,
        filter_mode=filter_mode,
        unreadable=unreadable,
        coverage=coverage,
        shard=shard,
        notes=notes,
        guidance_files=guidance_files,
    )


def empty_report(reason: str, scope_kind: str = "all") -> Report:
    """The report of a review with nothing in scope (``reason`` says why): no finding, no
    concern, nothing spent, so that report files a CI step reads exist all the same."""
    from orch_review.findings.usage import UsageReport

    # An empty ledger: complete, as every file in scope (none) is covered.
    return Report(
        scope=reason,
        summary="",
        findings=(),
        concerns=(),
        usage=UsageReport(by_role={}, agents_started={}, agents_from_journal={}, cap_reached=None),
        wall_seconds=0.0,
        model="",
        agent_model="",
        scope_kind=scope_kind,
        notes=(reason,),
        coverage=Coverage(files=()),
    )
