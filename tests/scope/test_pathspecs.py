"""Pathspecs as typed, as git takes them, and as a header shows them."""

from __future__ import annotations

from pathlib import Path

import pytest

from orch_review.scope.pathspecs import from_cwd, shown, shown_list


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (":(literal)new.py", "new.py"),
        (":(top,literal)src/a b.py", "src/a b.py"),
        (":(top)docs", "docs"),
        (":/docs", "docs"),
        (":(exclude)tests", ":(exclude)tests"),  # magic that changes the meaning stays
        (":!tests", ":!tests"),
        ("./:colon.py", ":colon.py"),
        ("src/app.py", "src/app.py"),
        (":(unclosed", ":(unclosed"),
    ],
)
def test_a_header_shows_paths_not_gits_magic(spec: str, expected: str) -> None:
    assert shown(spec) == expected


def test_a_long_list_is_shortened() -> None:
    specs = tuple(f":(literal)f{i}.py" for i in range(30))
    assert shown_list(specs) == "f0.py f1.py f2.py and 27 more"
    assert shown_list(specs[:3]) == "f0.py f1.py f2.py"


def test_typed_paths_are_made_relative_to_the_top(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert from_cwd(("a.py", ":!tests"), tmp_path / "src", tmp_path) == (
        "src/a.py",
        ":(top,exclude)src/tests",
    )
