"""The registry: every output format behind one signature."""

from __future__ import annotations

import re

from orch_review.reporters import registry
from tests.reporters.sample import clean_report, sample_report


def test_every_format_renders_a_report_to_text() -> None:
    renderers = registry()
    assert sorted(renderers) == [
        "github", "gitlab", "json", "junit", "markdown", "rdjson", "sarif", "text"
    ]  # fmt: skip
    for name, render in renderers.items():
        for report in (sample_report(), clean_report()):
            out = render(report)
            assert isinstance(out, str), name
            # JUnit's XSD requires the time the report was made: the one volatile value.
            stamp = re.compile(r'timestamp="[^"]*"') if name == "junit" else re.compile("^$")
            again = render(report)
            assert stamp.sub("", out) == stamp.sub("", again), f"{name} is not deterministic"
