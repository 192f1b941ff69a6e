"""SARIF: golden output, the official 2.1.0 schema, GitHub code scanning's stricter rules and
limits.

The schema is vendored in tests/data/ so these tests never depend on the sibling `shared/`
folder; when that folder is there, the copy is checked against it. Golden files are in
tests/reporters/golden/; regenerate with ``UPDATE_GOLDEN=1 .venv/bin/pytest tests/reporters``
and review the diff.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from orch_review.findings.records import Severity
from orch_review.findings.report import Report
from orch_review.reporters import sarif
from tests.reporters.golden import assert_golden
from tests.reporters.sample import clean_report, mask, sample_report

VENDORED_SCHEMA = Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json"
# The repository is checked out next to a `shared/` folder holding the reference copy.
SHARED_SCHEMA = Path(__file__).resolve().parents[2].parent / "shared/data/sarif-schema-2.1.0.json"


def _schema_errors(log: dict[str, Any]) -> list[str]:
    schema = json.loads(VENDORED_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


def _github_problems(log: dict[str, Any]) -> list[str]:
    """What GitHub code scanning requires beyond the schema (docs: "SARIF support for code
    scanning"), as a list of problems."""
    problems = []

    def need(condition: bool, what: str) -> None:
        if not condition:
            problems.append(what)

    need(bool(log.get("$schema")), "$schema")
    need(log.get("version") == "2.1.0", "version 2.1.0")
    runs = log.get("runs", [])
    need(1 <= len(runs) <= 20, "1 to 20 runs")
    for run in runs:
        driver = run["tool"]["driver"]
        for key in ("name", "semanticVersion", "informationUri", "rules"):
            need(bool(driver.get(key)), f"tool.driver.{key}")
        need(bool(run.get("automationDetails", {}).get("id")), "automationDetails.id")
        rules = driver.get("rules", [])
        ids = [rule["id"] for rule in rules]
        for rule in rules:
            rid = rule["id"]
            for key in ("shortDescription", "fullDescription"):
                need(bool(rule.get(key, {}).get("text")), f"{rid}: {key}.text")
            need(bool(rule.get("help", {}).get("text")), f"{rid}: help.text")
            need(bool(rule.get("help", {}).get("markdown")), f"{rid}: help.markdown")
            level = rule.get("defaultConfiguration", {}).get("level")
            need(level in {"error", "warning", "note"}, f"{rid}: defaultConfiguration.level")
            tags = rule.get("properties", {}).get("tags", [])
            need(0 < len(tags) <= 20, f"{rid}: 1 to 20 tags")
            severity = rule.get("properties", {}).get("security-severity")
            if severity is not None:
                need(isinstance(severity, str), f"{rid}: security-severity is a string")
                need(0.1 <= float(severity) <= 10.0, f"{rid}: security-severity in 0.1..10.0")
                need("security" in tags, f"{rid}: security-severity needs the security tag")
        results = run.get("results", [])
        need(len(results) <= sarif.MAX_RESULTS, "at most 25,000 results")
        for index, result in enumerate(results):
            where = f"result {index}"
            need(result.get("ruleId") in ids, f"{where}: ruleId names a rule")
            need(ids.index(result["ruleId"]) == result.get("ruleIndex"), f"{where}: ruleIndex")
            need(result.get("level") in {"error", "warning", "note"}, f"{where}: level")
            need(bool(result.get("message", {}).get("text")), f"{where}: message.text")
            need(len(result.get("locations", [])) == 1, f"{where}: one location")
            physical = result["locations"][0]["physicalLocation"]
            uri = physical["artifactLocation"]["uri"]
            need(":" not in uri and not uri.startswith("/"), f"{where}: relative uri")
            region = physical["region"]
            need(region["startLine"] >= 1, f"{where}: startLine")
            need(region.get("endLine", region["startLine"]) >= region["startLine"], "endLine")
            need(region.get("startColumn", 1) >= 1, f"{where}: startColumn")
            fingerprint = result.get("partialFingerprints", {}).get("primaryLocationLineHash")
            need(isinstance(fingerprint, str) and bool(fingerprint), f"{where}: fingerprint")
            severity = result.get("properties", {}).get("security-severity")
            if severity is not None:
                need(0.1 <= float(severity) <= 10.0, f"{where}: security-severity")
    return problems


def _render(report: Report, **limits: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        sarif.render(report) if not limits else json.dumps(sarif.to_sarif(report, **limits))
    )
    return data


def test_matches_golden() -> None:
    assert_golden("report.sarif", mask(sarif.render(sample_report())))


def test_vendored_schema_is_the_official_copy() -> None:
    if not SHARED_SCHEMA.exists():
        pytest.skip("no shared/ folder next to the repository")
    assert VENDORED_SCHEMA.read_bytes() == SHARED_SCHEMA.read_bytes()


@pytest.mark.parametrize("make", [sample_report, clean_report])
def test_valid_against_the_official_schema_and_githubs_rules(make: Any) -> None:
    log = _render(make())
    assert _schema_errors(log) == []
    assert _github_problems(log) == []


def test_the_checks_catch_what_github_would_reject() -> None:
    log = _render(sample_report())
    del log["runs"][0]["tool"]["driver"]["rules"][0]["help"]
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = (
        "/abs/app.py"
    )
    assert len(_github_problems(log)) == 3  # help.text, help.markdown, relative uri


def test_confirmed_findings_and_uncovered_files_become_results() -> None:
    results = _render(sample_report())["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("orch-review/security/high", "error"),
        ("orch-review/error-handling", "warning"),
        ("orch-review/correctness", "note"),
        ("orch-review/documentation", "note"),
        ("orch-review/not-covered", "warning"),
    ]
    first = results[0]
    assert first["partialFingerprints"] == {
        "primaryLocationLineHash": "0f1e2d3c4b5a69788796a5b4c3d2e1f0:1"
    }
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 6,
        "endLine": 6,
        "startColumn": 5,
    }
    assert first["properties"]["security-severity"] == "8.0"
    assert "security-severity" not in results[1]["properties"]
    assert "Verified: Reproduced" in first["message"]["text"]
    assert "Suggested fix:" in first["message"]["markdown"]
    uri = results[2]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri == {"uri": "src/util%2C%20v2.py", "uriBaseId": "SRCROOT"}


