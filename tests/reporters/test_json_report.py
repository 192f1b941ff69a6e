"""The JSON report: golden file, the shipped JSON Schema, every status and coverage.

Golden files are in tests/reporters/golden/; regenerate with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/reporters`` and review the diff.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Any

import jsonschema
import pytest

from orch_review.findings.report import Report
from orch_review.findings.usage import UsageReport
from orch_review.reporters import json_report
from tests.reporters.golden import assert_golden
from tests.reporters.sample import clean_report, mask, sample_report


def _validate(data: Any) -> None:
    schema = json_report.schema()
    jsonschema.Draft202012Validator(schema).validate(data)


def _empty_report() -> Report:
    """No workflow ran: nothing at all."""
    return replace(
        clean_report(),
        concerns=(),
        usage=UsageReport(by_role={}, agents_started={}, agents_from_journal={}, cap_reached=None),
    )


def test_matches_golden() -> None:
    out = json_report.render(sample_report())
    assert_golden("report.json", mask(out))


def test_the_shipped_schema_is_a_valid_2020_12_schema() -> None:
    schema = json_report.schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"]["const"] == json_report.SCHEMA_VERSION


@pytest.mark.parametrize("make", [sample_report, clean_report, _empty_report])
def test_every_report_validates_against_the_schema(make: Any) -> None:
    _validate(json.loads(json_report.render(make())))


def test_the_schema_rejects_what_it_does_not_describe() -> None:
    data = json.loads(json_report.render(sample_report()))
    data["findings"][0]["status"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        _validate(data)
    data = json.loads(json_report.render(sample_report()))
    data["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        _validate(data)


def test_every_finding_is_listed_with_its_status_and_reason() -> None:
    data = json.loads(json_report.render(sample_report()))
    statuses = [f["status"] for f in data["findings"]]
    assert statuses == ["confirmed"] * 4 + ["filtered", "suppressed", "unverified", "refuted"]
    by_status = {f["status"]: f for f in data["findings"]}
    assert by_status["filtered"]["filtered"] == "not on an added or changed line"
    assert by_status["suppressed"]["suppressed"].startswith("`orch-review: ignore`")
    assert by_status["refuted"]["verdict"]["confirmed"] is False
    assert by_status["unverified"]["verdict"] is None
    assert data["findings"][0]["concerns"] == [
        "SQL injection in app.py: queries built from user input",
        "Maintainability and docs of the rest",
    ]
    assert data["findings"][0]["fingerprint"].endswith(":1")


def test_counts_coverage_usage_and_scope() -> None:
    data = json.loads(json_report.render(sample_report()))
    assert data["counts"] == {
        "confirmed": 4,
        "refuted": 1,
        "unverified": 1,
        "filtered": 1,
        "suppressed": 1,
    }
    assert data["confirmed_by_severity"] == {"high": 1, "medium": 1, "low": 1, "info": 1}
    coverage = data["coverage"]
    assert {k: coverage[k] for k in ("concerns", "reviewed", "failed", "skipped")} == {
        "concerns": 5,
        "reviewed": 3,
        "failed": 1,
        "skipped": 1,
    }
    assert (coverage["covered"], coverage["uncovered"]) == (3, 2)
    assert coverage["changed_files"] == {
        "unit": "changed files",
        "total": 3,
        "covered": 2,
        "reused": 0,
        "uncovered": 1,
        "complete": False,
    }
    by_path = {f["path"]: f for f in coverage["files"]}
    assert by_path["app.py"]["concerns"] == [1] and by_path["app.py"]["status"] == "covered"
    assert by_path["worker.py"]["hunks"] == [[1, 4], [20, 28]]
    assert by_path["src/util, v2.py"]["status"] == "uncovered"
    assert by_path["src/util, v2.py"]["reason"].startswith("concern [4] failed")
    assert coverage["skipped_files"] == [
        {"path": "poetry.lock", "reason": "lock file or generated/vendored code"}
    ]
    assert data["incomplete"] is True
    assert data["scope_kind"] == "base"
    assert data["filter_mode"] == "added"
    assert data["usage"]["by_role"]["subagent"]["requests"] == 14
    assert data["usage"]["by_role"]["main"]["cache_read_tokens"] == 30_000
    assert data["usage"]["total"]["cost_usd"] == pytest.approx(1.9625)
    assert data["usage"]["agents_from_journal"]["subagent"] == 1
    assert data["concerns"][3] == {
        "index": 4,
        "concern": "Concurrency in worker.py: shared dict written from threads",
        "status": "failed",
        "covered": False,
        "error": "API overloaded (529) after 3 retries",
        "from_journal": False,
        "findings": 1,
        "summary": "",
    }


def test_output_is_deterministic_with_sorted_keys() -> None:
    first = json_report.render(sample_report())
    assert first == json_report.render(sample_report())

    def check(node: Any) -> None:
        if isinstance(node, dict):
            assert list(node) == sorted(node)
            for value in node.values():
                check(value)
        elif isinstance(node, list):
            for value in node:
                check(value)

    check(json.loads(first))
    assert first.endswith("}\n")


def test_a_path_that_is_not_utf8_is_its_real_name_in_json_and_quoted_for_people() -> None:
    from orch_review.reporters import sarif, terminal, workflow_commands

    report = sample_report()
    odd = replace(report.confirmed[0], path="caf\udce9.py")
    report = replace(report, findings=(odd,), snippets={})

    data = json.loads(json_report.render(report).encode("utf-8"))
    assert os.fsencode(data["findings"][0]["path"]) == b"caf\xe9.py"  # its real bytes
    uri = sarif.to_sarif(report)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert uri["artifactLocation"]["uri"] == "caf%E9.py"  # the file's bytes, percent-encoded
    assert '"caf\\351.py":6' in terminal.render(report).encode("utf-8").decode()
    assert 'file="caf\\351.py"' in workflow_commands.render(report).encode("utf-8").decode()
