"""Snippets: the flagged lines plus context, keyed by fingerprint."""

from __future__ import annotations

from dataclasses import replace

from orch_review.findings.records import Finding, Severity
from orch_review.findings.snippets import (
    MAX_FLAGGED_LINES,
    MAX_LINE_CHARS,
    Snippet,
    cap_line,
    cap_lines,
    collect_snippets,
    snippet_for,
)

LINES = [f"line {n}" for n in range(1, 41)]


def _finding(start: int, end: int, path: str = "a.py", fingerprint: str = "ab:1") -> Finding:
    return Finding(
        path=path,
        start_line=start,
        end_line=end,
        severity=Severity.LOW,
        category="correctness",
        claim="c",
        evidence="e",
        concern="k",
        fingerprint=fingerprint,
    )


def test_flagged_lines_with_context_each_side() -> None:
    snippet = snippet_for(_finding(10, 11), LINES)
    assert snippet == Snippet(8, tuple(LINES[7:13]))
    assert snippet is not None and snippet.end == 13


def test_context_is_clipped_at_both_ends_of_the_file() -> None:
    assert snippet_for(_finding(1, 1), LINES) == Snippet(1, ("line 1", "line 2", "line 3"))
    assert snippet_for(_finding(40, 40), LINES) == Snippet(38, ("line 38", "line 39", "line 40"))
    assert snippet_for(_finding(39, 45), LINES) == Snippet(37, tuple(LINES[36:]))


def test_a_long_range_is_cut_after_the_first_flagged_lines() -> None:
    snippet = snippet_for(_finding(5, 35), LINES, context=1)
    assert snippet is not None
    assert snippet.start == 4
    assert snippet.end == 5 + MAX_FLAGGED_LINES - 1 + 1


def test_no_snippet_past_the_end_of_the_file_or_before_line_one() -> None:
    assert snippet_for(_finding(41, 41), LINES) is None
    assert snippet_for(_finding(0, 0), LINES) is None
    assert snippet_for(_finding(1, 1), []) is None


def test_line_endings_are_dropped() -> None:
    snippet = snippet_for(_finding(1, 1), ["a = 1\r", "b = 2\r\n"], context=1)
    assert snippet == Snippet(1, ("a = 1", "b = 2"))


def test_collect_keys_by_fingerprint_and_skips_what_it_cannot_show() -> None:
    files = {"a.py": LINES}
    findings = [
        _finding(3, 3, fingerprint="aa:1"),
        _finding(5, 5, fingerprint=""),  # no fingerprint: nothing to key it by
        _finding(5, 5, path="gone.py", fingerprint="bb:1"),  # file not in the snapshot
        _finding(99, 99, fingerprint="cc:1"),  # past the end
        replace(_finding(20, 20), fingerprint="dd:1"),
    ]
    reads: list[str] = []

    def read(path: str) -> list[str] | None:
        reads.append(path)
        return files.get(path)

    snippets = collect_snippets(findings, read, context=0)

    assert snippets == {"aa:1": Snippet(3, ("line 3",)), "dd:1": Snippet(20, ("line 20",))}
    assert "gone.py" in reads


MINIFIED = "var a=1;" * 115_000  # 920,000 characters on one line


def test_a_long_line_is_cut_with_an_ellipsis_and_the_columns_shown() -> None:
    snippet = snippet_for(_finding(2, 2), ["short", MINIFIED, "after"])

    assert snippet is not None
    assert snippet.lines[0] == "short" and snippet.lines[2] == "after"
    cut = snippet.lines[1]
    assert cut.startswith(MINIFIED[:MAX_LINE_CHARS])
    assert cut.endswith(f"… [columns 1-{MAX_LINE_CHARS} of {len(MINIFIED):,}]")
    assert len(cut) < MAX_LINE_CHARS + 50


def test_the_cut_line_shows_the_flagged_column() -> None:
    line = "x" * 5000 + "eval(input())" + "y" * 5000
    finding = replace(_finding(1, 1), start_column=5001)

    snippet = snippet_for(finding, [line])

    assert snippet is not None
    assert "eval(input())" in snippet.lines[0]
    assert snippet.lines[0].startswith("…")
    assert len(snippet.lines[0]) < MAX_LINE_CHARS + 60


def test_lines_within_the_limit_are_left_alone() -> None:
    line = "z" * MAX_LINE_CHARS
    assert cap_line(line) == line
    assert cap_lines("a\n" + "b" * 10) == "a\n" + "b" * 10
    capped = cap_lines("claim\n" + MINIFIED).split("\n")
    assert capped[0] == "claim" and len(capped[1]) < 1100
