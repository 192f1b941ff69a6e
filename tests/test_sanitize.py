"""The one sanitizer for human-facing sinks: terminal and CI log, one line, Markdown."""

from __future__ import annotations

import io
import random
import re
import string

import pytest

from orch_review import sanitize
from tests.markdown_structure import Construct, bare_links, constructs, text_of, visible

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
    assert constructs(out) == []


@pytest.mark.parametrize(
    ("text", "minimum", "expected"),
    [("plain", 3, "```"), ("a ```` b ` c", 3, "`````"), ("no ticks", 1, "`"), ("a`b", 1, "``")],
)
def test_a_fence_is_longer_than_any_backtick_run_inside(
    text: str, minimum: int, expected: str
) -> None:
    assert sanitize.fence(text, minimum) == expected


# -- Markdown: no construct of hostile text survives -----------------------------------------

MARKDOWN_ATTACKS = {
    "fence in a quote": "claim\n> ```suggestion\n> evil()\n> ```",
    "fence in a list item": "- ```suggestion\n  evil()\n  ```",
    "indented fence": "   ```suggestion\n   evil()\n   ```",
    "tilde fence": "~~~suggestion\nevil()\n~~~",
    "indented code": "a\n\n    indented code",
    "image beacon": '<img src="https://evil.test/b.png"> ![x](https://evil.test/x.png)',
    "link": "[click](https://evil.test) [ref][r]\n\n[r]: https://evil.test",
    "autolink": "<https://evil.test> <mail@evil.test>",
    "closing html": "</sub></details><details><summary>x</summary>",
    "html comment": "<!-- orch-review:summary --> hidden",
    "entity mention": "&#64;org/team &commat;org &amp;",
    "heading and rule": "# H\nSetext\n===\n---\n***\n___",
    "table": "| a | b |\n| - | - |\n| c | d |",
    "emphasis": "**bold** _it_ ~~gone~~ `code` $x^2$",
    "ordered list": "1. one\n2) two",
    "escapes": "\\` \\| \\\\ trailing \\",
    "code span as a fence": "```suggestion``` and ``` x ```",
    "code span with a pipe": "| `a | b` |",
}


def test_markdown_keeps_code_spans_and_nothing_inside_them_is_markdown() -> None:
    out = sanitize.markdown("use `<img src=x> @u #1` and ``a`b``, not `open")
    assert out == "use `<img src=x> @u #1` and ``a`b``, not \\`open"
    assert [c.detail for c in constructs(out)] == ["<img src=x> @u #1", "a`b"]


@pytest.mark.parametrize("attack", MARKDOWN_ATTACKS.values(), ids=list(MARKDOWN_ATTACKS))
def test_markdown_leaves_no_construct_and_shows_every_character(attack: str) -> None:
    out = sanitize.markdown(attack)
    assert {c.kind for c in constructs(out)} <= {"code_inline"}  # kept, see below
    assert text_of(out) == visible(attack)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ask @octocat and @org/team", "@\u200boctocat and @\u200borg/team"),
        ("fixes #123 and !45, GH-7", "#\u200b123 and !\u200b45, GH-\u200b7"),
        ("~bug %v1.0 $12 &7", "\\~\u200bbug %\u200bv1.0 \\$\u200b12 \\&\u200b7"),
        ("see https://evil.test and www.evil.test", "https\\://evil.test and www\\.evil.test"),
        ("mail@evil.test", "mail@\u200bevil.test"),
        ("math $`x`$ and $y$", "\\$\u200b`x`\\$\u200b and \\$\u200by\\$\u200b"),
        ("GitLab {+ added +} [- gone -]", "\\{\u200b+ added +} \\[\u200b- gone -\\]"),
        ("*iteration:1 [vulnerability:2]", "\\*\u200biteration:1 \\[\u200bvulnerability:2\\]"),
    ],
)
def test_markdown_breaks_mentions_references_and_bare_links(text: str, shown: str) -> None:
    out = sanitize.markdown(text)
    assert shown in out
    assert bare_links(out) == []


