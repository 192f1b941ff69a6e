"""SARIF 2.1.0 for GitHub code scanning: one rule per category (per category and severity for
security), one result per confirmed finding and one per file left uncovered, deterministic.

Beyond the OASIS schema it follows GitHub's rules ("SARIF support for code scanning",
docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/
sarif-support-for-code-scanning): rules carry help text and markdown, ``properties.tags`` and
``security-severity``; results a repository-relative uri and ``partialFingerprints``; the run
an ``automationDetails.id`` so each scope kind is its own analysis category. GitHub rejects
a run with more than 25,000 results or a file over 10 MB gzipped: the lowest ranked results
are cut to fit, and a notification says how many.

Code scanning reads ``security-severity`` from the rule, never from the result, so a security
finding's rule is that of its category and severity (``orch-review/security/high``). A file
no verified review covered is a ``warning`` result of its own rule
(``orch-review/not-covered``): an upload of an incomplete review is never an analysis with
no results, which GitHub would read as every earlier alert of the category fixed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from typing import Any
from urllib.parse import quote

from orch_review.config.choices import CATEGORIES
from orch_review.findings.proof import proof_to_json
from orch_review.findings.records import Finding, Severity
from orch_review.findings.report import Report
from orch_review.quoting import json_safe
from orch_review.sanitize import fence
from orch_review.sanitize import markdown as safe_markdown
from orch_review.version import __version__
from orch_review.wording import counted

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
INFORMATION_URI = "https://github.com/orch-review/orch-review"
RULE_PREFIX = "orch-review/"
#: GitHub's hard limits (docs: "SARIF results exceed hard limit", "SARIF file is too large").
MAX_RESULTS = 25_000
MAX_GZIP_BYTES = 10 * 1024 * 1024

LEVEL = {
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
#: GitHub maps security-severity to critical (>= 9), high (7-8.9), medium (4-6.9), low (< 4).
SECURITY_SEVERITY = {
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "1.0",
}
SECURITY_CATEGORIES = frozenset({"security"})
NOT_COVERED = "not-covered"

DESCRIPTIONS = {
    "correctness": "The code does not do what it is meant to: wrong results, broken logic, "
    "unhandled cases.",
    "security": "A weakness an attacker could use: injection, unsafe deserialization, "
    "missing authorization, leaked secrets, unsafe defaults.",
    "concurrency": "A race, deadlock or unsafe sharing of state between threads, processes "
    "or tasks.",
    "error-handling": "Errors swallowed, misreported or left unhandled, so failures pass "
    "silently or crash.",
    "performance": "Work that grows badly with input or repeats needlessly: quadratic loops, "
    "repeated I/O, missing limits.",
    "resource-leak": "A file, socket, lock, process or other resource that is not released "
    "on every path.",
    "api-misuse": "A library or platform API used against its contract or documentation.",
    "data-loss": "Data can be lost, truncated or corrupted: non-atomic writes, wrong "
    "encodings, silent overwrites.",
    "compatibility": "Breaks supported versions, platforms or existing callers: removed "
    "APIs, changed formats, version-specific features.",
    "testing": "Tests that cannot fail, test the wrong thing, or miss the change's risky cases.",
    "maintainability": "Code that is hard to change safely: duplication, misleading names, "
    "hidden coupling.",
    "documentation": "Documentation or comments that contradict the code or leave out what "
    "a user needs.",
    "intent": "The change does not do what its request or linked issue says: a missed "
    "acceptance criterion, a fix that does not fix, a part of the feature left out.",
}

_HELP = """\
orch-review reports a {category} finding only after a second agent tried to refute it and \
could not: each result carries the claim, the evidence (file:line or command output) and the \
verifier's reason.

