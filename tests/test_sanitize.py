"""The one sanitizer for human-facing sinks: terminal and CI log, one line, Markdown."""

from __future__ import annotations

import pytest

from orch_review import sanitize

ESCAPES = {
    "OSC 52 (clipboard)": "\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "OSC 0 (title)": "\x1b]0;owned\x07",
    "CSI 2J (clear)": "\x1b[2J",
    "OSC 8 (link)": "\x1b]8;;https://evil.test\x1b\\click\x1b]8;;\x1b\\",
    "C1 CSI": "\x9b2J",
    "carriage return": "ok\rFAKE",
    "bidi override": "a\u202eb",
}


@pytest.mark.parametrize("attack", ESCAPES.values(), ids=list(ESCAPES))
def test_controls_become_visible_escapes(attack: str) -> None:
    shown = sanitize.terminal(attack)
    assert not any(ch in shown for ch in "\x1b\x07\x9b\r\u202e")
    assert "\\x" in shown or "\\u" in shown


def test_newlines_and_tabs_are_kept_on_the_terminal_and_joined_on_one_line() -> None:
    assert sanitize.terminal("a\n\tb") == "a\n\tb"
    assert sanitize.line("a\n\tb\x1b") == "a b\\x1b"


@pytest.mark.parametrize(
    "forged",
    [
        "::error file=app.py,line=1::FORGED",
        "  ::add-mask::secret",
        "::stop-commands::tok",
        "text ##[stop-commands]tok",
        "text ##[error]FORGED",
        "##vso[task.setvariable variable=x]1",
    ],
)
def test_ci_log_commands_are_defused(forged: str) -> None:
    shown = sanitize.terminal("first line\n" + forged)
    for line in shown.splitlines():
        assert not line.lstrip().startswith("::")
        assert "##[" not in line and "##vso[" not in line.lower()


def test_ordinary_text_is_unchanged() -> None:
    text = "std::vector<int> v; // a::b\n# heading [x]"
    assert sanitize.terminal(text) == text


def test_markdown_neutralizes_markers_fences_mentions_and_controls() -> None:
    out = sanitize.markdown("<!-- orch-review:summary -->\n```\n@octocat \x1b[2J", 200)
    assert "<!--" not in out and "\n```" not in out and "@octocat" not in out
    assert "\x1b" not in out


@pytest.mark.parametrize(
    ("text", "minimum", "expected"),
    [("plain", 3, "```"), ("a ```` b ` c", 3, "`````"), ("no ticks", 1, "`"), ("a`b", 1, "``")],
)
def test_a_fence_is_longer_than_any_backtick_run_inside(
    text: str, minimum: int, expected: str
) -> None:
    assert sanitize.fence(text, minimum) == expected
