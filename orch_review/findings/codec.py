"""Findings and verdicts to and from JSON-ready dicts: the one format the journal stores and
the JSON report shows (``orch_review/schemas/report.schema.json`` describes it).

Every field is written and every field is required on the way back, so a stored record that
lacks one is an error, never a silent default; the one exception is a verdict's judgement of a
fix, whose absence reads as "not approved".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orch_review.findings.proof import proof_from_json, proof_to_json
from orch_review.findings.records import CONFIDENCE_RANK, Finding, PatchCheck, Severity, Verdict


def verdict_to_json(verdict: Verdict) -> dict[str, Any]:
    """A verdict as a JSON-ready dict."""
    return {
        "confirmed": verdict.confirmed,
        "reason": verdict.reason,
        "evidence": verdict.evidence,
        "confidence": verdict.confidence,
        "fix_ok": verdict.fix_ok,
        "fix_reason": verdict.fix_reason,
    }


def verdict_from_json(data: Mapping[str, Any]) -> Verdict:
    """Inverse of :func:`verdict_to_json`; raises ValueError/KeyError on a malformed dict."""
    confidence = data["confidence"]
    if confidence not in CONFIDENCE_RANK:
        raise ValueError(f"verdict confidence {confidence!r} is not one of high, medium, low")
    if not isinstance(data["confirmed"], bool):
        raise ValueError("verdict `confirmed` must be true or false")
    # The one exception to "every field is required": a verdict stored before verifiers
    # judged fixes has no `fix_ok`, and reads as "the fix was not approved", never as approved.
    fix_ok = data.get("fix_ok")
    if fix_ok is not None and not isinstance(fix_ok, bool):
        raise ValueError("verdict `fix_ok` must be true, false or null")
    return Verdict(
        confirmed=data["confirmed"],
        reason=_str(data, "reason"),
        evidence=_str(data, "evidence"),
        confidence=confidence,
        fix_ok=fix_ok,
        fix_reason=_str(data, "fix_reason") if "fix_reason" in data else "",
    )


def finding_to_json(finding: Finding) -> dict[str, Any]:
    """A finding, its verdict and its derived ``status``, as a JSON-ready dict."""
    return {
        "path": finding.path,
        "start_line": finding.start_line,
        "end_line": finding.end_line,
        "start_column": finding.start_column,
        "severity": finding.severity.value,
        "category": finding.category,
        "claim": finding.claim,
        "evidence": finding.evidence,
        "suggestion": finding.suggestion,
        "concern": finding.concern,
        "concerns": list(finding.all_concerns),
        "status": finding.status.value,
        "fingerprint": finding.fingerprint,
        "filtered": finding.filtered,
        "suppressed": finding.suppressed,
        "verdict": None if finding.verdict is None else verdict_to_json(finding.verdict),
        "replacement": finding.replacement,
        "patch": None if finding.patch_check is None else patch_to_json(finding.patch_check),
    } | ({} if finding.proof is None else {"proof": proof_to_json(finding.proof)})


def patch_to_json(check: PatchCheck) -> dict[str, Any]:
    """A patch check as a JSON-ready dict."""
    return {
        "verified": check.verified,
        "reason": check.reason,
        "reviewed": check.reviewed,
        "signature": check.signature,
    }


def patch_from_json(data: Mapping[str, Any]) -> PatchCheck:
    """Inverse of :func:`patch_to_json`; raises ValueError/KeyError on a malformed dict."""
    if not isinstance(data["verified"], bool):
        raise ValueError("patch `verified` must be true or false")
    return PatchCheck(
        verified=data["verified"],
        reason=_str(data, "reason"),
        reviewed=_optional_str(data, "reviewed"),
        # Absent from reports and journals written before patches were signed: unsigned.
        signature=_optional_str(data, "signature") if "signature" in data else None,
    )


def finding_from_json(data: Mapping[str, Any]) -> Finding:
    """Inverse of :func:`finding_to_json` (``status`` is derived, so it is not read back);
    raises ValueError/KeyError on a malformed dict."""
    concern = _str(data, "concern")
    concerns = tuple(str(c) for c in data["concerns"])
    verdict = data["verdict"]
    return Finding(
        path=_str(data, "path"),
        start_line=int(data["start_line"]),
        end_line=int(data["end_line"]),
        severity=Severity(data["severity"]),
        category=_str(data, "category"),
        claim=_str(data, "claim"),
        evidence=_str(data, "evidence"),
        concern=concern,
        suggestion=_optional_str(data, "suggestion"),
        verdict=None if verdict is None else verdict_from_json(verdict),
        # Written as every concern that reported it; () is the record's way to say "just one".
        concerns=() if concerns == (concern,) else concerns,
        start_column=None if data["start_column"] is None else int(data["start_column"]),
        fingerprint=_str(data, "fingerprint"),
        filtered=_optional_str(data, "filtered"),
        suppressed=_optional_str(data, "suppressed"),
        replacement=_optional_str(data, "replacement"),
        patch_check=None if data["patch"] is None else patch_from_json(data["patch"]),
        proof=None if data.get("proof") is None else proof_from_json(data["proof"]),
    )


def _str(data: Mapping[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f"`{key}` must be a string")
    return value


def _optional_str(data: Mapping[str, Any], key: str) -> str | None:
    return None if data[key] is None else _str(data, key)
