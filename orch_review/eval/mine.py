"""``orch-review eval mine``: the repository's own history as a benchmark (SZZ).

A fix commit (found by its message) deleted or changed some lines; ``git blame`` in the
fix's parent names the commits that wrote them: the bug's origins. Each origin becomes an
eval case, the origin against its parent, expecting a finding on the lines the fix later
touched, with the fix's message as the claim. Commits no fix ever blamed, old enough that a
fix had time to come, become clean cases: they measure noise.

SZZ is known to blame the wrong commit in a few ways; each is filtered and counted:
whitespace-only and comment-only lines, lines a fix only re-spaced (the same hunk adds them
back with other whitespace), lines a refactoring moved (blame follows moves and
copies to the commit that first wrote them), origins too large to be a bug's (a vendored
import, a reformat), merges, and root commits (nothing to compare them with).
"""

from __future__ import annotations

import posixpath
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.errors import UsageError
from orch_review.eval.cases import Case, ExpectedIssue
from orch_review.scope.git import history

if TYPE_CHECKING:
    import git

FIX_PATTERN = r"\b(fix(es|ed|ing)?|bug(s|fix)?|regression|revert(s|ed)?|hotfix(es)?)\b"
MAX_ORIGIN_LINES = 400
HORIZON = 50  # newer commits a clean candidate must have, so a fix had time to blame it

# Why a blamed line or a commit was not kept, as the summary names it.
WHITESPACE = "whitespace-only or comment-only lines"
MOVED = "blames of a refactoring that moved or copied lines (the commit that wrote them is blamed)"
TOO_LARGE = "origins too large to be a bug's"
MERGE_FIX = "fix commits that are merges"
MERGE_ORIGIN = "origins that are merges"
ROOT = "origins that are root commits"
NOTHING_REMOVED = "fix commits that only add lines (nothing to blame)"

_HASH = ("#",)
_SLASH = ("//", "/*", "*", "*/")
_COMMENTS = {
    **dict.fromkeys(("py", "sh", "bash", "rb", "pl", "r", "yaml", "yml", "toml", "cfg"), _HASH),
    **dict.fromkeys(
        (
            "c",
            "h",
            "cc",
            "cpp",
            "hpp",
            "js",
            "jsx",
            "ts",
            "tsx",
            "java",
            "go",
            "rs",
            "cs",
            "kt",
            "swift",
            "php",
            "scala",
            "dart",
        ),
        _SLASH,
    ),
    **dict.fromkeys(("sql", "lua", "hs", "ada"), ("--",)),
}


@dataclass(frozen=True, slots=True)
class MineOptions:
    """What ``eval mine`` looks at."""

    since: str | None = None
    limit: int | None = None  # fix commits examined, newest first
    paths: tuple[str, ...] = ()
    pattern: str = FIX_PATTERN
    max_origin_lines: int = MAX_ORIGIN_LINES
    horizon: int = HORIZON
    clean: int | None = None  # clean cases wanted (default: as many as bug cases)
    # Whether a message names an issue labelled as a bug (None: messages alone decide).
    linked_bug: Callable[[str], bool] | None = None


@dataclass(slots=True)
class MineResult:
    """The cases mined, and what was dropped and why."""

    cases: list[Case]
    fixes: int = 0
    by_linked_issue: int = 0  # fixes found through a bug-labelled issue, not their message
    dropped: Counter[str] = field(default_factory=Counter)

    @property
    def bug_cases(self) -> int:
        """Cases that expect findings."""
        return sum(1 for c in self.cases if not c.clean)


def _ignorable(path: str, text: str) -> bool:
    stripped = text.strip()
    if not stripped:
        return True
    extension = posixpath.splitext(path)[1].lstrip(".").lower()
    prefixes = _COMMENTS.get(extension, (*_HASH, "//"))
    return stripped.startswith(prefixes)


def _ranges(lines: Iterable[int]) -> list[tuple[int, int]]:
    ordered = sorted(set(lines))
    ranges: list[tuple[int, int]] = []
    for number in ordered:
        if ranges and number == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], number)
        else:
            ranges.append((number, number))
    return ranges


def _pattern(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text, re.IGNORECASE)
    except re.error as exc:
        raise UsageError(f"--pattern is not a regular expression: {exc}") from None


def _origins(
    repo: git.Repo, fix: history.Commit, paths: Sequence[str], dropped: Counter[str]
) -> dict[str, dict[str, set[int]]]:
    """Origin commit -> path in it -> lines there that ``fix`` later deleted or changed."""
    parent = fix.parents[0]
    removed = history.removed_lines(repo, parent, fix.sha, paths)
    kept = [r for r in removed if not r.cosmetic and not _ignorable(r.path, r.text)]
    dropped[WHITESPACE] += len(removed) - len(kept)
    by_path: dict[str, list[int]] = defaultdict(list)
    for line in kept:
        by_path[line.path].append(line.line)
    found: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for path, numbers in by_path.items():
        plain = history.blame(repo, parent, path, numbers, moves=False)
        followed = history.blame(repo, parent, path, numbers, moves=True)
        for number in numbers:
            origin = followed.get(number)
            if origin is None:
                continue
            if plain.get(number) is not None and plain[number].sha != origin.sha:
                dropped[MOVED] += 1  # the refactoring is not blamed; the author is
            found[origin.sha][origin.path].add(origin.line)
    return found


