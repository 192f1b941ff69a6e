"""Validation of what the agents report: one spelling per path, known categories only."""

from __future__ import annotations

from typing import Any

import pytest

from orch_review.engine.agents.tools import (
    CATEGORIES,
    REPORT_FINDINGS_TOOL,
    ToolInputError,
    parse_findings,
    parse_verdicts,
)
from orch_review.findings.records import Severity

FILES = {"app/a.py": 10, "app/server.py": 40, ".git/config": 5}


def _finding(**overrides: Any) -> dict[str, Any]:
    return {
        "path": "app/a.py",
        "start_line": 2,
        "end_line": 3,
        "severity": "high",
        "category": "security",
        "claim": "a claim",
        "evidence": "app/a.py:2",
        **overrides,
    }


def _parse(*findings: dict[str, Any]) -> list[Any]:
    reported = parse_findings({"summary": "s", "findings": list(findings)}, "c", FILES.get)
    return list(reported.findings)


@pytest.mark.parametrize(
    ("given", "path"),
    [
        ("app/a.py", "app/a.py"),
        ("./app/a.py", "app/a.py"),
        ("app/./a.py", "app/a.py"),
        ("app//a.py", "app/a.py"),
        ("app/../app/server.py", "app/server.py"),
        (" app/a.py ", "app/a.py"),
    ],
)
def test_paths_are_reported_in_one_spelling(given: str, path: str) -> None:
    [finding] = _parse(_finding(path=given))
    assert finding.path == path


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("app/../.git/config", "inside .git"),
        (".git/config", "inside .git"),
        ("app/.git/../../.git/config", "inside .git"),
        ("/etc/passwd", "is absolute"),
        ("../outside.py", "not a file inside the repository"),
        ("app/../..", "not a file inside the repository"),
        ("app/..", "not a file inside the repository"),
        ("app/missing.py", "not a file under review"),
    ],
)
def test_paths_outside_the_tree_or_into_git_are_refused_with_a_reason(
    given: str, reason: str
) -> None:
    with pytest.raises(ToolInputError, match=f"finding 1: .*{reason}"):
        _parse(_finding(path=given))


@pytest.mark.parametrize(
    ("given", "severity"),
    [
        ("critical", Severity.HIGH),
        ("Blocker", Severity.HIGH),
        ("major", Severity.MEDIUM),
        ("minor", Severity.LOW),
        ("note", Severity.INFO),
        ("informational", Severity.INFO),
        ("MEDIUM", Severity.MEDIUM),
    ],
)
def test_severity_synonyms_are_mapped(given: str, severity: Severity) -> None:
    [finding] = _parse(_finding(severity=given))
    assert finding.severity is severity


def test_unknown_severity_is_refused_naming_it() -> None:
    with pytest.raises(ToolInputError, match="not `catastrophic`"):
        _parse(_finding(severity="catastrophic"))


@pytest.mark.parametrize(
    ("given", "category"),
    [
        ("security", "security"),
        ("Error Handling", "error-handling"),
        ("resource_leak", "resource-leak"),
        ("@org/team <!--", "other"),
        ("style", "other"),
        ("", "other"),
        (None, "other"),
    ],
)
def test_categories_outside_the_list_become_other(given: str | None, category: str) -> None:
    [finding] = _parse(_finding(category=given))
    assert finding.category == category
    assert finding.category in (*CATEGORIES, "other")


def test_the_schema_offers_other_as_a_category() -> None:
    items = REPORT_FINDINGS_TOOL["input_schema"]["properties"]["findings"]["items"]
    assert items["properties"]["category"]["enum"] == [*CATEGORIES, "other"]


def test_line_numbers_from_numeric_strings() -> None:
    [finding] = _parse(_finding(start_line="4", end_line=" 6 "))
    assert (finding.start_line, finding.end_line) == (4, 6)


def _verdict(number: object, verdict: str = "confirmed") -> dict[str, Any]:
    return {"finding": number, "verdict": verdict, "reason": "r", "evidence": "e"}


def test_verdicts_for_every_finding_are_accepted() -> None:
    verdicts = parse_verdicts({"verdicts": [_verdict(1), _verdict("2", "refuted")]}, 2)
    assert {n: v.confirmed for n, v in verdicts.items()} == {1: True, 2: False}


