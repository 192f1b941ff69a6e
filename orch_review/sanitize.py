"""Text that came from a repository or a model, made safe for the sink that shows it.

Everything a review prints about the code (claims, evidence, fixes, verdicts, summaries,
subtask titles, categories, file names, code lines) is hostile data: a source line or a
file name can hold terminal escape sequences, and a model can be steered into writing
anything. One function per kind of sink, applied where the text is rendered:

- :func:`terminal`: a terminal or a CI log. Control characters (C0 but newline and tab,
  DEL, C1, so ESC and every escape sequence) and the bidirectional overrides of "Trojan
  Source" are shown as visible escapes (``\\x1b``, ``\\u202e``); lines that a CI runner would
  execute as a command (``::error ...``, ``::add-mask::``, ``::stop-commands::``,
  ``##[...]``, ``##vso[...]``) are defused. This is done in every log, not only when
  ``GITHUB_ACTIONS`` is set: a report piped through a script or printed by a container
  step reaches the runner's log all the same.
- :func:`line`: the same, on one line (newlines and runs of blanks become one space).
- :func:`markdown`: a Markdown comment or job summary (GitHub now, GitLab too): no construct
  of the text survives as Markdown structure but its inline code spans (inside which nothing
  is Markdown). What opens a construct anywhere in a line, and what starts a block at the
  start of a line, is backslash-escaped (so no fence, quote, list, heading, table, HTML,
  comment, image, link, autolink, entity or emphasis, at any indentation or inside any
  container); leading blanks become no-break spaces (no indented code); a zero-width space
  breaks what a host links or obeys in the rendered text: ``@user`` and ``@org/team``
  mentions, ``#123``, ``!45``, ``~label``, ``%milestone``, ``$1``, ``&1`` and ``GH-1``
  references; a leading ``/`` is escaped so no line is a quick action (``/merge``).
- :func:`markdown_code`: hostile text (a file name) as one inline code span;
  :func:`markdown_url`: a host's link, percent-encoded.
- :class:`CommandSafeStream`: the last pass over what reaches a terminal or a CI log, after
  layout (word wrap can put any part of a text at the start of a line).
"""

from __future__ import annotations

import re
from typing import TextIO
from urllib.parse import quote

_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
# The runner reads a line as a command when it starts with "::" (leading blanks aside), and
# the legacy form "##[command]" anywhere in a line; Azure Pipelines' "##vso[" likewise.
_COMMAND_START = re.compile(r"^([ \t]*):(?=:)", re.MULTILINE)
_LEGACY_COMMAND = re.compile(r"#(?=#(?:\[|vso\[))", re.IGNORECASE)
_BACKTICKS = re.compile(r"`+")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def controls(text: str) -> str:
    """``text`` with every control character but newline and tab shown as an escape."""
    return _CONTROL.sub(_visible, text)


