"""The terminal report: golden plain text, colour, NO_COLOR, non-TTY, --quiet, width.

Golden files are in tests/reporters/golden/; regenerate with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/reporters`` and review the diff.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from orch_review.cli.consoles import shows_links
from orch_review.findings.records import PatchCheck, Status
from orch_review.findings.report import Report
from orch_review.findings.snippets import Snippet, collect_snippets
from orch_review.reporters.terminal import (
    print_report,
    render,
    render_compact,
    render_terminal,
)
from tests.reporters.golden import assert_golden
from tests.reporters.sample import clean_report, mask, sample_report

ANSI = re.compile(r"\x1b\[[0-9;]*m")
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;)")  # a foreground colour code
BOX = re.compile(r"[─━│┃┌┐└┘├┤┬┴┼╭╮╯╰❱]")


def test_plain_text_matches_golden() -> None:
    assert_golden("terminal.txt", mask(render(sample_report())))


def test_verbose_lists_every_finding_not_reported_with_why() -> None:
    out = render_terminal(sample_report(), color=False, width=100, verbose=True)
    assert_golden("terminal-verbose.txt", mask(out))
    assert "REFUTED    high   calc.py:3" in out
    assert "verifier (high): calc.py:2 returns early" in out
    assert "filtered: not on an added or changed line" in out


def test_default_output_shows_only_confirmed_findings() -> None:
    out = render(sample_report())
    findings_part = out.split("concerns reviewed")[0]
    for hidden in ("calc.py", "worker.py:15", "app.py:1 ", "worker.py:3 "):
        assert hidden not in findings_part
    assert "1 finding refuted by verifiers" in out
    assert "1 unverified, 1 filtered out (--filter-mode added), 1 suppressed" in out


def test_findings_are_grouped_by_severity_with_code_and_verdict() -> None:
    out = render(sample_report())
    headings = [line for line in out.splitlines() if re.fullmatch(r"[A-Z]+ \(\d+\)", line)]
    assert headings == ["HIGH (1)", "MEDIUM (1)", "LOW (1)", "INFO (1)"]
    assert "   > 6 |     cursor.execute(" in out
    assert "     5 |     cursor = db.cursor()" in out
    assert "verified (high confidence): Reproduced" in out
    assert "fix: Use a parameter" in out


def test_footer_reports_coverage_usage_wall_time_and_incomplete() -> None:
    out = render(sample_report())
    assert "3 of 5 concerns reviewed (3 fully verified), 1 failed, 1 skipped." in out
    assert "UNFINISHED [4] Concurrency in worker.py" in out
    assert "API overloaded (529) after 3 retries" in out
    assert "UNFINISHED [5] Performance of the report generation — agent cap" in out
    assert "subagent  3 (+1 journal)" in out
    assert "$1.96" in out
    assert "wall time 83.2s" in out
    assert "warning: main agent: stopped at the turn limit" in out
    assert "2 of 3 changed files covered." in out
    assert "NOT COVERED src/util, v2.py — concern [4] failed: API overloaded" in out
    assert "SKIPPED poetry.lock — lock file or generated/vendored code" in out
    assert out.rstrip().endswith(
        "The review is INCOMPLETE: 1 of 3 changed files not covered (src/util, v2.py), "
        "agent cap reached (8 agents)."
    )


def test_clean_review() -> None:
    out = render(clean_report())
    assert "No confirmed findings." in out
    assert "INCOMPLETE" not in out
    assert "Not shown" not in out  # nothing hidden: no line of zeros


def test_plain_output_has_no_escape_codes_boxes_or_wrapping() -> None:
    report = sample_report()
    long_claim = "word " * 60
    first = replace(report.findings[0], claim=long_claim.strip())
    report = replace(report, findings=(first, *report.findings[1:]))

    out = render_terminal(report, color=False, width=40)

    assert not ANSI.search(out)
    assert not BOX.search(out)
    assert "   " + long_claim.strip() + "\n" in out  # one line, however narrow the width


def test_colour_terminal_highlights_code_and_fits_the_width() -> None:
    out = render_terminal(sample_report(), color=True, width=72)

    assert COLOUR.search(out)
    assert "❱" in out  # rich Syntax marks the flagged lines
    plain = ANSI.sub("", out)
    assert max(len(line) for line in plain.splitlines()) <= 72
    assert "SQL query built with an f-string" in plain


def test_no_color_on_a_terminal_keeps_the_layout_but_drops_colour(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=90, color_system="standard")

    print_report(sample_report(), console)

    out = buffer.getvalue()
    assert not COLOUR.search(out)
    assert "─" in out  # still a terminal: rules and table borders
    assert "   > 6 |     cursor.execute(" in ANSI.sub("", out)  # plain code, no highlighting


def test_print_report_to_a_pipe_is_plain() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=90)  # a StringIO is not a terminal

    print_report(sample_report(), console)

    out = buffer.getvalue()
    assert not ANSI.search(out)
    assert not BOX.search(out)
    assert out == render_terminal(sample_report(), color=False, width=90)


def test_quiet_prints_only_the_findings_and_the_incomplete_line() -> None:
    out = render_terminal(sample_report(), color=False, width=100, quiet=True)
    assert_golden("terminal-quiet.txt", mask(out))
    assert "orch-review  " not in out
    assert "concerns reviewed" not in out
    assert "role" not in out
    assert "1. HIGH   app.py:6" in out
    assert render_terminal(clean_report(), color=False, width=100, quiet=True) == ""


def test_compact_is_one_line_per_finding_plus_the_first_evidence() -> None:
    out = render_compact(sample_report())
    assert_golden("terminal-compact.txt", mask(out))
    lines = out.splitlines()
    assert lines[0].startswith("HIGH app.py:6 [security] SQL query built")
    assert lines[1].startswith("  evidence: app.py:6 interpolates")
    assert lines[2].startswith("MEDIUM worker.py:9-11 [error-handling]")
    assert render_compact(clean_report()) == ""


def test_a_finding_without_a_snippet_is_shown_without_code() -> None:
    report = replace(sample_report(), snippets={})
    out = render(report)
    assert " | " not in out
    assert "1. HIGH   app.py:6  [security]" in out


def test_text_from_the_model_is_never_read_as_rich_markup() -> None:
    report = sample_report()
    first = replace(report.findings[0], claim="[bold]x[/bold] and [red]", evidence="a[/]b")
    report = replace(report, findings=(first, *report.findings[1:]), summary="[link=x]y")
    for color in (False, True):
        out = ANSI.sub("", render_terminal(report, color=color, width=100, verbose=True))
        assert "[bold]x[/bold] and [red]" in out
        assert "evidence: a[/]b" in out
        assert "[link=x]y" in out


HOSTILE = "\x1b]52;c;cHduZWQ=\x07\x1b]0;title\x07\x1b[2J\x1b]8;;https://evil.test\x07link"


def _hostile_report() -> Report:
    report = sample_report()
    first = report.findings[0]
    forged = "\n::error file=app.py,line=1::FORGED\n::add-mask::x ##[stop-commands]tok"
    first = replace(
        first,
        claim="claim " + HOSTILE + forged,
        evidence="evidence " + HOSTILE + forged,
        suggestion="fix " + HOSTILE + forged,
        category="sec" + HOSTILE,
        path="app\x1b[2J.py",
    )
    assert first.fingerprint in report.snippets
    start, lines = report.snippets[first.fingerprint]
    snippets = {**report.snippets, first.fingerprint: Snippet(start, (HOSTILE, *lines[1:]))}
    return replace(
        report,
        findings=(first, *report.findings[1:]),
        summary="summary " + HOSTILE + forged,
        snippets=snippets,
        warnings=("warning " + HOSTILE,),
    )


@pytest.mark.parametrize("color", [False, True], ids=["plain", "colour"])
def test_escape_sequences_and_ci_commands_from_the_review_are_defused(color: bool) -> None:
    report = _hostile_report()
    outputs = [render_terminal(report, color=color, width=100, verbose=True)]
    outputs.append(render_compact(report))
    for out in outputs:
        # Only rich's own colour codes (SGR, "ESC [ ... m") may remain.
        assert not re.search(r"\x1b(?!\[[0-9;]*m)", out), repr(out)
        assert "\x07" not in out
        for line in out.splitlines():
            assert not ANSI.sub("", line).lstrip().startswith("::"), line
            assert "##[" not in line, line
    assert "\\x1b]52;c;cHduZWQ=" in ANSI.sub("", outputs[0])  # shown, not obeyed


def test_a_finding_in_a_minified_file_prints_no_huge_line() -> None:
    minified = "var a=1;" * 115_000
    report = sample_report()
    finding = replace(
        report.confirmed[0], start_line=2, end_line=2, evidence=f"line 2 is `{minified}`"
    )
    lines = {"app.py": ["// bundle", minified, "// end"]}
    report = replace(report, findings=(finding,), snippets=collect_snippets([finding], lines.get))

    plain = render(report)
    assert "columns 1-200 of 920,000" in plain
    assert max(len(line) for line in plain.splitlines()) < 1100
    # On a terminal rich wraps the text to the width: the cut keeps it to a few lines.
    coloured = ANSI.sub("", render_terminal(report, color=True, width=100))
    assert len(coloured) < 6000


def _capped(report: Report, files: int) -> Report:
    """``report`` with ``files`` changed files left uncovered by an agent cap."""
    from orch_review.findings.coverage import LedgerFile, build_coverage

    ledger = [LedgerFile(f"src/m{n:03d}.py", 10) for n in range(files)]
    reasons = {f.path: "agent cap reached (8 agents)" for f in ledger}
    coverage = build_coverage(ledger, covered_by={}, reasons=reasons)
    return replace(report, coverage=coverage, findings=())


def test_an_incomplete_review_says_so_at_the_top_and_groups_what_was_not_covered() -> None:
    out = render(_capped(sample_report(), 150))
    lines = out.splitlines()

    assert lines[1].startswith("INCOMPLETE: 150 of 150 changed files not covered")
    assert "No confirmed findings in what was covered." in out
    assert "No confirmed findings." not in out
    uncovered = [ln for ln in lines if ln.startswith("NOT COVERED src/") or "150 files" in ln]
    assert uncovered == [
        "NOT COVERED 150 files — agent cap reached (8 agents): src/m000.py, src/m001.py, "
        "src/m002.py, … (--verbose lists all 150)"
    ]
    verbose = render_terminal(_capped(sample_report(), 150), color=False, width=100, verbose=True)
    assert sum(ln.startswith("NOT COVERED src/m") for ln in verbose.splitlines()) == 150


def test_the_reviewers_summary_is_labelled_after_the_findings_and_states_no_counts() -> None:
    summary = "Looked at the SQL layer. Found 0 confirmed issues. Error paths look careful."
    out = render(replace(_only_confirmed(sample_report()), summary=summary))

    label = out.index("Reviewer's summary")
    assert out.index("HIGH (1)") < label
    assert "Looked at the SQL layer. Error paths look careful." in out[label:]
    assert "0 confirmed issues" not in out


def _only_confirmed(report: Report) -> Report:
    return replace(report, findings=tuple(report.confirmed))


def test_the_reviewers_summary_is_withheld_once_a_finding_was_dropped() -> None:
    report = sample_report()
    [refuted, *_] = report.with_status(Status.REFUTED)
    summary = f"The main problem: {refuted.claim} Also looked at the parser."
    out = render(replace(report, summary=summary))

    assert refuted.claim not in out
    assert "Also looked at the parser" not in out  # however it is worded: none of it is shown
    dropped = len(report.findings) - len(report.confirmed)
    assert f"Reviewer's summary not shown: it was written before {dropped} findings were" in out
    # --verbose lists what was dropped, and the summary beside it, labelled as such.
    verbose = render_terminal(
        replace(report, summary=summary), color=False, width=100, verbose=True
    )
    assert "Reviewer's summary (unverified; it may name findings under Not reported)" in verbose
    assert "Also looked at the parser" in verbose


def test_a_patch_is_shown_sanitized_and_only_when_verified() -> None:
    report = sample_report()
    hostile = '    cursor.execute("?", (name,))  # \x1b]0;owned\x07\n::error::forged'
    first = replace(report.findings[0], replacement=hostile)
    out = render(replace(report, findings=(first, *report.findings[1:])))
    assert "\x1b" not in out and "\\x1b]0;owned\\x07" in out
    assert "   +::error::forged" in out  # a diff line: never a workflow command
    assert not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert '-    cursor.execute(f"SELECT' in out
    unverified = replace(first, patch_check=PatchCheck(False, "the check failed"))
    out = render(replace(report, findings=(unverified, *report.findings[1:])))
    assert "patch (verified" not in out and 'cursor.execute("?"' not in out


def test_the_reviewers_summary_is_indented_as_one_block() -> None:
    report = replace(clean_report(), summary="First line.\n\n  Second paragraph.")
    lines = render(report).splitlines()
    at = lines.index("Reviewer's summary (unverified; the findings above are what was verified)")
    assert lines[at + 1 : at + 4] == ["   First line.", "", "     Second paragraph."]


def test_a_long_concern_title_is_cut_between_words() -> None:
    report = sample_report()
    long_title = "Review each function of the parser for " + "unbounded recursion " * 8
    concerns = [replace(c, concern=long_title) for c in report.concerns]
    out = render(replace(report, concerns=concerns))
    unfinished = [ln for ln in out.splitlines() if ln.startswith("UNFINISHED ")]
    assert unfinished and all("recursion…" in ln or "recursion …" in ln for ln in unfinished)


def test_orch_reviews_own_notes_stand_apart_from_the_reviewers_summary() -> None:
    note = "orch-review reviewed 2 files no concern had covered, in a sweep."
    report = replace(
        _only_confirmed(sample_report()), notes=(note,), summary="The parser needs a second look."
    )
    lines = render(report).splitlines()
    summary_at = next(i for i, ln in enumerate(lines) if ln.startswith("Reviewer's summary"))
    assert lines.index(note) < summary_at  # with the coverage, not in the unverified summary


# -- layout at 80 columns: wrapped patches, cut code, links --------------------------------------


def _terminal(report: Report, *, color: bool, width: int, link_root: Path | None = None) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=True,
        color_system="standard" if color else None,
        no_color=not color,
        legacy_windows=False,
    )
    print_report(report, console, link_root=link_root)
    return buffer.getvalue()


@pytest.mark.parametrize("color", [True, False], ids=["colour", "no-colour"])
@pytest.mark.parametrize("width", [60, 80])
def test_wrapped_patch_lines_keep_their_side_and_cut_code_says_so(color: bool, width: int) -> None:
    report = sample_report()
    first = report.findings[0]
    long_new = '    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))  # ' + "x" * 90
    report = replace(report, findings=(replace(first, replacement=long_new), *report.findings[1:]))

    plain = ANSI.sub("", _terminal(report, color=color, width=width)).splitlines()

    assert max(len(line) for line in plain) <= width
    start = next(i for i, line in enumerate(plain) if line.strip().startswith("@@ -6"))
    patch = []
    for line in plain[start + 1 :]:
        if not line.strip():
            break
        patch.append(line[3:])
    # The old line and the long new one are both wrapped; every piece keeps its marker.
    assert len(patch) >= 4, patch
    assert all(line[:1] in "+-" for line in patch), patch
    assert "".join(line[1:] for line in patch if line[:1] == "+").rstrip() == long_new
    code = next(line for line in plain if re.search(r"6 \|? +cursor\.execute\(f", line))
    if width == 60:  # the flagged code line does not fit: it is cut, and says so
        assert code.rstrip().endswith("…"), code
    else:
        assert code.rstrip().endswith("WHERE name = '{name}'\")"), code


def test_a_location_is_a_percent_encoded_file_link_only_when_asked() -> None:
    report = sample_report()
    hostile = "evil\x1b]8;;https://x.test\x07 name \udcff.py"
    first = replace(report.findings[0], path=hostile)
    report = replace(report, findings=(first, *report.findings[1:]))
    root = Path("/work/repo dir")

    linked = _terminal(report, color=True, width=100, link_root=root)
    links = re.findall(r"\x1b\]8;[^;]*;([^\x1b\x07]*)(?:\x1b\\|\x07)", linked)

    expected = "file:///work/repo%20dir/evil%1B%5D8%3B%3Bhttps%3A/x.test%07%20name%20%FF.py"
    assert expected in links
    assert all(re.fullmatch(r"(file://[A-Za-z0-9%/._~-]*)?", link) for link in links), links
    assert "\x1b]8;" not in _terminal(report, color=True, width=100)
    # A pipe never gets one, whatever it is asked.
    piped = io.StringIO()
    print_report(report, Console(file=piped, width=100), link_root=root)
    assert "\x1b]8;" not in piped.getvalue()


def test_links_only_on_a_real_terminal_outside_ci() -> None:
    leader, follower = os.openpty()
    try:
        with open(follower, "w", closefd=False) as tty, io.StringIO() as pipe:
            on_tty = Console(file=tty)
            assert shows_links(on_tty, {})
            assert not shows_links(on_tty, {"CI": "true"})
            assert not shows_links(on_tty, {"GITHUB_ACTIONS": "true"})
            forced = Console(file=pipe, force_terminal=True)  # FORCE_COLOR on a pipe
            assert forced.is_terminal and not shows_links(forced, {})
            assert not shows_links(Console(file=tty, _environ={"TERM": "dumb"}), {})
    finally:
        os.close(follower)
        os.close(leader)