@pytest.mark.parametrize(
    ("verdicts", "message"),
    [
        ([_verdict(1), _verdict(3)], "there is no finding 3; you were given 2"),
        ([_verdict(0), _verdict(2)], "`finding` must be a positive finding number"),
        ([_verdict(1), _verdict(1)], "finding 1 has two verdicts"),
        ([_verdict(1)], "missing: 2"),
        ([_verdict(1), _verdict(2, "plausible")], "`verdict` must be `confirmed` or `refuted`"),
    ],
)
def test_verdicts_that_do_not_match_the_findings_are_refused(
    verdicts: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ToolInputError, match=message):
        parse_verdicts({"verdicts": verdicts}, 2)


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (True, True),
        (False, False),
        ("true", True),
        (" False ", False),
        ("TRUE", True),
        (None, None),
    ],
)
def test_a_verdict_judges_the_proposed_fix(given: object, kept: bool | None) -> None:
    judged = {**_verdict(1), "fix_ok": given, "fix_reason": " adds a network call "}
    verdicts = parse_verdicts({"verdicts": [judged, _verdict(2)]}, 2, fixes={1})
    assert verdicts[1].fix_ok is kept
    assert verdicts[1].fix_reason == "adds a network call"
    assert verdicts[2].fix_ok is None  # no fix proposed, none judged


def test_a_fix_judgement_is_optional() -> None:
    verdicts = parse_verdicts({"verdicts": [_verdict(1)]}, 1, fixes={1})
    assert (verdicts[1].fix_ok, verdicts[1].fix_reason) == (None, "")


@pytest.mark.parametrize("given", ["yes", "approved", 1, 0, [], {"ok": True}])
def test_an_odd_fix_judgement_is_refused_precisely(given: object) -> None:
    judged = {**_verdict(2), "fix_ok": given}
    with pytest.raises(ToolInputError, match=r"^finding 2: `fix_ok` must be true or false"):
        parse_verdicts({"verdicts": [_verdict(1), judged]}, 2, fixes={2})


def test_a_fix_judgement_of_a_finding_without_a_fix_is_ignored() -> None:
    judged = {**_verdict(1), "fix_ok": "approved", "fix_reason": 3}
    verdicts = parse_verdicts({"verdicts": [judged]}, 1, fixes=())
    assert (verdicts[1].fix_ok, verdicts[1].fix_reason) == (None, "")


def test_a_fix_reason_must_be_text() -> None:
    judged = {**_verdict(1), "fix_ok": False, "fix_reason": ["x"]}
    with pytest.raises(ToolInputError, match=r"^finding 1: `fix_reason` must be a string"):
        parse_verdicts({"verdicts": [judged]}, 1, fixes={1})


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("    x = 1\n    y = 2\n", "    x = 1\n    y = 2"),
        ("    x = 1\r\n    y = 2", "    x = 1\n    y = 2"),
        ("\n", ""),  # the lines become one blank line
        ("", None),
        (None, None),
    ],
    ids=["final-newline", "crlf", "one-blank-line", "empty", "absent"],
)
def test_a_replacement_is_kept_without_its_final_newline(
    given: str | None, kept: str | None
) -> None:
    (finding,) = _parse(_finding(replacement=given))
    assert finding.replacement == kept


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (["x = 1"], "must be a string"),
        ({"text": "x = 1"}, "must be a string"),
        ("x = 1\0", "NUL"),
        ("x" * 20_001, "at most 20,000"),
        ("x\n" * 401, "at most 400 lines"),
        ("a\rb", "bare carriage returns"),
    ],
    ids=["list", "object", "nul", "huge", "too-many-lines", "bare-cr"],
)
def test_an_unusable_replacement_is_refused_with_a_reason(given: object, says: str) -> None:
    with pytest.raises(ToolInputError, match="finding 1: `replacement`") as caught:
        _parse(_finding(replacement=given))
    assert says in str(caught.value)


def test_a_replacement_past_the_end_of_the_file_is_refused() -> None:
    # The end line alone is clamped to the file; a replacement meant for lines that do not
    # exist would replace fewer lines than its author thought.
    assert _parse(_finding(start_line=9, end_line=12))[0].end_line == 10
    with pytest.raises(ToolInputError, match="lines 9-12, but the file has 10 lines"):
        _parse(_finding(start_line=9, end_line=12, replacement="x = 1"))


def test_the_schema_offers_an_optional_replacement() -> None:
    item = REPORT_FINDINGS_TOOL["input_schema"]["properties"]["findings"]["items"]
    assert item["properties"]["replacement"]["type"] == "string"
    assert "replacement" not in item["required"]
