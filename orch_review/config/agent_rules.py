"""Rules the team already wrote for coding agents, read as review guidance.

``AGENTS.md`` and ``CLAUDE.md`` apply to their directory, as REVIEW.md does; ``.cursorrules``,
``.windsurfrules`` and ``.github/copilot-instructions.md`` to the whole repository; Cursor's
``.cursor/rules/*.mdc`` and Copilot's ``.github/instructions/*.instructions.md`` to what their
front matter says (``globs``/``alwaysApply``/``description``, ``applyTo``/``excludeAgent``).

They are read from the revision the configuration comes from (the base with ``--base``): a
change cannot plant the rules it is reviewed by. Their text is hostile data. The front matter
is read by a parser of the few ``key: value`` shapes these files use, never by a YAML loader
(no tags, no anchors, nothing constructed): only the keys below are looked at.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orch_review.quoting import quote_path
from orch_review.scope import git as gitops

if TYPE_CHECKING:
    import git

#: Files that apply to their own directory and those below, like REVIEW.md.
DIRECTORY_FILES = ("AGENTS.md", "CLAUDE.md")
#: Files that apply to the whole repository, read at the top only.
REPOSITORY_FILES = (".cursorrules", ".windsurfrules", ".github/copilot-instructions.md")
CURSOR_RULES = ".cursor/rules"
COPILOT_INSTRUCTIONS = ".github/instructions"
#: Where the path-scoped files live (read at the top only), for listing them from git.
RULE_DIRECTORIES = (CURSOR_RULES, COPILOT_INSTRUCTIONS)

#: Each file is read up to this many bytes; the rest is cut (and the cut noted).
FILE_MAX_BYTES = 16_000
#: All agent rule files together, at most; files past it are not read (and that is noted).
TOTAL_MAX_BYTES = 200_000
#: At most this many agent rule files are read.
MAX_FILES = 100
_FRONT_MATTER_LINES = 40
# A review is what orch-review does: Copilot's instructions may opt out of its code review.
_EXCLUDED_AGENTS = {"code-review"}


@dataclass(frozen=True, slots=True)
class RuleFile:
    """One file of rules, with what it applies to."""

    path: str
    text: str
    # Gitignore-style globs of the files it applies to; empty: by directory or everywhere.
    globs: tuple[str, ...] = ()
    everywhere: bool = False  # applies to every file of the repository
    description: str = ""  # when it applies, in the author's words (Cursor's description)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A guidance file that was read, for the report."""

    path: str
    truncated: bool = False
    applies_to: tuple[str, ...] = ()  # globs; empty: its directory, or everything


def is_rule_path(path: str) -> bool:
    """Whether ``path`` (repository-relative) is an agent rule file orch-review reads."""
    if path in REPOSITORY_FILES or path.rpartition("/")[2] in DIRECTORY_FILES:
        return True
    if path.startswith(CURSOR_RULES + "/"):
        return path.endswith(".mdc")
    if path.startswith(COPILOT_INSTRUCTIONS + "/"):
        return path.endswith(".instructions.md")
    return False


def front_matter(text: str) -> tuple[dict[str, str | list[str]], str]:
    """The ``key: value`` pairs between a leading pair of ``---`` lines, and the text after.

    Values are strings with one pair of quotes removed; a key with no value followed by
    ``- item`` lines, or a ``[a, b]`` value, is a list. Anything else is left out: the text
    is data, and a malformed header reads as no header."""
    lines = text.removeprefix("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next(
        (i for i, line in enumerate(lines[1:_FRONT_MATTER_LINES], 1) if line.strip() == "---"),
        None,
    )
    if end is None:
        return {}, text
    found: dict[str, str | list[str]] = {}
    key: str | None = None
    for line in lines[1:end]:
        item = re.match(r"^\s+-\s*(.*)$", line) or re.match(r"^-\s+(.*)$", line)
        if item and key is not None:
            listed = found.setdefault(key, [])
            if isinstance(listed, list):
                listed.append(_unquoted(item.group(1)))
            continue
        pair = re.match(r"^([A-Za-z][\w-]*)\s*:\s*(.*?)\s*$", line)
        if not pair:
            key = None
            continue
        key, value = pair.group(1), _without_comment(pair.group(2))
        if value.startswith("[") and value.endswith("]"):
            found[key] = [_unquoted(v) for v in value[1:-1].split(",") if v.strip()]
        elif value:
            found[key] = _unquoted(value)
    return found, "\n".join(lines[end + 1 :])


def _without_comment(value: str) -> str:
    if value[:1] in ("'", '"'):
        return value
    return value.split(" #", 1)[0].strip()