def mine(top: Path, options: MineOptions) -> MineResult:
    """Cases from the history of the repository at ``top`` (reached with orch-review's inert
    git), bug cases first, newest first."""
    from orch_review.scope.git import open_repo

    repo = open_repo(top)
    fix_message = _pattern(options.pattern)
    if options.since is not None:
        history.check_since(repo, options.since, time.time())
    walked = history.commits(repo, since=options.since, paths=options.paths)
    by_sha = {c.sha: c for c in walked}
    linked = 0

    def is_fix(commit: history.Commit) -> bool:
        nonlocal linked
        if fix_message.search(commit.message):
            return True
        if options.linked_bug is not None and options.linked_bug(commit.message):
            linked += 1
            return True
        return False

    fixes: list[history.Commit] = []
    for commit in walked:
        if options.limit is not None and len(fixes) >= options.limit:
            break
        if is_fix(commit):
            fixes.append(commit)
    result = MineResult([], fixes=len(fixes), by_linked_issue=linked)
    blamed: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    fixed_by: dict[str, list[history.Commit]] = defaultdict(list)
    for fix in fixes:
        if len(fix.parents) != 1:
            result.dropped[MERGE_FIX] += 1
            continue
        origins = _origins(repo, fix, options.paths, result.dropped)
        if not origins:
            result.dropped[NOTHING_REMOVED] += 1
        for sha, lines in origins.items():
            fixed_by[sha].append(fix)
            for path, numbers in lines.items():
                blamed[sha][path] |= numbers
    for sha in sorted(blamed, key=lambda s: -(by_sha[s].when if s in by_sha else 0)):
        case = _bug_case(repo, top, sha, blamed[sha], fixed_by[sha], options, result.dropped)
        if case is not None:
            result.cases.append(case)
    wanted = result.bug_cases if options.clean is None else options.clean
    fixed = {c.sha for c in fixes}
    result.cases += _clean_cases(
        repo, top, walked, set(blamed) | fixed, fix_message, options, wanted
    )
    return result


def _origin_parent(repo: git.Repo, sha: str, dropped: Counter[str]) -> str | None:
    out = history.parents(repo, sha)
    if not out:
        dropped[ROOT] += 1
        return None
    if len(out) > 1:
        dropped[MERGE_ORIGIN] += 1
        return None
    return out[0]


def _bug_case(
    repo: git.Repo,
    top: Path,
    sha: str,
    lines: dict[str, set[int]],
    fixes: list[history.Commit],
    options: MineOptions,
    dropped: Counter[str],
) -> Case | None:
    parent = _origin_parent(repo, sha, dropped)
    if parent is None:
        return None
    if history.changed_line_count(repo, sha) > options.max_origin_lines:
        dropped[TOO_LARGE] += 1
        return None
    claim = "; ".join(f"fixed later by {f.sha[:12]}: {f.subject[:300]}" for f in fixes[:3])
    expected = tuple(
        ExpectedIssue(claim, path, start, end)
        for path in sorted(lines)
        for start, end in _ranges(lines[path])
    )
    return Case(f"mined-{sha[:12]}", str(top), parent, sha, expected)


def _clean_cases(
    repo: git.Repo,
    top: Path,
    walked: list[history.Commit],
    blamed: set[str],
    fix_message: re.Pattern[str],
    options: MineOptions,
    wanted: int,
) -> list[Case]:
    cases: list[Case] = []
    for age, commit in enumerate(walked):
        if len(cases) >= wanted:
            break
        if age < options.horizon or commit.sha in blamed or len(commit.parents) != 1:
            continue
        if fix_message.search(commit.message):
            continue
        size = history.changed_line_count(repo, commit.sha)
        if size == 0 or size > options.max_origin_lines:
            continue
        cases.append(Case(f"clean-{commit.sha[:12]}", str(top), commit.parents[0], commit.sha))
    return cases


def summary_lines(result: MineResult) -> list[str]:
    """What was mined and what was dropped, for people."""
    clean = len(result.cases) - result.bug_cases
    linked = (
        f" ({result.by_linked_issue} through a bug-labelled issue)"
        if result.by_linked_issue
        else ""
    )
    lines = [
        f"{result.fixes} fix commit(s) examined{linked}: {result.bug_cases} bug case(s) and "
        f"{clean} clean case(s) written."
    ]
    for reason, count in sorted(result.dropped.items(), key=lambda item: (-item[1], item[0])):
        if count:
            lines.append(f"  dropped {count}: {reason}")
    return lines
