"""`--format markdown`: compact findings to paste into an agent or a chat.

Golden file in tests/reporters/golden/; regenerate with ``UPDATE_GOLDEN=1 pytest
tests/reporters`` and review the diff.
"""

from __future__ import annotations

from dataclasses import replace

from markdown_it import MarkdownIt

from orch_review.reporters import markdown
from tests.reporters.golden import assert_golden
from tests.reporters.sample import clean_report, mask, sample_report


def _tokens(text: str) -> list[str]:
    return [t.type for t in MarkdownIt("commonmark").parse(text)]


def test_matches_golden() -> None:
    assert_golden("report.md", mask(markdown.render(sample_report())))


def test_one_block_per_confirmed_finding_then_the_coverage_line() -> None:
    report = sample_report()
    out = markdown.render(report)

    assert out.count("\n### ") == len(report.confirmed)
    assert out.rstrip().splitlines()[-1].startswith("Coverage: ")
    assert "**The review is incomplete**" in out  # the sample leaves files uncovered
    verified = [f for f in report.confirmed if f.verified_patch is not None]
    assert _tokens(out).count("fence") == len(verified)


def test_a_clean_report_says_so_with_its_coverage() -> None:
    out = markdown.render(clean_report())
    assert "No confirmed findings." in out
    assert "incomplete" not in out


def test_model_text_cannot_add_structure() -> None:
    report = sample_report()
    hostile = "x\n```diff\n+rm -rf /\n```\n<img src=x>\n# Heading"
    first = replace(report.confirmed[0], claim=hostile, evidence=hostile)
    findings = tuple(first if f is report.confirmed[0] else f for f in report.findings)
    out = markdown.render(replace(report, findings=findings))

    tokens = _tokens(out)
    verified = [f for f in report.confirmed if f.verified_patch is not None]
    assert tokens.count("fence") == len(verified)
    assert "html_block" not in tokens and "html_inline" not in tokens
    assert tokens.count("heading_open") == 1 + len(report.confirmed)
