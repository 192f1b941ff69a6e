"""A finding the team dismissed on a pull or merge request, and what the review and the
learnings file make of it, whatever the host: the dismissed finding is suppressed (not
commented again, listed as dismissed, not failing the check) and offered as a learning to
commit."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

from orch_review.config.learnings import Learning
from orch_review.findings.records import Status
from orch_review.findings.report import Report

_CATEGORY = re.compile(r"[a-z][a-z0-9-]{0,39}")


@dataclass(frozen=True, slots=True)
class ConversationRules:
    """How people talk to orch-review on a change (from the configuration): the mention
    that starts a command, the reaction that dismisses a finding (hosts without configurable
    reactions keep their own), and the fingerprints the learnings file holds already."""

    trigger: str = "@orch-review"
    ignore_reaction: str = "-1"  # a GitHub reaction content, or "none"
    learned: frozenset[str] = frozenset()  # fingerprints in the learnings file already


@dataclass(frozen=True, slots=True)
class Dismissal:
    """A finding dismissed in the pull request: by whom, when, why, where."""

    fingerprint: str
    reason: str
    who: str
    when: str  # YYYY-MM-DD, or "" when GitHub did not say
    path: str
    category: str | None
    url: str

    @property
    def suppression(self) -> str:
        """Why the finding is suppressed, as reports show it."""
        return f"dismissed in this pull request by {self.who}: {self.reason}"

    def learning(
        self, category: str | None = None, location: str | None = None, claim: str | None = None
    ) -> Learning:
        """The learning to commit for this dismissal, naming the finding it silences (its
        place, else its file, and its claim when known)."""
        return Learning(
            reason=self.reason,
            who=self.who,
            when=self.when or "1970-01-01",
            fingerprint=self.fingerprint,
            category=category or self.category,
            location=location or self.path or None,
            claim=claim,
        )


@dataclass(frozen=True, slots=True)
class Collected:
    """The dismissals found on a change, by fingerprint, and what the summary should say
    about reading them (when some could not be read)."""

    dismissed: dict[str, Dismissal]
    notes: tuple[str, ...] = ()


def suppress_dismissed(report: Report, dismissed: Mapping[str, Dismissal]) -> Report:
    """``report`` with the confirmed findings the team dismissed suppressed."""
    if not dismissed:
        return report
    findings = tuple(
        dataclasses.replace(f, suppressed=dismissed[f.fingerprint].suppression)
        if f.status is Status.CONFIRMED and f.fingerprint in dismissed
        else f
        for f in report.findings
    )
    return dataclasses.replace(report, findings=findings)


def learnings_to_commit(
    report: Report, dismissed: Mapping[str, Dismissal], learned: frozenset[str]
) -> list[Learning]:
    """The dismissals not yet in the learnings file, as learnings (the finding's category,
    place and claim from this run's report when it has it)."""
    found = {f.fingerprint: f for f in report.findings if f.fingerprint}
    learnings = []
    for fingerprint, d in sorted(dismissed.items()):
        if fingerprint in learned:
            continue
        finding = found.get(fingerprint)
        if finding is None:
            learnings.append(d.learning())
            continue
        learnings.append(
            d.learning(valid_category(finding.category), finding.location, finding.claim)
        )
    return learnings


def valid_category(category: str | None) -> str | None:
    """``category`` when it is a slug a learning may hold, else None."""
    return category if category and _CATEGORY.fullmatch(category) else None