def _github_severity(score: str) -> str:
    """The severity code scanning shows for a rule's ``security-severity`` (docs: "SARIF
    support for code scanning", reportingDescriptor object)."""
    value = float(score)
    if value > 9.0:
        return "critical"
    if value >= 7.0:
        return "high"
    if value >= 4.0:
        return "medium"
    return "low"


def test_security_rules_carry_tag_and_severity() -> None:
    rules = {r["id"]: r for r in _render(sample_report())["runs"][0]["tool"]["driver"]["rules"]}
    for severity in Severity:
        security = rules[f"orch-review/security/{severity.value}"]
        assert "security" in security["properties"]["tags"]
    assert "orch-review/security" not in rules
    assert "security-severity" not in rules["orch-review/correctness"]["properties"]
    assert set(sarif.SECURITY_SEVERITY) == set(Severity)


@pytest.mark.parametrize(
    ("severity", "shown"),
    [(Severity.HIGH, "high"), (Severity.MEDIUM, "medium"), (Severity.LOW, "low")],
)
def test_github_shows_a_security_finding_at_its_own_severity(
    severity: Severity, shown: str
) -> None:
    # Code scanning takes security-severity from the rule the result points at, not from the
    # result: what it shows is the rule's band.
    report = sample_report()
    first = replace(report.confirmed[0], severity=severity)
    report = replace(report, findings=(first,))
    run = _render(report)["runs"][0]
    (result, *_) = run["results"]
    rule = run["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["id"] == result["ruleId"]
    assert _github_severity(rule["properties"]["security-severity"]) == shown


def test_an_incomplete_review_is_never_an_analysis_without_results() -> None:
    # An upload with no results for its category closes every earlier alert as fixed.
    report = replace(sample_report(), findings=())
    run = _render(report)["runs"][0]
    assert report.incomplete
    (result,) = run["results"]
    assert result["ruleId"] == "orch-review/not-covered"
    assert result["level"] == "warning"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "src/util%2C%20v2.py"
    assert location["region"]["startLine"] >= 1
    assert "did not review this file" in result["message"]["text"]
    assert _render(clean_report())["runs"][0]["results"] == []


def test_run_records_category_coverage_and_success() -> None:
    run = _render(sample_report())["runs"][0]
    assert run["automationDetails"] == {"id": "orch-review/base/"}
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    texts = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]]
    assert any(t.startswith("Not covered: Concurrency in worker.py") for t in texts)
    assert "main agent: stopped at the turn limit (30 turns)" in texts
    assert "2 of 3 changed files covered." in texts
    by_id = {n["descriptor"]["id"]: n for n in invocation["toolExecutionNotifications"]}
    uncovered = by_id["file-not-covered"]
    assert uncovered["level"] == "error"
    assert uncovered["message"]["text"].startswith("Not covered: src/util, v2.py (concern [4]")
    location = uncovered["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "src/util%2C%20v2.py", "uriBaseId": "SRCROOT"}
    assert by_id["file-skipped"]["message"]["text"] == (
        "Skipped: poetry.lock (lock file or generated/vendored code)"
    )
    clean = _render(clean_report())["runs"][0]["invocations"][0]
    assert clean["executionSuccessful"] is True
    assert [(n["level"], n["message"]["text"]) for n in clean["toolExecutionNotifications"]] == [
        ("note", "3 of 3 changed files covered."),
        ("note", "Skipped: poetry.lock (lock file or generated/vendored code)"),
    ]


def test_results_are_cut_to_the_limit_with_a_notification() -> None:
    log = _render(sample_report(), max_results=2)
    run = log["runs"][0]
    assert [r["level"] for r in run["results"]] == ["error", "warning"]  # the highest ranked
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any(n.startswith("3 of 5 results were left out") for n in notes)
    assert _schema_errors(log) == []


def test_results_are_cut_to_the_gzipped_size_limit() -> None:
    report = sample_report()
    base = report.confirmed[0]
    findings = tuple(
        replace(base, start_line=n, end_line=n, claim=f"{n} " + "x" * 3000, fingerprint=f"a{n:x}:1")
        for n in range(1, 201)
    )
    report = replace(report, findings=findings)
    full = gzip.compress(sarif.render(report).encode(), mtime=0)
    limit = len(full) // 3

    log = sarif.to_sarif(report, max_gzip_bytes=limit)

    size = len(gzip.compress(sarif._dumps(log).encode(), mtime=0))
    kept = len(log["runs"][0]["results"])
    assert size <= limit
    assert 0 < kept < 200
    notes = [
        n["message"]["text"] for n in log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    ]
    # 200 findings and the sample's one uncovered file.
    assert any(n.startswith(f"{201 - kept} of 201 results were left out") for n in notes)


def test_output_is_deterministic() -> None:
    assert sarif.render(sample_report()) == sarif.render(sample_report())


def test_only_verified_patches_become_fixes() -> None:
    results = _render(sample_report())["runs"][0]["results"]
    (fix,) = results[0]["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "app.py", "uriBaseId": "SRCROOT"}
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 6, "endLine": 6},
            "insertedContent": {
                "text": '    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))'
            },
        }
    ]
    assert "passed" in fix["description"]["text"]
    # The low finding has a replacement whose check failed: no fix offered.
    assert [bool(r.get("fixes")) for r in results] == [True, False, False, False, False]
