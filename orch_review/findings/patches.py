"""A finding's replacement applied to the text it was reviewed against.

Lines are counted as git and GitHub count them: split on a newline only, so a form feed or a
Unicode line separator inside a line does not shift the numbers. Each file keeps its own line
endings: the new lines get the ending of the lines they replace, and a last line without a
newline stays without one.
"""

from __future__ import annotations


class PatchError(ValueError):
    """The replacement does not apply; the message says why, for the user."""


def split_lines(text: str) -> list[str]:
    """``text`` as lines that keep their ``\\n`` (the last one may lack it)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def replacement_lines(replacement: str) -> list[str]:
    """The new lines a replacement holds (it has no final newline: see the tool)."""
    return [line.removesuffix("\r") for line in replacement.split("\n")]


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return "\n" if line.endswith("\n") else ""


def decode(data: bytes) -> str:
    """The file's text; PatchError when it is not UTF-8 (a patch could not be shown or
    applied faithfully)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PatchError("the file is not UTF-8 text") from None


def original_lines(text: str, start: int, end: int) -> list[str]:
    """Lines ``start``..``end`` of ``text`` without their endings; PatchError when the file
    does not have them."""
    lines = split_lines(text)
    if start < 1 or end < start or end > len(lines):
        raise PatchError(
            f"lines {start}-{end} are not in the reviewed file (it has {len(lines)} lines)"
        )
    return [line.removesuffix("\n").removesuffix("\r") for line in lines[start - 1 : end]]


def apply(text: str, start: int, end: int, replacement: str) -> str:
    """``text`` with lines ``start``..``end`` replaced; PatchError when those lines do not
    exist or the replacement leaves them as they are."""
    old = original_lines(text, start, end)
    new = replacement_lines(replacement)
    if new == old:
        raise PatchError("the replacement does not change the lines")
    lines = split_lines(text)
    ending = _ending(lines[start - 1]) or "\n"
    last = _ending(lines[end - 1])
    written = [line + ending for line in new[:-1]] + [new[-1] + last]
    return "".join(lines[: start - 1] + written + lines[end:])


def unified_diff(path: str, text: str, start: int, end: int, replacement: str) -> str:
    """A small unified diff (no context) of the replacement; PatchError as :func:`apply`."""
    old = original_lines(text, start, end)
    new = replacement_lines(replacement)
    if new == old:
        raise PatchError("the replacement does not change the lines")
    return diff_of_lines(path, start, old, new)


def diff_of_lines(path: str, start: int, old: list[str], new: list[str]) -> str:
    """The unified diff of ``old`` lines (from ``start``) becoming ``new``."""
    header = (
        f"--- a/{path}\n+++ b/{path}\n@@ -{_range(start, len(old))} +{_range(start, len(new))} @@\n"
    )
    body = [f"-{line}\n" for line in old] + [f"+{line}\n" for line in new]
    return header + "".join(body)


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"
