"""The formats other hosts read: GitLab Code Quality, reviewdog's rdjson and JUnit XML, each
validated against its published schema, with golden files (regenerate with
``UPDATE_GOLDEN=1 pytest tests/reporters`` and review the diff)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import xmlschema

from orch_review.reporters import codequality, junit, rdjson
from tests.reporters.golden import assert_golden
from tests.reporters.sample import clean_report, mask, sample_report

DATA = Path(__file__).parent.parent / "data"


def _schema(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _codequality(text: str) -> list[dict[str, Any]]:
    data = json.loads(text)
    jsonschema.Draft202012Validator(_schema("gitlab-codequality.schema.json")).validate(data)
    return data  # type: ignore[no-any-return]


def _rdjson(text: str) -> dict[str, Any]:
    data = json.loads(text)
    jsonschema.Draft4Validator(_schema("rdjson-DiagnosticResult.schema.json")).validate(data)
    return data  # type: ignore[no-any-return]


# ``file`` and ``line`` on a testcase are what GitLab and pytest's xunit1 add to Ant's shape.
_EXTENSIONS = re.compile(r' (?:file|line)="[^"]*"')


def _junit(text: str) -> xmlschema.XMLSchema:
    schema = xmlschema.XMLSchema(str(DATA / "junit-ant.xsd"))
    schema.validate(_EXTENSIONS.sub("", text))
    return schema


def test_code_quality_report_matches_golden_and_gitlab_format() -> None:
    out = codequality.render(sample_report())
    assert_golden("codequality.json", mask(out))
    entries = _codequality(out)

    report = sample_report()
    assert len(entries) == len(report.confirmed) + 1  # the file left uncovered
    assert {e["severity"] for e in entries[:1]} == {"critical"}
    (uncovered,) = [e for e in entries if e["check_name"] == codequality.NOT_COVERED]
    assert uncovered["location"]["path"] == "src/util, v2.py"
    assert len({e["fingerprint"] for e in entries}) == len(entries)  # GitLab dedupes by it


def test_a_clean_complete_review_is_an_empty_code_quality_report() -> None:
    assert _codequality(codequality.render(clean_report())) == []


def test_rdjson_matches_golden_and_reviewdogs_schema() -> None:
    out = rdjson.render(sample_report())
    assert_golden("report.rdjson", mask(out))
    data = _rdjson(out)

    diagnostics = data["diagnostics"]
    suggested = [d for d in diagnostics if "suggestions" in d]
    verified = [f for f in sample_report().confirmed if f.verified_patch is not None]
    assert len(suggested) == len(verified)  # unverified replacements are not suggested
    (suggestion,) = suggested[0]["suggestions"]
    assert suggestion["text"] == verified[0].verified_patch
    assert suggestion["range"] == {
        "start": {"line": verified[0].start_line},
        "end": {"line": verified[0].end_line},
    }
    assert diagnostics[-1]["code"] == {"value": "not-covered"}


def test_junit_matches_golden_and_ants_xsd() -> None:
    out = junit.to_xml(sample_report(), timestamp="2026-12-01T00:00:00", hostname="ci")
    assert_golden("junit.xml", mask(out))
    schema = _junit(out)

    suite = schema.to_dict(_EXTENSIONS.sub("", out))["testsuite"][0]
    report = sample_report()
    with_findings = {f.path for f in report.confirmed}
    assert report.coverage is not None
    uncovered = {f.path for f in report.coverage.uncovered} - with_findings
    assert (suite["@tests"], suite["@failures"], suite["@errors"], suite["@skipped"]) == (
        5,
        len(with_findings),
        len(uncovered),
        1,  # poetry.lock
    )


def test_every_junit_test_case_names_its_file_and_a_failure_its_line() -> None:
    report = sample_report()
    out = junit.to_xml(report, timestamp="2026-12-01T00:00:00", hostname="ci")

    cases = ET.fromstring(out).iter("testcase")
    by_name = {case.get("name"): case for case in cases}
    assert all(case.get("file") == name for name, case in by_name.items())
    first = {}
    for finding in report.confirmed:
        first.setdefault(finding.path, finding.start_line)
    for path, line in first.items():
        assert by_name[path].get("line") == str(line)
    assert all(
        case.get("line") is None for case in by_name.values() if case.find("failure") is None
    )


@pytest.mark.parametrize(
    "hostile",
    ["\x00\x1b[2J<evil>&amp;\ufffe", "]]></failure><testcase name='x'/>", "\ud800 lone"],
)
def test_hostile_text_keeps_every_format_valid(hostile: str) -> None:
    report = sample_report()
    first = replace(report.confirmed[0], claim=hostile, evidence=hostile, category="security")
    findings = tuple(first if f is report.confirmed[0] else f for f in report.findings)
    report = replace(report, findings=findings)

    _codequality(codequality.render(report))
    _rdjson(rdjson.render(report))
    out = junit.to_xml(report, timestamp="2026-12-01T00:00:00", hostname="ci")
    _junit(out)
    assert "<testcase name='x'/>" not in out