def fence(text: str, minimum: int = 3) -> str:
    """A run of backticks longer than any in ``text`` (and at least ``minimum``): code or a
    code block fenced with it cannot be closed by the text inside."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(minimum, longest + 1)


def defuse_commands(text: str) -> str:
    """``text`` with no line a CI runner would execute as a workflow command."""
    return _LEGACY_COMMAND.sub("# ", _COMMAND_START.sub(r"\1: ", text))


def terminal(text: str) -> str:
    """Hostile text made safe to print on a terminal or in a CI log (newlines kept)."""
    return defuse_commands(controls(text))


def line(text: str) -> str:
    """Hostile text made safe to print, on one line."""
    return " ".join(terminal(text).split())


#: Escaped with a backslash wherever they are: what opens a construct anywhere in a line
#: (code spans and fences, emphasis, strikethrough, links and images, HTML and autolinks,
#: entities, math, table cells, GitLab's inline diffs ``{+ +}``) and the escape itself.
_MD_ANYWHERE = frozenset("\\`*[]<&$~|{")  # "`" but in a code span, see _code_spans
#: Escaped as the first character of a line: what starts a block there (headings, quotes,
#: lists, thematic breaks and setext underlines) or a GitLab quick action (``/merge``).
_MD_LINE_START = frozenset("#>-+=/:")
#: An ordered list item ("1." or "1)") at the start of a line.
_ORDERED = re.compile(r"\d{1,9}(?=[.)])")
#: What a host links without any Markdown: ``https://`` and ``www.`` (the dot and colon are
#: escaped), and ``GH-1`` (broken by a zero-width space).
_AUTOLINK = re.compile(r"(?i)(?<=w)ww(?=\.)|:(?=/)")
#: Where a zero-width space goes besides after a sigil: inside GitHub's ``GH-1``, after the
#: ``$`` of math (``$x$``, ``$`x`$``), the ``{`` or ``[`` of GitLab's inline diffs
#: (``{+ +}``, ``[- -]``), and in GitLab's ``*iteration:1`` and ``[vulnerability:1]``.
_BREAK_AFTER = re.compile(
    r"(?i)(?<![A-Za-z0-9])gh(?=-[0-9])|\$|[{\[](?=[+-])|\*(?=iteration:)|\[(?=vulnerability:)"
)
#: A sigil a host turns into a mention or a reference when a word follows it: ``@user``,
#: ``#1``, ``!1``, ``~label``, ``%milestone``, ``$1``, ``&1``.
_SIGILS = frozenset("@#!~%$&")
_ZWSP = "\u200b"
_NBSP = "\u00a0"


def _code_spans(text: str) -> set[int]:
    """Where ``text`` (one line) holds an inline code span that is safe to keep as one: a run
    of one or two backticks closed by the next run of the same length on the line, around
    text with no ``|`` (a table cell would split there). Inside, nothing is Markdown and no
    host links or mentions anything; longer runs could open a fence, so they are escaped."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    inside: set[int] = set()
    index = 0
    while index < len(runs):
        start, end = runs[index]
        closer = next(
            (j for j in range(index + 1, len(runs)) if runs[j][1] - runs[j][0] == end - start),
            None,
        )
        if end - start <= 2 and closer is not None:
            content = text[end : runs[closer][0]]
            if content.strip() and "|" not in content:
                inside.update(range(start, runs[closer][1]))
                index = closer + 1
                continue
        index += 1
    return inside


def _inert(text: str) -> str:
    """One line of hostile text (no leading blank) with no Markdown construct but code spans,
    and nothing a host links or obeys."""
    code = _code_spans(text)
    ordered = _ORDERED.match(text)
    escape_at = {ordered.end()} if ordered else set()
    escape_at |= {m.start() if m.group() == ":" else m.end() for m in _AUTOLINK.finditer(text)}
    references = {
        m.end() - 1 if m.group() in "$*{[" else m.end() for m in _BREAK_AFTER.finditer(text)
    }
    out: list[str] = []
    for index, char in enumerate(text):
        if index in code:
            out.append(char)
            continue
        before = text[index - 1 : index] if index else ""
        after = text[index + 1 : index + 2]
        if (
            char in _MD_ANYWHERE
            or (index == 0 and char in _MD_LINE_START)
            or (index in escape_at and char in ".):")
            or (char == "!" and before == "<")  # "<!--" is not in the source either
            # "_" emphasizes unless it is inside a word (snake_case is safe as it is).
            or (char == "_" and not (before.isalnum() and after.isalnum()))
        ):
            out.append("\\")
        out.append(char)
        if index in references or (
            char in _SIGILS and after and (after.isalnum() or after in "\"_'")
        ):
            out.append(_ZWSP)
    return "".join(out)


def markdown(text: str, limit: int | None = None) -> str:
    """Hostile text made safe to post in Markdown, cut at ``limit`` characters: shown as the
    characters it is, with none of them read as Markdown structure, and nobody notified."""
    text = controls(text.strip())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    lines = []
    for raw in text.split("\n"):
        body = raw.lstrip(" \t")
        indent = raw[: len(raw) - len(body)].expandtabs(4)
        safe = _inert(body.rstrip(" \t"))
        if safe.startswith(_LINE_COMMANDS):  # a Markdown file printed to a CI log
            safe = _ZWSP + safe
        lines.append(_NBSP * len(indent) + safe)
    return "\n".join(lines)


