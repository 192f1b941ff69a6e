"""Case files are hostile data: validated line by line, revisions kept away from git options."""

from __future__ import annotations

import json

import pytest

from orch_review.errors import UsageError
from orch_review.eval.cases import Case, ExpectedIssue, dump_cases, parse_cases
from orch_review.findings.records import Severity

GOOD = {
    "id": "c1",
    "repo": "../app",
    "base": "main",
    "head": "feature",
    "expected": [
        {"path": "app/x.py", "line": 12, "description": "bug", "severity": "high"},
        {"path": "app/y.py", "line": [3, 5], "description": "another"},
        {"description": "somewhere"},
    ],
}


def _parse(*cases: object) -> list[Case]:
    return list(parse_cases([json.dumps(c) for c in cases], "cases.jsonl"))


def test_a_case_with_located_and_described_issues() -> None:
    (case,) = _parse(GOOD)
    assert case.expected == (
        ExpectedIssue("bug", "app/x.py", 12, 12, Severity.HIGH),
        ExpectedIssue("another", "app/y.py", 3, 5, None),
        ExpectedIssue("somewhere"),
    )
    assert [e.located for e in case.expected] == [True, True, False]
    assert not case.clean


def test_cases_round_trip_through_their_jsonl_form() -> None:
    cases = parse_cases([json.dumps(GOOD), json.dumps({**GOOD, "id": "c2", "expected": []})], "f")
    assert parse_cases(list(dump_cases(cases)), "again") == cases
    assert cases[1].clean


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"base": "--upload-pack=touch /tmp/pwned"}, "`base` is not a revision git would accept"),
        ({"head": "-c"}, "`head` is not a revision git would accept"),
        ({"repo": "--config=core.sshCommand=x"}, "`repo` may not start with `-`"),
        ({"id": "../../etc"}, "`id` must be a short identifier"),
        ({"expected": None}, "`expected` must be a list"),
        ({"extra": 1}, "unknown field(s) extra"),
        ({"expected": [{"description": "x", "line": 3}]}, "a `line` needs a `path`"),
        ({"expected": [{"description": "x", "path": "/etc/passwd"}]}, "must be relative"),
        ({"expected": [{"description": "x", "path": "a.py", "line": [5, 2]}]}, "ends before"),
        ({"expected": [{"description": "x", "severity": "critical"}]}, "severity must be one of"),
        ({"expected": [{"description": ""}]}, "description must be a non-empty string"),
    ],
)
def test_malformed_cases_are_refused_with_the_line_named(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        _parse({**GOOD, **change})
    assert str(caught.value).startswith("cases.jsonl:1")
    assert message in str(caught.value)


def test_duplicate_ids_and_bad_json_are_refused() -> None:
    with pytest.raises(UsageError, match=r"cases\.jsonl:2: case id `c1` is used twice"):
        _parse(GOOD, GOOD)
    with pytest.raises(UsageError, match=r"cases\.jsonl:2: not valid JSON"):
        parse_cases(["# a comment", "{"], "cases.jsonl")
    with pytest.raises(UsageError, match="holds no case"):
        parse_cases(["", "# nothing"], "cases.jsonl")