{description}"""


_NOT_COVERED_HELP = """\
orch-review covers a file only when a concern that names it finished and every finding of \
that concern was verified. This file was in scope and was not covered (a failed agent, a \
budget cap, findings left unverified), so the review says nothing about it: review it again \
or by hand. The result goes away once a complete review covers the file."""


def _rule_id(category: str, severity: Severity | None) -> str:
    """The rule of a finding: its category, and for security its severity too."""
    if category in SECURITY_CATEGORIES and severity is not None:
        return f"{RULE_PREFIX}{category}/{severity.value}"
    return RULE_PREFIX + category


def _rule(category: str, severity: Severity | None = None) -> dict[str, Any]:
    description = DESCRIPTIONS.get(category, f"A {category} problem.")
    security = category in SECURITY_CATEGORIES
    tags = list(dict.fromkeys(["orch-review", category, *(["security"] if security else [])]))
    properties: dict[str, Any] = {"tags": tags}
    name = "".join(part.capitalize() for part in category.split("-"))
    short = f"{category.capitalize()} problem (verified)"
    level = "warning"
    if security and severity is not None:
        properties["security-severity"] = SECURITY_SEVERITY[severity]
        name += severity.value.capitalize()
        short = f"{category.capitalize()} problem of {severity.value} severity (verified)"
        level = LEVEL[severity]
    help_text = _HELP.format(category=category, description=description)
    return {
        "id": _rule_id(category, severity),
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": description},
        "help": {
            "text": help_text,
            "markdown": help_text.replace("orch-review", "**orch-review**", 1),
        },
        "defaultConfiguration": {"level": level},
        "properties": properties,
    }


def _not_covered_rule() -> dict[str, Any]:
    return {
        "id": RULE_PREFIX + NOT_COVERED,
        "name": "NotCovered",
        "shortDescription": {"text": "File not covered by a verified review"},
        "fullDescription": {
            "text": "A file in scope that no verified review covered: the review of it is "
            "incomplete, not clean."
        },
        "help": {"text": _NOT_COVERED_HELP, "markdown": _NOT_COVERED_HELP},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["orch-review", NOT_COVERED]},
    }


def _rules(report: Report) -> list[dict[str, Any]]:
    """Every category's rule (security's once per severity), then not-covered's."""
    categories = sorted(set(CATEGORIES) | {f.category for f in report.confirmed})
    rules = []
    for category in categories:
        if category in SECURITY_CATEGORIES:
            rules += [_rule(category, severity) for severity in Severity]
        else:
            rules.append(_rule(category))
    return [*rules, _not_covered_rule()]


def _fenced(text: str) -> str:
    """``text`` as a markdown code block whose fence no backtick run inside can close."""
    fenced = fence(text)
    return f"{fenced}\n{text}\n{fenced}"


def _message(finding: Finding) -> dict[str, str]:
    evidence = finding.evidence.strip()
    text = [finding.claim.strip(), f"Evidence: {evidence}"]
    # Model text in the Markdown is shown as text, no construct of it kept (see
    # orch_review.sanitize.markdown); the evidence is a code block it cannot close.
    markdown = [f"**{safe_markdown(finding.claim)}**", f"Evidence:\n\n{_fenced(evidence)}"]
    if finding.suggestion:
        text.append(f"Suggested fix: {finding.suggestion.strip()}")
        markdown.append(f"Suggested fix: {safe_markdown(finding.suggestion)}")
    if finding.verdict is not None:
        why = f"{finding.verdict.reason.strip()} ({finding.verdict.confidence} confidence)"
        text.append(f"Verified: {why}")
        markdown.append(f"*Verified:* {safe_markdown(why)}")
    return {"text": "\n\n".join(text), "markdown": "\n\n".join(markdown)}