def markdown_code(text: str, limit: int | None = None, *, in_table: bool = False) -> str:
    """Hostile text (a file name, a login) as one inline code span on one line, cut at
    ``limit``: the backtick fence is longer than any run inside, so the text cannot close it;
    in a table cell, ``|`` is escaped (GFM splits cells before it reads code spans)."""
    text = " ".join(controls(text).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    if in_table:
        text = text.replace("|", "\\|")
    fenced = fence(text, minimum=1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fenced}{pad}{text}{pad}{fenced}"


def markdown_url(url: str) -> str:
    """A host's ``https://`` URL made safe as a Markdown link destination (percent-encoded,
    so nothing in it ends the link), or "" for any other URL."""
    if not url.startswith("https://"):
        return ""
    return quote(controls(url), safe="/:?#&=%+,;@!~*'-._")


# -- what a terminal or a CI log receives, after layout ------------------------------------------

#: A line that starts with one of these (blanks and escape sequences before it aside) is a
#: command: GitHub's workflow commands, and the section markers of GitLab's job log.
_LINE_COMMANDS = ("::", "section_start:", "section_end:")
#: Commands the runners read anywhere in a line: ``##[command]``, Azure's ``##vso[``.
_ANYWHERE_COMMANDS = ("##[", "##vso[")
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


class CommandSafeStream:
    """A text stream that passes what is written to ``stream``, with no line starting a CI
    runner command: a blank goes before the character that would complete one.

    :func:`terminal` defuses hostile text before layout; this is the last pass, after it.
    Wrapping, padding and table cells put any part of a text at the start of a physical
    line, so every stream orch-review writes to through rich goes through one. Escape
    sequences (rich's colours, cursor moves, links) pass through and count as nothing, like
    leading blanks; the state carries over from one ``write`` to the next.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._head: str | None = ""  # visible text of the line so far, while it may be a command
        self._recent = ""  # the last visible characters of the line
        self._escape = ""  # the escape sequence being passed through ("" when none)

    def write(self, text: str) -> int:
        """Write ``text``, defused; returns its length, as a stream does."""
        self._stream.write(self._defuse(text))
        return len(text)

    def _defuse(self, text: str) -> str:
        out: list[str] = []
        for char in text:
            if self._escape or char == "\x1b":
                self._escape = _escape_state(self._escape, char)
            elif char in _LINE_BREAKS:
                self._head, self._recent = "", ""
            elif not (self._head == "" and char.isspace()):
                out.append(self._break_before(char))
            out.append(char)
        return "".join(out)

    def _break_before(self, char: str) -> str:
        """A blank if ``char`` would complete a command, else nothing; updates the state."""
        blank = ""
        if self._head is not None:
            head = self._head + char
            self._head = head if any(c.startswith(head) for c in _LINE_COMMANDS) else None
            if head in _LINE_COMMANDS:
                blank, self._head = " ", None
        self._recent = (self._recent + char)[-8:].lower()
        if self._recent.endswith(_ANYWHERE_COMMANDS):
            blank, self._recent = " ", char
        return blank

    def flush(self) -> None:
        """Flush the stream."""
        self._stream.flush()

    def isatty(self) -> bool:
        """Whether the stream is a terminal."""
        return self._stream.isatty()

    def fileno(self) -> int:
        """The stream's file descriptor."""
        return self._stream.fileno()

    @property
    def encoding(self) -> str:
        """The stream's encoding."""
        return getattr(self._stream, "encoding", None) or "utf-8"


def _escape_state(state: str, char: str) -> str:
    """The escape sequence so far after ``char``, or "" once it has ended (CSI ``ESC [ ...
    final``, OSC ``ESC ] ... BEL or ESC \\``, or a two-character ``ESC x``)."""
    sequence = state + char
    if len(sequence) < 2:
        return sequence
    kind = sequence[1]
    if kind == "[":
        return "" if len(sequence) > 2 and "\x40" <= char <= "\x7e" else sequence
    if kind == "]":
        ended = char == "\x07" or sequence.endswith("\x1b\\")
        return "" if ended and len(sequence) > 2 else sequence[:2] + sequence[-1]
    return ""