@pytest.mark.parametrize("action", ["/merge", "/approve", "/close", "/assign @me", "/label ~x"])
def test_no_line_is_a_gitlab_quick_action(action: str) -> None:
    out = sanitize.markdown(f"looks fine\n{action}\n  {action}\n\t{action}")
    # GitLab runs a quick action on a line of the raw text that starts with "/".
    assert not any(line.startswith("/") for line in out.splitlines())
    assert not any(line.lstrip().startswith("/") for line in out.splitlines())
    assert out.count(action.split()[0]) == 3


def test_markdown_keeps_ordinary_prose_readable() -> None:
    text = "calc.py:2 returns early (see ratio()); snake_case names stay, 50% of runs."
    assert sanitize.markdown(text) == text


def test_markdown_keeps_indentation_without_making_code() -> None:
    out = sanitize.markdown("def f():\n    return 1")
    assert out == "def f():\n\u00a0\u00a0\u00a0\u00a0return 1"
    assert constructs(out) == []


def test_fuzzed_markdown_never_parses_into_a_construct() -> None:
    rng = random.Random(1234)
    pieces = [
        *string.punctuation,
        *"ab1 \n\t",
        "```",
        "~~~",
        "    ",
        "<img src=x>",
        "</sub>",
        "[a](b)",
        "![a](b)",
        "https://x.test",
        "www.x.com",
        "&#64;",
        "@u",
        "`",
        "``",
        "` x `",
        "#1",
        "1.",
        "- ",
        "> ",
        "|-|",
        "\n\n",
    ]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        out = sanitize.markdown(text)
        assert {c.kind for c in constructs(out)} <= {"code_inline"}, (text, out)
        assert text_of(out) == visible(controls_free(text)), (text, out)
        assert bare_links(out) == [], (text, out)


def controls_free(text: str) -> str:
    return sanitize.controls(text.strip())


def test_markdown_code_is_one_code_span() -> None:
    name = "a`b ``c`` <!-- | @x\nd"
    span = sanitize.markdown_code(name, in_table=True)
    table = f"| f |\n| - |\n| {span} |"
    kinds = [c.kind for c in constructs(table) if c.kind == "code_inline"]
    assert kinds == ["code_inline"]
    (code,) = [c for c in constructs(table) if c.kind == "code_inline"]
    assert code.detail == "a`b ``c`` <!-- | @x d"
    assert constructs(sanitize.markdown_code("x|y"))[0].detail == "x|y"


def test_markdown_url_is_https_only_and_cannot_end_the_link() -> None:
    assert sanitize.markdown_url("javascript:alert(1)") == ""
    url = sanitize.markdown_url("https://github.test/a b)(<x>")
    assert url == "https://github.test/a%20b%29%28%3Cx%3E"
    assert constructs(f"[x]({url})") == [
        sanitize_link(url),
    ]


def sanitize_link(url: str) -> Construct:
    return Construct("link_open", url)


# -- the stream after layout ----------------------------------------------------------------


def _through_stream(chunks: list[str]) -> str:
    buffer = io.StringIO()
    stream = sanitize.CommandSafeStream(buffer)
    for chunk in chunks:
        assert stream.write(chunk) == len(chunk)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "chunks",
    [
        ["::error::x\n"],
        [":", ":error::x\n"],  # split between writes
        ["ok\n   \t::add-mask::s\n"],
        ["\x1b[1;31m", "::", "stop-commands::t\x1b[0m\n"],  # colour first
        ["\x1b]8;id=1;file:///a\x1b\\::warning::x\x1b]8;;\x1b\\\n"],  # inside a link
        ["done\r::error::x"],  # a carriage return starts a line too
        ["section_start:1:name\n", "section_", "end:1:name\n"],
    ],
)
def test_no_line_written_through_the_stream_starts_a_command(chunks: list[str]) -> None:
    out = _through_stream(chunks)
    plain = re.sub(r"\x1b\[[0-9;]*m|\x1b\][^\x1b]*\x1b\\", "", out)
    for line in re.split(r"[\r\n]", plain):
        assert not line.lstrip().startswith(("::", "section_start:", "section_end:")), out