def _result(finding: Finding, rule_index: dict[str, int]) -> dict[str, Any]:
    rule = _rule_id(finding.category, finding.severity)
    region: dict[str, int] = {
        "startLine": max(1, finding.start_line),
        "endLine": max(1, finding.start_line, finding.end_line),
    }
    if finding.start_column is not None and finding.start_column >= 1:
        region["startColumn"] = finding.start_column
    properties: dict[str, Any] = {
        "severity": finding.severity.value,
        "category": finding.category,
        "concerns": list(finding.all_concerns),
    }
    if finding.verdict is not None:
        properties["confidence"] = finding.verdict.confidence
    if finding.category in SECURITY_CATEGORIES:
        properties["security-severity"] = SECURITY_SEVERITY[finding.severity]
    if finding.proof is not None:
        properties["proof"] = proof_to_json(finding.proof)
    result: dict[str, Any] = {
        "ruleId": rule,
        "ruleIndex": rule_index[rule],
        "level": LEVEL[finding.severity],
        "message": _message(finding),
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {
                        "uri": quote(finding.path, errors="surrogateescape"),
                        "uriBaseId": "SRCROOT",
                    },
                    "region": region,
                }
            }
        ],
        "properties": properties,
    }
    if finding.fingerprint:
        result["partialFingerprints"] = {"primaryLocationLineHash": finding.fingerprint}
    if finding.verified_patch is not None:
        result["fixes"] = [_fix(finding, finding.verified_patch)]
    return result


def _fix(finding: Finding, replacement: str) -> dict[str, Any]:
    """A SARIF ``fix`` (2.1.0 §3.55): the flagged lines replaced. A region given by lines
    alone ends before the last line's newline (§3.30), so the text has no final newline."""
    assert finding.patch_check is not None
    return {
        "description": {"text": f"Verified patch: {finding.patch_check.reason}"},
        "artifactChanges": [
            {
                "artifactLocation": {
                    "uri": quote(finding.path, errors="surrogateescape"),
                    "uriBaseId": "SRCROOT",
                },
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": finding.start_line,
                            "endLine": finding.end_line,
                        },
                        "insertedContent": {"text": replacement},
                    }
                ],
            }
        ],
    }


def _not_covered_results(report: Report, rule_index: dict[str, int]) -> list[dict[str, Any]]:
    """A ``warning`` per file no verified review covered, at the file's first changed line."""
    coverage = report.coverage
    out = []
    for file in coverage.uncovered if coverage is not None else ():
        reason = file.reason or "no verified review covered it"
        start, end = file.hunks[0] if file.hunks else (1, 1)
        out.append(
            {
                "ruleId": RULE_PREFIX + NOT_COVERED,
                "ruleIndex": rule_index[RULE_PREFIX + NOT_COVERED],
                "level": "warning",
                "message": {"text": f"orch-review did not review this file: {reason}."},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {
                                "uri": quote(file.path, errors="surrogateescape"),
                                "uriBaseId": "SRCROOT",
                            },
                            "region": {"startLine": max(1, start), "endLine": max(1, start, end)},
                        }
                    }
                ],
                "partialFingerprints": {
                    "primaryLocationLineHash": hashlib.sha256(
                        f"{NOT_COVERED}\0{file.path}".encode("utf-8", "surrogatepass")
                    ).hexdigest()[:16]
                },
                "properties": {"category": NOT_COVERED},
            }
        )
    return out


def _notification(level: str, descriptor: str, text: str) -> dict[str, Any]:
    return {"level": level, "descriptor": {"id": descriptor}, "message": {"text": text}}


#: Files named one by one in notifications; the JSON report lists them all.
MAX_FILE_NOTIFICATIONS = 1000


def _file_notification(level: str, descriptor: str, path: str, text: str) -> dict[str, Any]:
    note = _notification(level, descriptor, text)
    note["locations"] = [
        {
            "physicalLocation": {
                "artifactLocation": {
                    "uri": quote(path, errors="surrogateescape"),
                    "uriBaseId": "SRCROOT",
                }
            }
        }
    ]
    return note