def _unquoted(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in ("'", '"'):
        return value[1:-1]
    return value


def _globs(value: str | list[str] | None) -> tuple[str, ...]:
    """Comma-separated globs (or a list of them), blank ones dropped."""
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    return tuple(g for g in (part.strip() for item in items for part in item.split(",")) if g)


def _text(value: str | list[str] | None) -> str:
    if value is None:
        return ""
    return " ".join(value) if isinstance(value, list) else value


def _everything(globs: tuple[str, ...]) -> bool:
    return any(g in ("*", "**", "**/*") for g in globs)


def parse_rule(path: str, text: str) -> RuleFile | None:
    """The rule file at ``path``; None when it does not apply to a review (a Cursor rule
    only applied when mentioned by name, Copilot instructions that exclude code review)."""
    if path.startswith(CURSOR_RULES + "/"):
        meta, body = front_matter(text)
        globs = _globs(meta.get("globs"))
        description = _text(meta.get("description")).strip()
        always = _text(meta.get("alwaysApply")).strip().lower() == "true"
        if always or _everything(globs):
            return RuleFile(path, body, everywhere=True, description=description)
        if globs:
            return RuleFile(path, body, globs=globs, description=description)
        if description:  # the agent decides when it applies: every agent gets to decide
            return RuleFile(path, body, everywhere=True, description=description)
        return None  # a manual rule: applied only when someone names it
    if path.startswith(COPILOT_INSTRUCTIONS + "/"):
        meta, body = front_matter(text)
        excluded = {a.strip().lower() for a in _globs(meta.get("excludeAgent"))}
        if excluded & _EXCLUDED_AGENTS:
            return None
        globs = _globs(meta.get("applyTo"))
        if not globs:
            return None  # Copilot applies instructions without applyTo to no file
        if _everything(globs):
            return RuleFile(path, body, everywhere=True)
        return RuleFile(path, body, globs=globs)
    if path in REPOSITORY_FILES:
        return RuleFile(path, text, everywhere=True)
    return RuleFile(path, text)  # AGENTS.md, CLAUDE.md: their directory


@dataclass(frozen=True, slots=True)
class Loaded:
    """The agent rule files of one revision, and what was cut or left out."""

    rules: tuple[RuleFile, ...] = ()
    sources: tuple[SourceFile, ...] = ()
    notes: tuple[str, ...] = ()


def load_rules(
    paths: Iterable[str], read: Callable[[str, int], bytes | None], max_bytes: int = FILE_MAX_BYTES
) -> Loaded:
    """The rule files among ``paths``, each read with ``read(path, limit)`` (at most ``limit``
    bytes), cut at ``max_bytes`` each and :data:`TOTAL_MAX_BYTES` together."""
    rules: list[RuleFile] = []
    sources: list[SourceFile] = []
    cut: list[str] = []
    left: list[str] = []
    total = 0
    for path in sorted({p for p in paths if is_rule_path(p)}, key=_top_first):
        if len(rules) >= MAX_FILES or total >= TOTAL_MAX_BYTES:
            left.append(path)
            continue
        limit = min(max_bytes, TOTAL_MAX_BYTES - total)
        data = read(path, limit + 1)
        if data is None:
            continue
        truncated = len(data) > limit
        text = data[:limit].decode("utf-8", "replace")
        if truncated:
            text = text.rstrip("\ufffd")  # a character cut in half
        rule = parse_rule(path, text)
        if rule is None or not rule.text.strip():
            continue
        total += min(len(data), limit)
        rules.append(rule)
        sources.append(SourceFile(path, truncated, rule.globs))
        if truncated:
            cut.append(path)
    notes = []
    if cut:
        notes.append(f"Agent rule files cut to {max_bytes:,} bytes each: {_listed(cut)}.")
    if left:
        notes.append(
            f"Agent rule files not read (over {MAX_FILES} files or {TOTAL_MAX_BYTES:,} bytes "
            f"in all): {_listed(left)}."
        )
    return Loaded(tuple(rules), tuple(sources), tuple(notes))


def read_rules(repo: git.Repo, revision: str, max_bytes: int = FILE_MAX_BYTES) -> Loaded:
    """The agent rule files in the tree of ``revision``, read through git."""
    names = (*DIRECTORY_FILES, *(p.rpartition("/")[2] for p in REPOSITORY_FILES))
    paths = gitops.files_called(repo, revision, names)
    paths += gitops.files_under(repo, revision, RULE_DIRECTORIES)
    return load_rules(
        paths, lambda path, limit: gitops.blob_head(repo, revision, path, limit), max_bytes
    )


def _top_first(path: str) -> tuple[int, str]:
    return path.count("/"), path


def _listed(paths: list[str]) -> str:
    shown = ", ".join(quote_path(p) for p in paths[:5])
    return shown + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
