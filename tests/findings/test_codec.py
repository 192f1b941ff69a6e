"""The one JSON form of findings and verdicts: every field goes out and comes back."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import jsonschema
import pytest

from orch_review.findings.codec import (
    finding_from_json,
    finding_to_json,
    verdict_from_json,
    verdict_to_json,
)
from orch_review.findings.proof import Proof, ProofRun
from orch_review.findings.records import Finding, PatchCheck, Severity, Verdict
from orch_review.reporters.json_report import schema

VERDICT = Verdict(
    confirmed=False,
    reason="guarded at a.py:3",
    evidence="a.py:3",
    confidence="low",
    fix_ok=False,
    fix_reason="literal_eval rejects the names the caller passes",
)

# Every field set to something other than its default, so a field the codec drops shows.
FINDING = Finding(
    path="pkg/a.py",
    start_line=4,
    end_line=9,
    severity=Severity.LOW,
    category="security",
    claim="user input reaches eval()",
    evidence="pkg/a.py:5: eval(name)",
    concern="check eval",
    suggestion="use ast.literal_eval",
    verdict=VERDICT,
    concerns=("check eval", "check input handling"),
    start_column=7,
    fingerprint="0123abcd:2",
    filtered="outside the diff hunks",
    suppressed="already in the baseline report",
    replacement="    value = ast.literal_eval(name)\n    return value",
    patch_check=PatchCheck(
        verified=True,
        reason="applies; `python3 -m py_compile` passed",
        reviewed="    value = eval(name)\n    return value",
        signature="ab" * 32,
    ),
    proof=Proof(
        "proven",
        "fails on head with a test failure and passes with the fix",
        test_path="tests/test_a.py",
        test_code="from pkg.a import f\n\n\ndef test_f():\n    assert f('1') == 1\n",
        command="python3 -m pytest -p no:cacheprovider -q tests/test_a.py",
        head=ProofRun(1, "1 failed"),
        fixed=ProofRun(0, "1 passed"),
        against="patch",
    ),
)
PATCH = FINDING.patch_check


def _non_default(record: object) -> list[str]:
    """Names of the fields of ``record`` that hold their default value."""
    same = []
    for f in dataclasses.fields(record):  # type: ignore[arg-type]
        value = getattr(record, f.name)
        if f.default is not dataclasses.MISSING and value == f.default:
            same.append(f.name)
        if f.default_factory is not dataclasses.MISSING and value == f.default_factory():
            same.append(f.name)
    return same


def _through_text(data: dict[str, Any]) -> Any:
    return json.loads(json.dumps(data))


def test_the_samples_set_every_field() -> None:
    # A new field must be added to the samples, so the round trips below cover it.
    assert _non_default(FINDING) == []
    assert _non_default(VERDICT) == []
    assert PATCH is not None and _non_default(PATCH) == []
    assert FINDING.proof is not None and _non_default(FINDING.proof) == []
    assert VERDICT.confidence != Verdict(True, "r").confidence


def test_verdict_round_trips_every_field() -> None:
    data = _through_text(verdict_to_json(VERDICT))
    assert set(data) == {f.name for f in dataclasses.fields(Verdict)}
    assert verdict_from_json(data) == VERDICT


def test_finding_round_trips_every_field() -> None:
    data = _through_text(finding_to_json(FINDING))
    # `patch` is the JSON name of `patch_check`; `status` is derived.
    names = {f.name for f in dataclasses.fields(Finding)} - {"patch_check"}
    assert set(data) == names | {"status", "patch"}
    assert finding_from_json(data) == FINDING


@pytest.mark.parametrize(
    "finding",
    [
        dataclasses.replace(
            FINDING,
            verdict=None,
            suggestion=None,
            start_column=None,
            concerns=(),
            fingerprint="",
            filtered=None,
            suppressed=None,
            replacement=None,
            patch_check=None,
        ),
        dataclasses.replace(FINDING, verdict=dataclasses.replace(VERDICT, confidence="high")),
        dataclasses.replace(FINDING, patch_check=PatchCheck(False, "lines 4-9 changed")),
        dataclasses.replace(
            FINDING, verdict=dataclasses.replace(VERDICT, fix_ok=True, fix_reason="")
        ),
        dataclasses.replace(FINDING, verdict=Verdict(True, "holds")),
    ],
    ids=["defaults", "high-confidence", "unverified-patch", "fix-approved", "fix-not-judged"],
)
def test_finding_round_trips_defaults_and_each_confidence(finding: Finding) -> None:
    assert finding_from_json(_through_text(finding_to_json(finding))) == finding


def test_single_concern_is_written_as_a_list_and_read_back_as_the_default() -> None:
    alone = dataclasses.replace(FINDING, concerns=())
    data = finding_to_json(alone)
    assert data["concerns"] == ["check eval"]
    assert finding_from_json(data).concerns == ()


def test_output_is_valid_under_the_report_schema() -> None:
    finding_schema = {**schema()["$defs"]["finding"], "$defs": schema()["$defs"]}
    bare = dataclasses.replace(
        FINDING, verdict=None, concerns=(), replacement=None, patch_check=None
    )
    for finding in (FINDING, bare):
        jsonschema.validate(finding_to_json(finding), finding_schema)


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"confidence": None}, ValueError),
        ({"confidence": "certain"}, ValueError),
        ({"confirmed": "yes"}, ValueError),
        ({"reason": 3}, ValueError),
        ({"fix_ok": "true"}, ValueError),
        ({"fix_ok": 1}, ValueError),
        ({"fix_reason": None}, ValueError),
    ],
)
def test_malformed_verdicts_are_refused(change: dict[str, Any], error: type[Exception]) -> None:
    data = {**verdict_to_json(VERDICT), **change}
    with pytest.raises(error):
        verdict_from_json(data)


def test_a_verdict_without_confidence_is_refused_not_defaulted() -> None:
    # Verdicts stored before confidence was kept must not come back as "medium".
    data = verdict_to_json(VERDICT)
    del data["confidence"]
    with pytest.raises(KeyError):
        verdict_from_json(data)


def test_a_verdict_stored_before_fixes_were_judged_approves_no_fix() -> None:
    data = verdict_to_json(dataclasses.replace(VERDICT, confirmed=True, fix_ok=True))
    del data["fix_ok"], data["fix_reason"]
    verdict = verdict_from_json(data)
    assert (verdict.fix_ok, verdict.fix_reason) == (None, "")
    older = dataclasses.replace(FINDING, verdict=verdict, filtered=None, suppressed=None)
    assert older.verified_patch is None
    approved = dataclasses.replace(older, verdict=verdict_from_json({**data, "fix_ok": True}))
    assert approved.verified_patch == FINDING.replacement


@pytest.mark.parametrize(
    "key", ["severity", "start_line", "verdict", "concerns", "suppressed", "replacement", "patch"]
)
def test_a_finding_missing_a_key_is_refused(key: str) -> None:
    data = finding_to_json(FINDING)
    del data[key]
    with pytest.raises(KeyError):
        finding_from_json(data)


def test_a_finding_with_an_unknown_severity_is_refused() -> None:
    with pytest.raises(ValueError):
        finding_from_json({**finding_to_json(FINDING), "severity": "critical"})


@pytest.mark.parametrize(
    "patch",
    [
        {"verified": "yes", "reason": "r", "reviewed": None},
        {"verified": True, "reviewed": None},
        {"verified": True, "reason": "r"},
        {"verified": True, "reason": "r", "reviewed": 3},
    ],
)
def test_a_malformed_patch_check_is_refused(patch: dict[str, Any]) -> None:
    data = {**finding_to_json(FINDING), "patch": patch}
    with pytest.raises((ValueError, KeyError)):
        finding_from_json(data)
