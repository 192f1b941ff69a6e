"""A catalog of real defect patterns, each a small line edit of Python source.

Every pattern proposes sites: a range of lines and what to put there instead. A site is only
used when the mutated file still parses and its syntax tree really changed (see
:mod:`orch_review.eval.mutate`). Only Python is covered: it is the one language whose parser
ships with the interpreter, and a mutant that does not parse would measure nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from orch_review.findings.records import Severity


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace lines ``start`` to ``end`` (0-based, end excluded) with ``lines``."""

    start: int
    end: int
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pattern:
    """A defect pattern: its name, what a reviewer should say, and where it can be planted."""

    name: str
    description: str
    severity: Severity
    sites: Callable[[list[str]], Iterator[Edit]]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _each_line(
    lines: list[str], regex: re.Pattern[str], rewrite: Callable[[re.Match[str]], str]
) -> Iterator[Edit]:
    for number, line in enumerate(lines):
        match = regex.search(line)
        if match is not None:
            new = line[: match.start()] + rewrite(match) + line[match.end() :]
            if new != line:
                yield Edit(number, number + 1, (new,))


_RANGE_LEN = re.compile(r"range\(len\(([\w.\[\]]+)\)\)")
_LESS = re.compile(r"(?<![<=!])\s<\s(?!=)")


def _off_by_one(lines: list[str]) -> Iterator[Edit]:
    yield from _each_line(lines, _RANGE_LEN, lambda m: f"range(len({m.group(1)}) + 1)")
    condition = re.compile(r"^\s*(?:if|elif|while)\b")
    for number, line in enumerate(lines):
        if condition.match(line) and _LESS.search(line):
            yield Edit(number, number + 1, (_LESS.sub(" <= ", line, count=1),))


_CONDITION = re.compile(r"^(\s*)(if|elif|while) (.+):(\s*#.*)?$")


def _inverted_condition(lines: list[str]) -> Iterator[Edit]:
    for number, line in enumerate(lines):
        match = _CONDITION.match(line)
        if match and not match.group(3).startswith("not ") and "__name__" not in line:
            indent, keyword, test = match.group(1), match.group(2), match.group(3)
            yield Edit(number, number + 1, (f"{indent}{keyword} not ({test}):",))


_AWAIT = re.compile(r"\bawait\s+")


def _dropped_await(lines: list[str]) -> Iterator[Edit]:
    yield from _each_line(lines, _AWAIT, lambda m: "")


_GUARD = re.compile(r"^\s*if (?:not [\w.]+|[\w.]+ is None|[\w.]+ == None):\s*$")
_EXIT = re.compile(r"^\s*(?:raise\b|return\b)")


def _removed_check(lines: list[str]) -> Iterator[Edit]:
    for number in range(len(lines) - 2):
        guard, body, after = lines[number], lines[number + 1], lines[number + 2]
        if not _GUARD.match(guard) or not _EXIT.match(body):
            continue
        if _indent(body) <= _indent(guard) or _indent(after) > _indent(guard):
            continue
        if after.strip().startswith(("else", "elif")):
            continue
        yield Edit(number, number + 2, ())


_CALL2 = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(([A-Za-z_]\w*), ([A-Za-z_]\w*)\)")
_NOT_SWAPPABLE = {"isinstance", "issubclass", "getattr", "hasattr", "print", "super", "zip"}


def _swapped_arguments(lines: list[str]) -> Iterator[Edit]:
    for number, line in enumerate(lines):
        if line.lstrip().startswith(("def ", "class ", "async def ", "#")):
            continue
        match = _CALL2.search(line)
        if match is None or match.group(2) == match.group(3):
            continue
        if match.group(1).rsplit(".", 1)[-1] in _NOT_SWAPPABLE:
            continue
        swapped = f"{match.group(1)}({match.group(3)}, {match.group(2)})"
        yield Edit(number, number + 1, (line[: match.start()] + swapped + line[match.end() :],))


_SQL = re.compile(r"""\.execute\((["'])([^"'{}]*?)(?:\?|%s)([^"'{}]*)\1,\s*\(?(\w+),?\)?\)""")
_SHELL = re.compile(r"subprocess\.(run|call|check_call|check_output|Popen)\(\[([^\[\]]*)\]")


def _string_built_command(lines: list[str]) -> Iterator[Edit]:
    def sql(m: re.Match[str]) -> str:
        quote = m.group(1)
        return f".execute(f{quote}{m.group(2)}{{{m.group(4)}}}{m.group(3)}{quote})"

    yield from _each_line(lines, _SQL, sql)
    yield from _each_line(
        lines,
        _SHELL,
        lambda m: f'subprocess.{m.group(1)}(" ".join([{m.group(2)}]), shell=True',
    )


_WITH_OPEN = re.compile(r"^(\s*)with open\((.*)\) as (\w+):(\s*#.*)?$")


def _leaked_file_handle(lines: list[str]) -> Iterator[Edit]:
    for number, line in enumerate(lines):
        match = _WITH_OPEN.match(line)
        if match:
            indent, arguments, name = match.group(1), match.group(2), match.group(3)
            yield Edit(number, number + 1, (f"{indent}if ({name} := open({arguments})):",))


_FOR = re.compile(r"^(\s*)for ([A-Za-z_]\w*) in ([A-Za-z_]\w*):")


def _wrong_loop_variable(lines: list[str]) -> Iterator[Edit]:
    for number, line in enumerate(lines):
        match = _FOR.match(line)
        if match is None or match.group(2) == match.group(3):
            continue
        item, collection = match.group(2), match.group(3)
        use = re.compile(rf"(?<![\w.]){re.escape(item)}\b(?!\s*=[^=])")
        for body_number in range(number + 1, min(number + 8, len(lines))):
            body = lines[body_number]
            if body.strip() and _indent(body) <= _indent(line):
                break
            found = use.search(body)
            if found is not None:
                new = body[: found.start()] + collection + body[found.end() :]
                yield Edit(body_number, body_number + 1, (new,))
                break


CATALOG: tuple[Pattern, ...] = (
    Pattern(
        "off-by-one",
        "Off-by-one bound: a loop or comparison goes one past the valid range.",
        Severity.HIGH,
        _off_by_one,
    ),
    Pattern(
        "inverted-condition",
        "Inverted condition: the branch runs exactly when it should not.",
        Severity.HIGH,
        _inverted_condition,
    ),
    Pattern(
        "dropped-await",
        "Missing await: a coroutine is called but never awaited.",
        Severity.HIGH,
        _dropped_await,
    ),
    Pattern(
        "removed-check",
        "Removed null or error check: a guard that rejected bad input is gone.",
        Severity.HIGH,
        _removed_check,
    ),
    Pattern(
        "swapped-arguments",
        "Swapped arguments: two arguments of a call are passed in the wrong order.",
        Severity.MEDIUM,
        _swapped_arguments,
    ),
    Pattern(
        "string-built-command",
        "SQL or shell command built from a string with untrusted values: injection.",
        Severity.HIGH,
        _string_built_command,
    ),
    Pattern(
        "leaked-file-handle",
        "Leaked file handle: a file is opened and never closed.",
        Severity.MEDIUM,
        _leaked_file_handle,
    ),
    Pattern(
        "wrong-loop-variable",
        "Wrong variable in a loop: the body uses the collection instead of the item.",
        Severity.HIGH,
        _wrong_loop_variable,
    ),
)
