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
- :func:`markdown`: a GitHub comment or job summary: controls escaped, no hidden HTML
  comment (nobody can forge orch-review's markers), no code fence that swallows the rest of
  the comment, no @-mention that notifies people.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
# The runner reads a line as a command when it starts with "::" (leading blanks aside), and
# the legacy form "##[command]" anywhere in a line; Azure Pipelines' "##vso[" likewise.
_COMMAND_START = re.compile(r"^([ \t]*):(?=:)", re.MULTILINE)
_LEGACY_COMMAND = re.compile(r"#(?=#(?:\[|vso\[))", re.IGNORECASE)
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})", re.MULTILINE)
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


def markdown(text: str, limit: int | None = None) -> str:
    """Hostile text made safe to post in GitHub Markdown, cut at ``limit`` characters."""
    text = controls(text.strip())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    text = text.replace("<!--", "&lt;!--").replace("-->", "--&gt;")
    text = _FENCE.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
    return _MENTION.sub("@\u200b", text)
