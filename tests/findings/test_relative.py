"""Paths as seen from a subdirectory, and the report copy the terminal shows from there."""

from __future__ import annotations

import pytest

from orch_review.findings.relative import seen_from, shown_path
from tests.reporters.sample import sample_report


@pytest.mark.parametrize(
    ("path", "prefix", "shown"),
    [
        ("app.py", "", "app.py"),
        ("app.py", ".", "app.py"),
        ("src/app.py", "src", "app.py"),
        ("src/deep/app.py", "src", "deep/app.py"),
        ("app.py", "docs", "../app.py"),
        ("lib/x.py", "src/deep", "../../lib/x.py"),
        ("src2/x.py", "src", "../src2/x.py"),
    ],
)
def test_a_path_is_shown_relative_to_the_directory(path: str, prefix: str, shown: str) -> None:
    assert shown_path(path, prefix) == shown


def test_the_report_seen_from_a_subdirectory_moves_every_path_and_nothing_else() -> None:
    report = sample_report()
    seen = seen_from(report, "src")

    assert seen_from(report, "") is report
    assert [f.path for f in seen.findings] == [shown_path(f.path, "src") for f in report.findings]
    assert [f.claim for f in seen.findings] == [f.claim for f in report.findings]
    assert report.coverage is not None and seen.coverage is not None
    assert [f.path for f in seen.coverage.files] == [
        shown_path(f.path, "src") for f in report.coverage.files
    ]
    assert [s.path for s in seen.coverage.skipped] == [
        shown_path(s.path, "src") for s in report.coverage.skipped
    ]
    assert seen.counts() == report.counts() and seen.incomplete == report.incomplete
