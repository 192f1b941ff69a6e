"""The front page's picture (docs/assets/review.svg) is what a review prints today."""

from __future__ import annotations

import pytest

from bench import readme_svg
from tests.docs.reference import ROOT, page


@pytest.mark.slow
def test_the_committed_picture_is_what_a_review_prints_now() -> None:
    svg = readme_svg.render_svg()

    committed = readme_svg.OUT.read_text(encoding="utf-8")
    assert svg == committed, "docs/assets/review.svg is stale: run python -m bench.readme_svg"
    assert "SQL&#160;query&#160;built&#160;with&#160;an&#160;f-string" in svg
    assert "2&#160;of&#160;2&#160;changed&#160;files&#160;covered." in svg


def test_the_picture_holds_nothing_that_differs_between_runs() -> None:
    svg = readme_svg.OUT.read_text(encoding="utf-8")
    for volatile in ("wall&#160;time", "orch-review-svg-", "/tmp/", "$", str(ROOT)):
        assert volatile not in svg, volatile


def test_the_front_page_and_the_docs_show_the_picture() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "/docs/assets/review.svg)" in readme  # absolute: see test_readme.py
    assert "](assets/review.svg)" in page("index.md")
