"""Matching findings to expected issues: by location with a tolerance, else by the judge."""

from __future__ import annotations

from orch_review.eval.cases import ExpectedIssue
from orch_review.eval.matching import located_match, match_case, parse_matches
from orch_review.findings.records import Finding, Severity


def _finding(path: str, start: int, end: int | None = None) -> Finding:
    return Finding(path, start, end or start, Severity.HIGH, "correctness", "claim", "ev", "c")


ISSUE = ExpectedIssue("bug", "app.py", 10, 12)


def test_a_finding_matches_when_its_lines_overlap_within_the_tolerance() -> None:
    assert located_match(_finding("app.py", 11), ISSUE, 0)
    assert located_match(_finding("./app.py", 5, 10), ISSUE, 0)
    assert located_match(_finding("app.py", 15), ISSUE, 3)
    assert not located_match(_finding("app.py", 16), ISSUE, 3)
    assert located_match(_finding("app.py", 7), ISSUE, 3)
    assert not located_match(_finding("app.py", 6), ISSUE, 3)
    assert not located_match(_finding("other.py", 11), ISSUE, 3)


def test_match_case_counts_each_side() -> None:
    issues = [ISSUE, ExpectedIssue("other", "lib.py", 1)]
    findings = [_finding("app.py", 10), _finding("app.py", 12), _finding("lib.py", 40)]

    match = match_case(issues, findings, judge=None, tolerance=0)

    assert match.issue_found == (True, False)
    assert match.finding_matches == (True, True, False)


def test_without_a_judge_an_unlocated_issue_is_not_found() -> None:
    match = match_case([ExpectedIssue("vague")], [_finding("a.py", 1)], judge=None)
    assert match.issue_found == (False,)


def test_the_judge_cannot_invent_or_double_count_a_match() -> None:
    def call(matches: object) -> list[dict[str, object]]:
        return [{"type": "tool_use", "name": "report_matches", "input": {"matches": matches}}]

    raw = [
        {"issue": 1, "finding": 2, "reason": "same"},
        {"issue": 1, "finding": 1, "reason": "issue again"},
        {"issue": 2, "finding": 2, "reason": "finding again"},
        {"issue": 3, "finding": 9, "reason": "no such finding"},
        {"issue": 3, "finding": True, "reason": "not a number"},
        {"issue": 4, "finding": None, "reason": "none"},
        "garbage",
    ]
    assert parse_matches(call(raw), issues=4, findings=2) == [[1, 2]]
    assert parse_matches(call("not a list"), issues=1, findings=1) == []
    assert parse_matches([], issues=1, findings=1) == []