def _coverage_notifications(report: Report) -> list[dict[str, Any]]:
    coverage = report.coverage
    if coverage is None:
        return []
    level = "note" if coverage.complete else "error"
    out = [_notification(level, "coverage", coverage.headline() + ".")]
    out += [
        _file_notification(
            "error", "file-not-covered", f.path, f"Not covered: {f.path} ({f.reason})"
        )
        for f in coverage.uncovered[:MAX_FILE_NOTIFICATIONS]
    ]
    out += [
        _file_notification("note", "file-skipped", s.path, f"Skipped: {s.path} ({s.reason})")
        for s in coverage.skipped[:MAX_FILE_NOTIFICATIONS]
    ]
    cut = max(0, len(coverage.uncovered) - MAX_FILE_NOTIFICATIONS) + max(
        0, len(coverage.skipped) - MAX_FILE_NOTIFICATIONS
    )
    if cut:
        out.append(
            _notification("warning", "coverage", f"{cut} more files; the JSON report lists all.")
        )
    out += [_notification("error", "coverage", n) for n in coverage.notes]
    return out


def _notifications(report: Report) -> list[dict[str, Any]]:
    out = _coverage_notifications(report)
    for outcome in report.uncovered:
        concern = " ".join(outcome.concern.split())
        why = outcome.error or "some of its findings were not verified"
        out.append(_notification("error", "concern-not-covered", f"Not covered: {concern} ({why})"))
    if report.usage.cap_reached:
        out.append(_notification("error", "budget-cap", report.usage.cap_reached))
    out.extend(_notification("warning", "warning", w) for w in report.warnings)
    return out


def to_sarif(
    report: Report, *, max_results: int = MAX_RESULTS, max_gzip_bytes: int = MAX_GZIP_BYTES
) -> dict[str, Any]:
    """The SARIF log of ``report``'s confirmed findings and uncovered files, cut to GitHub's
    limits."""
    rules = _rules(report)
    rule_index = {rule["id"]: index for index, rule in enumerate(rules)}
    results = [_result(f, rule_index) for f in report.confirmed]
    results += _not_covered_results(report, rule_index)
    keep = min(len(results), max_results)
    while True:
        log = _log(report, rules, results, keep)
        size = len(gzip.compress(_dumps(log).encode("utf-8"), mtime=0))
        if size <= max_gzip_bytes or keep == 0:
            return log
        # Shrink in proportion to the excess (a little more, to converge in few passes).
        keep = min(keep - 1, int(keep * max_gzip_bytes / size * 0.95))


def _log(
    report: Report, rules: list[dict[str, Any]], results: list[dict[str, Any]], keep: int
) -> dict[str, Any]:
    notifications = _notifications(report)
    if keep < len(results):
        notifications.append(
            _notification(
                "warning",
                "results-cut",
                f"{len(results) - keep} of {counted(len(results), 'result')} were left out, "
                f"the lowest ranked, to stay within GitHub's limits ({MAX_RESULTS:,} results "
                f"per run, {MAX_GZIP_BYTES // (1024 * 1024)} MB gzipped); the JSON report lists "
                "them all.",
            )
        )
    invocation: dict[str, Any] = {"executionSuccessful": not report.incomplete}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "orch-review",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "automationDetails": {"id": f"orch-review/{report.scope_kind}/"},
                "originalUriBaseIds": {
                    "SRCROOT": {"description": {"text": "The root of the reviewed repository."}}
                },
                "columnKind": "unicodeCodePoints",
                "invocations": [invocation],
                "results": results[:keep],
                "properties": {
                    "scope": report.scope,
                    "filterMode": report.filter_mode,
                    "incomplete": report.incomplete,
                    "counts": report.counts(),
                    "verifiedShare": _share(report.usage.verified_share),
                },
            }
        ],
    }


def _share(share: float | None) -> float | None:
    """The share of the spend that ended in verified coverage, rounded (None: none spent)."""
    return None if share is None else round(share, 4)


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(json_safe(data), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render(report: Report) -> str:
    """SARIF 2.1.0 JSON with sorted keys."""
    return _dumps(to_sarif(report))
