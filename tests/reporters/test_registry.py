"""The registry: every output format behind one signature."""

from __future__ import annotations

from orch_review.reporters import registry
from tests.reporters.sample import clean_report, sample_report


def test_every_format_renders_a_report_to_text() -> None:
    renderers = registry()
    assert sorted(renderers) == ["github", "json", "sarif", "text"]
    for name, render in renderers.items():
        for report in (sample_report(), clean_report()):
            out = render(report)
            assert isinstance(out, str), name
            assert out == render(report), f"{name} is not deterministic"
