"""GitHub workflow-command annotations: golden output, escaping, GitHub's display limits.

Golden files are in tests/reporters/golden/; regenerate with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/reporters`` and review the diff.
"""

from __future__ import annotations

from dataclasses import replace

from orch_review.findings.records import Severity
from orch_review.reporters import workflow_commands
from tests.reporters.golden import assert_golden
from tests.reporters.sample import clean_report, mask, sample_report


def test_matches_golden() -> None:
    assert_golden("annotations.txt", mask(workflow_commands.render(sample_report())))


def test_escaping_follows_the_actions_toolkit() -> None:
    assert workflow_commands.escape_data("100%\r\nnext: a, b") == "100%25%0D%0Anext: a, b"
    assert workflow_commands.escape_property("a:b, 100%\n") == "a%3Ab%2C 100%25%0A"


def test_one_annotation_per_confirmed_finding_by_severity() -> None:
    lines = workflow_commands.render(sample_report()).splitlines()
    assert lines[0].startswith("::warning title=orch-review%3A incomplete review::")
    findings, warnings = lines[1:-1], lines[-1:]
    assert warnings == [
        "::warning title=orch-review%3A warning::main agent: stopped at the turn limit (30 turns)"
    ]
    assert [line.split(" ", 1)[0] for line in findings] == [
        "::error",
        "::warning",
        "::notice",
        "::notice",
    ]
    assert findings[0].startswith(
        "::error file=app.py,line=6,endLine=6,col=5,title=orch-review%3A security (high)::"
        "SQL query built with an f-string"
    )
    assert " Evidence: app.py:6 interpolates" in findings[0]
    assert "file=src/util%2C v2.py,line=2,endLine=2,title=" in findings[2]
    assert "99.9%25 shows" in findings[2]
    assert "%0Aworker.py:11 uses" in findings[1]
    assert all("\n" not in line and "\r" not in line for line in lines)


def test_a_clean_review_prints_nothing() -> None:
    assert workflow_commands.render(clean_report()) == ""


def test_a_note_says_how_many_github_will_not_display() -> None:
    high = sample_report().confirmed[0]
    many = tuple(
        replace(high, start_line=n, end_line=n, fingerprint=f"ab:{n}") for n in range(1, 13)
    )
    low = tuple(
        replace(high, severity=Severity.LOW, start_line=n, end_line=n, fingerprint=f"cd:{n}")
        for n in range(1, 4)
    )
    report = replace(clean_report(), findings=many + low)

    lines = workflow_commands.render(report).splitlines()

    assert len(lines) == 12 + 3 + 1
    assert lines[-1].startswith("::notice title=orch-review%3A more findings::2 of 15 ")
    assert "the full list is in the job summary and the SARIF report" in lines[-1]


def test_hidden_count_applies_per_level_and_per_job() -> None:
    assert workflow_commands.hidden_count(["error"] * 10 + ["warning"] * 10 + ["notice"] * 10) == 0
    assert workflow_commands.hidden_count(["error"] * 11) == 1
    assert workflow_commands.hidden_count(["error"] * 15 + ["notice"] * 3) == 5


def test_annotations_show_escape_sequences_instead_of_carrying_them() -> None:
    report = sample_report()
    first = replace(report.findings[0], claim="x \x1b]0;owned\x07", category="c\x1b[2J")
    out = workflow_commands.render(replace(report, findings=(first, *report.findings[1:])))
    assert "\x1b" not in out and "\x07" not in out
    assert "x \\x1b]0;owned\\x07" in out and "c\\x1b[2J" in out


def test_evidence_quoting_a_minified_line_is_capped() -> None:
    minified = "var a=1;" * 115_000
    finding = replace(sample_report().confirmed[0], evidence=f"line 1 is `{minified}`")

    line = workflow_commands.annotation(finding)

    assert len(line) < 1500
    assert "of 920,0" in line
