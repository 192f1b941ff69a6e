"""From raw verified findings to what is reported: fingerprints, deduplication, the diff
filter and suppressions. Runs once, before any renderer."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from orch_review.config.choices import FilterMode
from orch_review.errors import ConfigError
from orch_review.findings.records import Finding, Status, ranked
from orch_review.findings.snippets import LineSource
from orch_review.scope.diff import FileChange

# `orch-review: ignore` or `orch-review: ignore[security, performance]`, in any comment style.
SUPPRESS = re.compile(r"orch-review:\s*ignore(?:\[(?P<categories>[^\]]*)\])?", re.IGNORECASE)


def _normalized(line: str) -> str:
    return " ".join(line.split())


def fingerprint_base(finding: Finding, lines: list[str] | None) -> str:
    """A hash of the path, the category and the flagged code itself, not its line number."""
    code = []
    if lines is not None:
        code = [_normalized(x) for x in lines[finding.start_line - 1 : finding.end_line]]
    if not any(code):  # no code to anchor on: fall back to the claim
        code = [_normalized(finding.claim)]
    digest = hashlib.sha256()
    for part in (finding.path, finding.category.lower(), *code):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()[:32]


def with_fingerprints(findings: Iterable[Finding], read: LineSource) -> list[Finding]:
    """Fingerprints ``hash:n``, n numbering identical code flagged in several places."""
    out = []
    seen: dict[str, int] = {}
    for finding in sorted(findings, key=lambda f: (f.path, f.start_line, f.end_line, f.claim)):
        base = fingerprint_base(finding, read(finding.path))
        seen[base] = seen.get(base, 0) + 1
        out.append(replace(finding, fingerprint=f"{base}:{seen[base]}"))
    return out


def _strength(finding: Finding) -> tuple[int, int, int]:
    status = {Status.CONFIRMED: 0, Status.UNVERIFIED: 1, Status.REFUTED: 2}.get(finding.status, 1)
    return (status, finding.severity.rank, -len(finding.evidence))


def deduplicated(findings: Iterable[Finding]) -> list[Finding]:
    """Collapse reports of one problem (same path and category, overlapping lines) from
    several concerns: keep the strongest (verified, severe, best evidence), list all concerns."""
    kept: list[Finding] = []
    for finding in sorted(findings, key=_strength):
        for index, other in enumerate(kept):
            if (
                other.path == finding.path
                and other.category == finding.category
                and finding.start_line <= other.end_line
                and other.start_line <= finding.end_line
            ):
                merged = tuple(dict.fromkeys((*other.all_concerns, *finding.all_concerns)))
                kept[index] = replace(other, concerns=merged if len(merged) > 1 else ())
                break
        else:
            kept.append(finding)
    return kept


def filter_reason(
    finding: Finding, mode: FilterMode, changes: Mapping[str, FileChange] | None
) -> str | None:
    """Why ``mode`` drops ``finding`` (None: it is kept). Without changes nothing is dropped."""
    if mode == "nofilter" or changes is None:
        return None
    change = changes.get(finding.path)
    if change is None:
        return "not in a changed file"
    lines = range(finding.start_line, finding.end_line + 1)
    if mode == "added" and not any(line in change.added_lines for line in lines):
        return "not on an added or changed line"
    if mode == "diff_context" and not any(change.in_hunks(line) for line in lines):
        return "outside the diff hunks"
    return None


def suppression(finding: Finding, lines: list[str] | None, baseline: frozenset[str]) -> str | None:
    """Why ``finding`` is suppressed: an inline comment on its line or the line above, or its
    fingerprint in the baseline."""
    if lines is not None:
        for number in (finding.start_line, finding.start_line - 1):
            if not 1 <= number <= len(lines):
                continue
            match = SUPPRESS.search(lines[number - 1])
            if match is None:
                continue
            wanted = {
                c.strip().lower() for c in (match.group("categories") or "").split(",") if c.strip()
            }
            if not wanted or finding.category.lower() in wanted:
                return f"`orch-review: ignore` comment at line {number}"
    if finding.fingerprint and finding.fingerprint in baseline:
        return "already in the baseline report"
    return None


def load_baseline(path: Path) -> frozenset[str]:
    """Fingerprints of a previous JSON report (``--baseline``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return frozenset(f["fingerprint"] for f in data["findings"] if f.get("fingerprint"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"--baseline {path}: not a readable orch-review JSON report ({exc}); pass a file "
            "written by `orch-review --json`."
        ) from None


def triage(
    findings: Iterable[Finding],
    *,
    read: LineSource,
    changes: Mapping[str, FileChange] | None,
    mode: FilterMode,
    baseline: frozenset[str] = frozenset(),
    floor: str = "info",
    dismissed: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Fingerprint, deduplicate, filter and suppress; ranked. Nothing is dropped: filtered
    and suppressed findings keep a reason and are counted in the report. ``dismissed`` maps
    the fingerprints the team dismissed (learnings) to why: those are suppressed too."""
    dismissed = dismissed or {}
    out = []
    for finding in deduplicated(with_fingerprints(findings, read)):
        lines = read(finding.path)
        out.append(
            replace(
                finding,
                filtered=filter_reason(finding, mode, changes)
                or (
                    None
                    if finding.severity.at_least(floor)
                    else f"below the strictness floor ({floor})"
                ),
                suppressed=suppression(finding, lines, baseline)
                or dismissed.get(finding.fingerprint),
            )
        )
    return ranked(out)
