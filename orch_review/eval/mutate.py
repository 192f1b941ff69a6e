"""``--mutate N``: plant N known defects in the repository's own code, one per change.

Each mutant is a commit on top of HEAD that changes one line range of one Python file with
a pattern of :mod:`orch_review.eval.catalog`; it must still parse and change the syntax tree.
The commits are written to the repository's object store without any branch or ref (and with
fixed dates, so the same seed yields the same commits); neither the working tree nor the
index is touched. Sites are picked round-robin over the patterns, each pattern's sites
shuffled with ``seed``.
"""

from __future__ import annotations

import ast
import random
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from orch_review.errors import UsageError
from orch_review.eval.cases import Case, ExpectedIssue
from orch_review.eval.catalog import CATALOG, Edit, Pattern
from orch_review.scope import git as gitops

MAX_FILE_BYTES = 200_000


@dataclass(frozen=True, slots=True)
class Site:
    """Where one pattern can be planted: a file and an edit of it."""

    path: str
    edit: Edit
    pattern: Pattern


def _parses(source: str) -> ast.AST | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError):
            return None


def apply_edit(lines: Sequence[str], edit: Edit) -> list[str]:
    """``lines`` with ``edit`` made."""
    return [*lines[: edit.start], *edit.lines, *lines[edit.end :]]


def valid_sites(path: str, source: str, patterns: Sequence[Pattern] = CATALOG) -> list[Site]:
    """Every edit of ``source`` that a pattern proposes and that keeps it valid Python with
    a different syntax tree."""
    original = _parses(source)
    if original is None:
        return []
    before = ast.dump(original)
    lines = source.splitlines()
    ending = "\n" if source.endswith("\n") else ""
    out = []
    for pattern in patterns:
        for edit in pattern.sites(lines):
            mutated = _parses("\n".join(apply_edit(lines, edit)) + ending)
            if mutated is not None and ast.dump(mutated) != before:
                out.append(Site(path, edit, pattern))
    return out


def choose(sites: Sequence[Site], count: int, seed: int) -> list[Site]:
    """Up to ``count`` sites, round-robin over patterns, one per file line, deterministic."""
    rng = random.Random(seed)
    by_pattern: dict[str, list[Site]] = {}
    for site in sorted(sites, key=lambda s: (s.path, s.edit.start, s.edit.end, s.edit.lines)):
        by_pattern.setdefault(site.pattern.name, []).append(site)
    queues = [by_pattern[p.name] for p in CATALOG if p.name in by_pattern]
    for queue in queues:
        rng.shuffle(queue)
    chosen: list[Site] = []
    used: set[tuple[str, int]] = set()
    while len(chosen) < count and any(queues):
        for queue in queues:
            while queue and len(chosen) < count:
                site = queue.pop()
                if (site.path, site.edit.start) not in used:
                    used.add((site.path, site.edit.start))
                    chosen.append(site)
                    break
    return chosen


def plant(repo_path: Path, count: int, seed: int) -> list[Case]:
    """Commit up to ``count`` mutants of HEAD in the repository at ``repo_path``; one case
    each, expecting its planted defect. UsageError when no site can be mutated."""
    repo = gitops.open_repo(repo_path)
    try:
        top = gitops.work_tree(repo)
        base = gitops.resolve_commit(repo, "HEAD")
        sources: dict[str, str] = {}
        for path in gitops.files_at(repo, base):
            if not path.endswith(".py"):
                continue
            data = gitops.show_file(repo, base, path)
            if data is None or len(data) > MAX_FILE_BYTES:
                continue
            try:
                sources[path] = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
        sites = [site for path, text in sources.items() for site in valid_sites(path, text)]
        chosen = choose(sites, count, seed)
        if not chosen:
            raise UsageError(
                "--mutate found no Python line to plant a defect in at HEAD; it needs "
                "committed Python files."
            )
        cases = []
        for number, site in enumerate(chosen, 1):
            source = sources[site.path]
            lines = apply_edit(source.splitlines(), site.edit)
            content = ("\n".join(lines) + ("\n" if source.endswith("\n") else "")).encode()
            line = min(site.edit.start + 1, max(len(lines), 1))
            end = max(line, site.edit.start + len(site.edit.lines))
            head = gitops.commit_with_file(
                repo,
                base,
                site.path,
                content,
                f"orch-review eval: {site.pattern.name} in {site.path}:{line}",
            )
            issue = ExpectedIssue(
                f"{site.pattern.description} Planted at {site.path}:{line}.",
                site.path,
                line,
                end,
                site.pattern.severity,
            )
            case_id = f"mutant-{number:03d}-{site.pattern.name}"
            cases.append(Case(case_id, str(top), base, head, (issue,), site.pattern.name))
        return cases
    finally:
        repo.close()
