"""The read-only tools agents get without a shell: their definitions, limits, and the checks
of their inputs that need no repository (a search pattern, a glob).

The tools are ordinary client tools (a name, a description, an input schema), so they work
with every server that takes tools; :mod:`.snapshot_tools` runs them over the snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

# A tool handler returns (text for the model, is_error).
ToolHandler = Callable[[Mapping[str, Any]], tuple[str, bool]]

MAX_FILE_BYTES = 4 << 20  # read from a file; beyond, a note says where it was cut
MAX_LISTING_BYTES = 64 << 20  # of `git ls-tree -r -l`
MAX_PATTERN_CHARS = 1000
MAX_REPETITION = 1000  # the product of a pattern's counted repetitions ({m,n})
MAX_RESULTS = 200
DEFAULT_RESULTS = 50
MAX_LIST = 1000
MAX_LOG = 50
MAX_REVIEWED_COMMITS = 1000
MAX_LINE_CHARS = 400  # of one search result
_COUNTED = re.compile(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}")
_BACKREFERENCE = re.compile(r"\\[1-9]")

_PATH = {"type": "string", "description": "Repository-relative path."}
_REVISION = {
    "type": "string",
    "description": "`HEAD` (the content under review), `base` (what it is compared with, if "
    "any) or the id of a reviewed commit (as git_log lists them).",
}

READ_FILE_TOOL: dict[str, Any] = {
    "name": "read_file",
    "description": "Read a file of the content under review, with line numbers (as `cat -n`). "
    "Give start_line and end_line to read a range of a large file.",
    "input_schema": {
        "type": "object",
        "properties": {
            "path": _PATH,
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
    },
}
SEARCH_TOOL: dict[str, Any] = {
    "name": "search",
    "description": "Search the content under review for a regular expression (POSIX extended, "
    "as `grep -E`; no backreferences) or, with fixed_string, for plain text. Lists each "
    "matching line as path:line:text, binary files skipped, at most max_results lines.",
    "input_schema": {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "path": {"type": "string", "description": "Only this file or directory."},
            "glob": {
                "type": "string",
                "description": "Only files matching this glob (`src/**/*.py`; `*` stays in "
                "one directory).",
            },
            "fixed_string": {"type": "boolean"},
            "ignore_case": {"type": "boolean"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS},
        },
        "required": ["pattern"],
    },
}
LIST_FILES_TOOL: dict[str, Any] = {
    "name": "list_files",
    "description": "List the files of the content under review, with their sizes: all, those "
    "under a directory, or those matching a glob (`**/*.py`).",
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "A directory (default: the root)."},
            "glob": {"type": "string"},
        },
    },
}
GIT_LOG_TOOL: dict[str, Any] = {
    "name": "git_log",
    "description": "The commits under review (base..HEAD; the history of HEAD when there is "
    "no base), newest first, with their files changed, or with patch: true their diffs.",
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Only commits touching this path."},
            "max_count": {"type": "integer", "minimum": 1, "maximum": MAX_LOG},
            "patch": {"type": "boolean"},
        },
    },
}
GIT_SHOW_TOOL: dict[str, Any] = {
    "name": "git_show",
    "description": "Show a reviewed commit (message, files changed, diff), or with path the "
    "file as it is at that revision (`base` gives the version before the change).",
    "input_schema": {
        "type": "object",
        "properties": {"revision": _REVISION, "path": _PATH},
        "required": ["revision"],
    },
}
GIT_BLAME_TOOL: dict[str, Any] = {
    "name": "git_blame",
    "description": "Which reviewed commit last changed each line of a range of a file.",
    "input_schema": {
        "type": "object",
        "properties": {
            "path": _PATH,
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
            "revision": _REVISION,
        },
        "required": ["path", "start_line", "end_line"],
    },
}
GIT_DIFF_TOOL: dict[str, Any] = {
    "name": "git_diff",
    "description": "The diff between two reviewed revisions (default: base to HEAD, what the "
    "change does), for one path or all; stat: true gives only the files and counts.",
    "input_schema": {
        "type": "object",
        "properties": {
            "from": _REVISION,
            "to": _REVISION,
            "path": {"type": "string", "description": "Only this file or directory."},
            "stat": {"type": "boolean"},
        },
    },
}

#: The tools agents get instead of bash, in the order they are offered.
READ_TOOLS: tuple[dict[str, Any], ...] = (
    READ_FILE_TOOL,
    SEARCH_TOOL,
    LIST_FILES_TOOL,
    GIT_LOG_TOOL,
    GIT_SHOW_TOOL,
    GIT_BLAME_TOOL,
    GIT_DIFF_TOOL,
)


class Refused(ValueError):
    """A tool input that cannot be run; the message goes back to the model."""


def check_pattern(pattern: str) -> None:
    """Refuse a pattern ``git grep -E`` could spend unbounded time or memory on."""
    if not pattern:
        raise Refused("`pattern` must be a non-empty string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise Refused(f"`pattern` may have at most {MAX_PATTERN_CHARS} characters")
    if "\0" in pattern or "\n" in pattern:
        raise Refused("`pattern` is one line, without NUL")
    if _BACKREFERENCE.search(pattern):
        raise Refused("backreferences (\\1 ...) are not supported; search for the text itself")
    product = 1
    for low, high in _COUNTED.findall(pattern):
        product *= max(int(low), int(high) if high else 0, 1)
        if product > MAX_REPETITION:
            raise Refused(
                f"the counted repetitions ({{m,n}}) of `pattern` allow too many matches: their "
                f"bounds multiplied must stay under {MAX_REPETITION}; use `+` or `*` instead"
            )


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A matcher of git's glob pathspec (``*`` and ``?`` within one directory, ``**`` across),
    run as a set of states over the path: linear time whatever the pattern, never backtracking.
    """
    tokens: list[str] = []  # "*", "**", "**/", "?" or one literal character
    i = 0
    while i < len(pattern):
        for token in ("**/", "**", "*", "?"):
            if pattern.startswith(token, i):
                break
        else:
            token = pattern[i]
        tokens.append(token if len(token) > 1 or token in "*?" else "=" + token)
        i += len(token)

    def closure(states: set[int]) -> set[int]:
        todo, seen = list(states), set(states)
        while todo:
            k = todo.pop()
            if k < len(tokens) and tokens[k] in ("*", "**", "**/") and k + 1 not in seen:
                seen.add(k + 1)
                todo.append(k + 1)
        return seen

    def step(states: set[int], char: str) -> set[int]:
        after = set()
        for k in states:
            if k == len(tokens):
                continue
            token = tokens[k]
            if token == "**" or (token == "*" and char != "/"):
                after.add(k)
            elif token == "**/":
                after.add(k)
                if char == "/":
                    after.add(k + 1)
            elif (token == "?" and char != "/") or token == "=" + char:
                after.add(k + 1)
        return closure(after)

    def matches(path: str) -> bool:
        states = closure({0})
        for char in path:
            states = step(states, char)
            if not states:
                return False
        return len(tokens) in states

    return matches
