"""The summary comment and the job summary: golden markdown, escaping, limits.

Golden files are in tests/hosts/golden/; regenerate with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/hosts/test_summary.py`` and review the diff.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from orch_review.config.learnings import Learning
from orch_review.findings.usage import CostRange
from orch_review.hosts.dismissals import Dismissal
from orch_review.hosts.markers import SUMMARY_MARKER
from orch_review.hosts.posted import PostedComment, ThreadChange
from orch_review.hosts.summary import MAX_ROWS, Placement, cell, code, fit_comment, render
from tests.golden import assert_matches
from tests.hosts.github.test_comments import finding
from tests.reporters.sample import clean_report, sample_report

GOLDEN = Path(__file__).parent / "golden"


def assert_golden(name: str, actual: str) -> None:
    assert_matches(GOLDEN, name, actual)


def sample_placement() -> Placement:
    first, *rest = sample_report().confirmed
    return Placement(
        inline=(first,),
        not_inline=tuple((f, "lines outside the diff") for f in rest),
        already_posted=1,
        threads=(
            ThreadChange(
                PostedComment("gone", "old.py", 4, "https://github.test/o/r/pull/7#r1", 1),
                "resolved",
            ),
            ThreadChange(
                PostedComment("moot", "lib.py", 9, "https://github.test/o/r/pull/7#r2", 2),
                "stuck",
                "the token may not resolve review threads",
            ),
        ),
        dismissed=(
            Dismissal("moot", "a `false` alarm @you", "octo", "2026-11-30", "lib.py", None, ""),
        ),
        to_learn=(Learning("a ```false``` alarm\n```", "octo", "2026-11-30", "0" * 32 + ":1"),),
    )


def test_pr_comment_matches_golden() -> None:
    text = render(sample_report(), sample_placement(), head_sha="0123456789abcdef")
    assert text.startswith(SUMMARY_MARKER + "\n## orch-review for `0123456789ab`")
    assert_golden("summary-comment.md", text)


def test_job_summary_lists_every_finding_and_the_notes() -> None:
    text = render(
        sample_report(),
        sample_placement(),
        marker=False,
        notes=["Not posted on the pull request: the token may not comment"],
        all_findings=True,
    )
    assert SUMMARY_MARKER not in text
    assert_golden("job-summary.md", text)


def test_clean_report() -> None:
    text = render(clean_report(), Placement())
    assert "**No confirmed findings.**" in text
    assert "incomplete" not in text and "Refuted" not in text and "### Findings" not in text


def test_cells_stay_on_one_line_and_escape_pipes() -> None:
    assert cell("a | b\n\nc") == "a \\| b c"
    assert cell("x" * 500).endswith("…") and len(cell("x" * 500)) == 300


def test_long_tables_are_cut() -> None:
    many = [finding("a.py", i, fp=f"f{i}") for i in range(1, MAX_ROWS + 6)]
    report = replace(clean_report(), findings=tuple(many))
    text = render(report, Placement.none_inline(report, "summary mode"))
    assert text.count("| high | `a.py:") == MAX_ROWS
    assert "…and 5 more" in text


def test_fit_comment_cuts_at_a_line_boundary() -> None:
    text = "".join(f"line {i}\n" for i in range(100))
    assert fit_comment(text, 10_000) == text
    cut = fit_comment(text, 200)
    assert len(cut) <= 200 and cut.endswith("the job summary and the JSON report have it all.\n")
    kept = cut.split("\n\n…")[0].splitlines()
    assert kept == [f"line {i}" for i in range(len(kept))]


def test_a_file_name_cannot_close_its_code_span() -> None:
    assert code("a`b.py") == "``a`b.py``"
    assert code("`x`") == "`` `x` ``"
    assert code("plain.py") == "`plain.py`"


def test_a_name_that_is_not_utf8_is_shown_as_git_quotes_it_and_the_body_can_be_sent() -> None:
    odd = "bad\udcff.py"  # the byte 0xff, as git's file list decodes it
    report = sample_report()
    first = replace(report.confirmed[0], path=odd)
    findings = tuple(first if f is report.confirmed[0] else f for f in report.findings)

    odd_report = replace(report, findings=findings)
    body = render(odd_report, Placement.none_inline(odd_report, "not in the diff"))

    body.encode("utf-8")  # a comment body the API can take
    assert '"bad\\377.py' in body
    assert code(odd) == '`"bad\\377.py"`'


def test_the_guidance_files_read_are_listed_as_data() -> None:
    from orch_review.findings.report import GuidanceFile

    report = replace(
        clean_report(),
        guidance_files=(
            GuidanceFile("AGENTS.md"),
            GuidanceFile(".github/instructions/py.instructions.md", True, ("src/**/*.py",)),
            GuidanceFile("x/<img src=y>|CLAUDE.md"),
        ),
    )
    text = render(report, Placement())
    line = next(line for line in text.splitlines() if "Review guidance read" in line)
    assert "`AGENTS.md`, `.github/instructions/py.instructions.md` (cut)" in line
    assert "`x/<img src=y>|CLAUDE.md`" in line  # a code span: shown, never rendered
    assert "Review guidance read" not in render(clean_report(), Placement())


def test_the_summary_shows_the_estimate_against_the_actual_cost() -> None:
    report = sample_report()  # it cost $1.96
    lines = {
        estimate: next(
            line
            for line in render(
                replace(report, estimate=estimate), sample_placement(), head_sha="0" * 40
            ).splitlines()
            if line.startswith("Estimated before the review")
        )
        for estimate in (CostRange(1.0, 3.0), CostRange(0.25, 0.98), CostRange(3.92, 8.0))
    }
    assert list(lines.values()) == [
        "Estimated before the review: $1.00-$3.00; actual $1.96, within it.",
        "Estimated before the review: $0.25-$0.98; actual $1.96, above it (2.0x the high end).",
        "Estimated before the review: $3.92-$8.00; actual $1.96, below it (0.5x the low end).",
    ]
    assert "Estimated before the review" not in render(report, sample_placement(), head_sha="0")
    said = render(
        replace(report, estimate=CostRange(1.0, 3.0, "calibrated on X; budget for the high end")),
        sample_placement(),
        head_sha="0" * 40,
    )
    assert (
        "Estimated before the review: $1.00-$3.00; actual $1.96, within it. The estimate is "
        "calibrated on X; budget for the high end." in said
    )
