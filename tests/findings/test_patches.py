"""A replacement applied to the reviewed text: git's line numbers, the file's line endings."""

from __future__ import annotations

import pytest

from orch_review.findings.patches import PatchError, apply, decode, unified_diff


def test_the_lines_are_replaced_and_the_rest_kept() -> None:
    text = "a\nb\nc\nd\n"
    assert apply(text, 2, 3, "B\nC\nC2") == "a\nB\nC\nC2\nd\n"
    assert apply(text, 1, 1, "A") == "A\nb\nc\nd\n"


def test_crlf_endings_are_kept_and_a_missing_final_newline_stays_missing() -> None:
    assert apply("a\r\nb\r\nc", 2, 3, "x\ny") == "a\r\nx\r\ny"
    assert apply("a\nb", 2, 2, "B") == "a\nB"


def test_lines_are_split_on_newlines_only() -> None:
    # A form feed or a Unicode line separator does not start a line for git or GitHub.
    text = "a\x0cstill a\nb\u2028still b\nc\n"
    assert apply(text, 3, 3, "C") == "a\x0cstill a\nb\u2028still b\nC\n"


@pytest.mark.parametrize(
    ("start", "end", "replacement", "says"),
    [
        (4, 4, "x", "lines 4-4 are not in the reviewed file (it has 3 lines)"),
        (2, 5, "x", "lines 2-5 are not in the reviewed file"),
        (2, 2, "b", "does not change the lines"),
    ],
)
def test_what_does_not_apply_is_refused(start: int, end: int, replacement: str, says: str) -> None:
    with pytest.raises(PatchError, match=says.replace("(", r"\(").replace(")", r"\)")):
        apply("a\nb\nc\n", start, end, replacement)


def test_a_file_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(PatchError, match="not UTF-8"):
        decode(b"\xff\xfe")


def test_the_diff_shows_the_lines_removed_and_added() -> None:
    assert unified_diff("p/a.py", "a\nb\nc\n", 2, 3, "B") == (
        "--- a/p/a.py\n+++ b/p/a.py\n@@ -2,2 +2 @@\n-b\n-c\n+B\n"
    )
