"""Reading a ```suggestion block out of a posted comment, and applying it, as GitHub does.

The block is a CommonMark fenced code block whose info string is ``suggestion``: it ends at
the first line that is a fence of the same character, at least as long, indented at most
three spaces, with nothing but blanks after it. Committing it replaces the comment's lines
``start_line``..``line`` (``line`` alone for a one-line comment) with the block's lines.
"""

from __future__ import annotations

import re
from typing import Any

_OPEN = re.compile(r"^ {0,3}(`{3,})suggestion[ \t]*$")


def suggestion_of(body: str) -> str | None:
    """The text of the comment's suggestion block, or None when it has none."""
    lines = body.split("\n")
    for index, line in enumerate(lines):
        opened = _OPEN.match(line)
        if opened is None:
            continue
        fence = len(opened.group(1))
        closing = re.compile(rf"^ {{0,3}}`{{{fence},}}[ \t]*$")
        for end in range(index + 1, len(lines)):
            if closing.match(lines[end]):
                return "\n".join(lines[index + 1 : end])
        return "\n".join(lines[index + 1 :])  # an unclosed fence runs to the end
    return None


def apply_suggestion(text: str, comment: dict[str, Any]) -> str:
    """``text`` (a file's content) with the comment's suggestion committed."""
    suggestion = suggestion_of(str(comment["body"]))
    assert suggestion is not None, "the comment has no suggestion"
    last = int(comment["line"])
    first = int(comment.get("start_line") or last)
    lines = text.split("\n")
    new = suggestion.split("\n")
    return "\n".join(lines[: first - 1] + new + lines[last:])
