"""Live progress: plain log lines off a terminal, a live table of running agents on one."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from orch_review.cli.progress import Progress, cut_words
from orch_review.events import AgentEvent


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _plain() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200), buffer


def _text(console: Console, renderable: object) -> str:
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def test_plain_log_lines_with_elapsed_turns_tokens_and_totals() -> None:
    console, buffer = _plain()
    clock = Clock()
    with Progress(console, clock=clock) as progress:
        progress(AgentEvent("s1", "subagent", "SQL injection\n in app.py", "started"))
        clock.now += 5
        progress(AgentEvent("s1", "subagent", "SQL injection in app.py", "turn", 2, 1500, "5s"))
        clock.now += 70
        progress(AgentEvent("s1", "subagent", "SQL injection in app.py", "done", detail="3 turns"))
        progress(AgentEvent("s2", "subagent", "Error handling", "cached"))
        progress(AgentEvent("v1", "verifier", "SQL injection in app.py", "started"))
        progress(AgentEvent("v1", "verifier", "SQL injection in app.py", "failed", detail="529"))

    assert buffer.getvalue().splitlines() == [
        "[subagent s1] started: SQL injection in app.py",
        "[subagent s1] done: SQL injection in app.py (1m15s; 2 turns, 1,500 tokens)"
        " — 0 running · subagents: 1 done",
        "[subagent s2] cached: Error handling — 0 running · subagents: 1 done, 1 cached",
        "[verifier v1] started: SQL injection in app.py",
        "[verifier v1] failed: SQL injection in app.py (0s; 529)"
        " — 0 running · subagents: 1 done, 1 cached · verifications: 1 failed",
    ]


def test_disabled_prints_nothing_but_still_counts() -> None:
    console, buffer = _plain()
    with Progress(console, enabled=False) as progress:
        progress(AgentEvent("s1", "subagent", "x", "started"))
        progress(AgentEvent("s1", "subagent", "x", "done"))
    assert buffer.getvalue() == ""
    assert progress.totals() == "0 running · subagents: 1 done"


def test_live_view_lists_running_agents_in_start_order() -> None:
    console, _ = _plain()
    clock = Clock()
    progress = Progress(console, enabled=False, clock=clock)
    progress(AgentEvent("main", "main", "main agent", "started"))
    progress(AgentEvent("s1", "subagent", "A concern " + "long " * 40, "started"))
    progress(AgentEvent("s1", "subagent", "ignored", "turn", 4, 12_345))
    clock.now += 42
    progress(AgentEvent("v2", "verifier", "Another concern", "started"))
    progress(AgentEvent("s9", "subagent", "Done one", "started"))
    progress(AgentEvent("s9", "subagent", "Done one", "done"))

    text = _text(console, progress.renderable())

    lines = [line.rstrip() for line in text.splitlines()]
    assert re.match(r"agent\s+concern\s+turns\s+tokens\s+elapsed", lines[0])
    assert lines[1].startswith("main ")
    assert re.search(r"s1 review\s+A concern long long .*…\s+4\s+12\.3k\s+42s$", lines[2])
    assert re.search(r"v2 verify\s+Another concern\s+0\s+0\s+0s$", lines[3])
    assert lines[4] == "3 running · subagents: 1 done"
    assert len(lines) == 5


def _busy_view(width: int) -> list[str]:
    """The live view of a busy review, rendered at ``width`` columns."""
    console = Console(file=io.StringIO(), width=width)
    clock = Clock()
    progress = Progress(console, enabled=False, clock=clock)
    progress(AgentEvent("main", "main", "main agent", "started"))
    for n in range(1, 13):
        progress(AgentEvent(f"s{n}", "subagent", f"Concern {n}: " + "word " * 30, "started"))
        progress(AgentEvent(f"s{n}", "subagent", "x", "turn", 14, 1_234_567))
    progress(AgentEvent("v12", "verifier", "Verify concern twelve", "started"))
    clock.now += 3599
    return [line.rstrip() for line in _text(console, progress.renderable()).splitlines()]


def test_the_live_view_fits_80_columns_shortening_only_the_concern() -> None:
    for width in (80, 120):
        lines = _busy_view(width)
        assert all(len(line) <= width for line in lines)
        assert re.match(r"agent\s+concern\s+turns\s+tokens\s+elapsed$", lines[0])
        row = next(line for line in lines if line.startswith("s12 review"))
        assert re.search(r"Concern 12: word .*…\s+14\s+1\.2M\s+59m59s$", row), row
        assert next(line for line in lines if line.startswith("v12 verify"))
        assert lines[-1] == "14 running"


def test_a_dumb_terminal_gets_log_lines_not_a_live_view() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=80, _environ={"TERM": "dumb"})
    with Progress(console) as progress:
        progress(AgentEvent("s1", "subagent", "A concern", "started"))
        progress(AgentEvent("s1", "subagent", "A concern", "done"))
    assert "[subagent s1] started: A concern" in buffer.getvalue()


def test_on_a_terminal_the_live_table_replaces_log_lines() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=100)
    with Progress(console) as progress:
        progress(AgentEvent("s1", "subagent", "A concern", "started"))
        progress(AgentEvent("s1", "subagent", "A concern", "done"))
    out = buffer.getvalue()
    assert "[subagent s1]" not in out  # no log lines: the (transient) live view was used


HOSTILE_TITLE = "[link=https://evil.test]Click[/link] \x1b]0;owned\x07\x1b[2J ##[stop-commands]t"


def test_subtask_titles_are_shown_as_text_never_obeyed() -> None:
    console, buffer = _plain()
    progress = Progress(console, enabled=True, clock=Clock())
    progress(AgentEvent("s1", "subagent", HOSTILE_TITLE, "started"))
    progress(AgentEvent("s1", "subagent", HOSTILE_TITLE, "failed", detail="\n::error::FORGED"))
    progress(AgentEvent("s2", "subagent", HOSTILE_TITLE, "started"))

    log = buffer.getvalue()
    live = _text(console, progress.renderable())
    for out in (log, live):
        assert "\x1b" not in out and "\x07" not in out and "##[" not in out
        assert not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert "[link=https://evil.test]Click[/link]" in log
    assert "[link=https://evil.test]Click" in live  # not read as markup


def test_an_end_told_twice_counts_once_and_a_restart_counts_again() -> None:
    console, buffer = _plain()
    with Progress(console) as progress:
        progress(AgentEvent("s1", "subagent", "x", "started"))
        progress(AgentEvent("s1", "subagent", "x", "failed", detail="turn limit"))
        progress(AgentEvent("s1", "subagent", "x", "failed", detail="turn limit"))
        assert progress.totals() == "0 running · subagents: 1 failed"
        progress(AgentEvent("s1", "subagent", "x", "started"))
        progress(AgentEvent("s1", "subagent", "x", "done"))
    assert progress.totals() == "0 running · subagents: 1 done, 1 failed"
    assert sum("failed:" in line for line in buffer.getvalue().splitlines()) == 1


def test_the_live_view_cuts_a_concern_between_words() -> None:
    console = Console(file=io.StringIO(), width=60)
    progress = Progress(console, enabled=False, clock=Clock())
    title = "Review pkg/mod_6.py for bugs and security issues in the request handlers"
    progress(AgentEvent("s1", "subagent", title, "started"))
    row = next(
        line
        for line in _text(console, progress.renderable()).splitlines()
        if line.startswith("s1 review")
    )
    shown = re.search(r"s1 review\s+(.*…)", row)
    assert shown is not None, row
    cut = shown.group(1)[:-1]
    assert title.startswith(cut) and title[len(cut)] == " ", row  # a whole word last


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        (
            "Review pkg/mod_6.py for bugs and security issues",
            44,
            "Review pkg/mod_6.py for bugs and security…",
        ),
        ("Look at calc.py: can ratio() divide by zero", 20, "Look at calc.py…"),
        ("short", 10, "short"),
        ("averyveryverylongword and more", 10, "averyvery…"),
    ],
)
def test_cut_words(text: str, limit: int, expected: str) -> None:
    assert cut_words(text, limit) == expected


def test_totals_show_the_cost_so_far_and_files_covered_and_never_go_back() -> None:
    console, buffer = _plain()
    with Progress(console, clock=Clock()) as progress:
        progress(AgentEvent("s1", "subagent", "a", "started", cost_usd=0.0))
        progress(
            AgentEvent(
                "s1", "subagent", "a", "done", cost_usd=0.25, files_covered=3, files_total=10
            )
        )
        # A slower thread's event, sent before the one above was counted: stale figures.
        progress(
            AgentEvent(
                "s2", "subagent", "b", "done", cost_usd=0.125, files_covered=1, files_total=10
            )
        )
        progress(
            AgentEvent(
                "s3", "subagent", "c", "done", cost_usd=1.5, files_covered=10, files_total=10
            )
        )

    lines = buffer.getvalue().splitlines()
    assert lines[1].endswith("subagents: 1 done · $0.25 so far · 3/10 files covered")
    assert lines[2].endswith("subagents: 2 done · $0.25 so far · 3/10 files covered")
    assert lines[3].endswith("subagents: 3 done · $1.50 so far · 10/10 files covered")
    assert "so far" in _text(console, progress.renderable())


def test_without_figures_the_totals_say_nothing_of_cost_or_coverage() -> None:
    console, buffer = _plain()
    with Progress(console, clock=Clock()) as progress:
        progress(AgentEvent("s1", "subagent", "a", "done"))
    assert buffer.getvalue().strip() == "[subagent s1] done: a — 0 running · subagents: 1 done"