def test_the_stream_defuses_legacy_commands_anywhere_and_keeps_the_rest() -> None:
    out = _through_stream(["a ##", "[error]x ##VSO[y std::vector\n", "\x1b[2K\x1b[1A: x\n"])
    assert out == "a ## [error]x ##VSO [y std::vector\n\x1b[2K\x1b[1A: x\n"


# -- exact output at the boundaries ----------------------------------------------------------


def test_controls_are_shown_by_their_code_point_and_commands_defused_exactly() -> None:
    text = "  ::warning::x\nok ##[error]y ##vso[z \u202e \x9b"
    assert sanitize.terminal(text) == "  : :warning::x\nok # #[error]y # #vso[z \\u202e \\x9b"


def test_a_fence_is_three_backticks_unless_the_text_needs_more() -> None:
    assert sanitize.fence("plain") == "```"
    assert sanitize.fence("a ```` b") == "`````"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("```x``` y", "\\`\\`\\`x\\`\\`\\` y"),  # three backticks could open a fence
        ("a ` ` b", "a \\` \\` b"),  # a span of blanks only is not kept
        ("`a|b`", "\\`a\\|b\\`"),  # a table cell would split inside the span
        ("``x `y`", "\\`\\`x `y`"),  # an unclosed run does not hide the span after it
        ("_a_", "\\_a\\_"),  # emphasis at the start of a line
        ("a\n\tb", "a\n\u00a0\u00a0\u00a0\u00a0b"),  # a tab is four columns
        ("a\n\u3000x", "a\n\u3000x"),  # only blanks and tabs are indentation
        ("Xylophone\naX\nb", "Xylophone\naX\nb"),
        ("x\u3000\ny", "x\u3000\ny"),
        ("x  \ny", "x\ny"),  # trailing blanks would be a hard line break
    ],
)
def test_markdown_shows_exactly(text: str, shown: str) -> None:
    assert sanitize.markdown(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("abcdef", "abcdef"),  # exactly at the limit: kept whole
        ("abcdefgh", "abcde…"),
        ("abcd   efgh", "abcd…"),  # no blank before the ellipsis
    ],
)
def test_markdown_is_cut_at_its_limit_with_an_ellipsis(text: str, shown: str) -> None:
    assert sanitize.markdown(text, limit=6) == shown
    assert sanitize.markdown_code(text, limit=6) == f"`{shown}`"


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("x", "`x`"),
        ("`a", "`` `a ``"),  # a backtick at an edge is padded so it is not the fence
        ("a`", "`` a` ``"),
        ("", "`  `"),
    ],
)
def test_markdown_code_fences_and_pads_only_as_needed(text: str, span: str) -> None:
    assert sanitize.markdown_code(text) == span


@pytest.mark.parametrize(
    "sequence",
    [
        "\x1b7",  # two characters: ESC and one more
        "\x1b[m",  # CSI with no parameter
        "\x1b[@",  # the lowest final byte
        "\x1b[1A",
        "\x1b[2~",  # the highest final byte
        "\x1b]\x07",  # an empty OSC
        "\x1b]0;title\x07",  # OSC ended by BEL
        "\x1b]8;;https://x.test\x1b\\",  # OSC ended by ESC \
        "\x1b]8;;file:///C:\\x\x1b\\",  # a backslash alone does not end an OSC
    ],
)
def test_an_escape_sequence_ends_where_the_terminal_ends_it(sequence: str) -> None:
    # What follows the sequence starts the line as the runner reads it: still defused.
    assert _through_stream([sequence + "::error::x\n"]) == sequence + ": :error::x\n"
    assert _through_stream([sequence, "::error::x\n"]) == sequence + ": :error::x\n"
