"""The engine's coverage guarantee: a sweep wave over the files no finished concern covered.

After the main agent's Workflow calls (and whatever it chose not to do), every reviewable file
that no finished, verified concern named is grouped with its neighbours (same directory first)
into concerns sized to fit one agent's budget, and those run through the same Workflow:
journaled, verified, capped by the session's budget like any other concern.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from orch_review.engine.workflow import Workflow
from orch_review.findings.coverage import LedgerFile
from orch_review.findings.records import ConcernOutcome
from orch_review.quoting import quote_path
from orch_review.scope.diff import line_ranges
from orch_review.wording import counted

# A hunk costs more than its changed lines: the agent reads the context around it.
HUNK_OVERHEAD = 6
FILE_OVERHEAD = 4


@dataclass(frozen=True, slots=True)
class SweepLimits:
    """How much one sweep concern may hold: changed lines (weighted) and files."""

    max_lines: int = 1500
    max_files: int = 40


def weight(file: LedgerFile) -> int:
    """What a file costs an agent, in lines read."""
    return file.lines + HUNK_OVERHEAD * len(file.hunks) + FILE_OVERHEAD


def _directory(path: str) -> str:
    return path.rpartition("/")[0]


def group_files(
    files: Sequence[LedgerFile], limits: SweepLimits = SweepLimits()
) -> list[list[LedgerFile]]:
    """Files packed into groups in path order, so a directory stays together; a group is
    closed when it is full, or at a directory boundary once it is at least half full.
    A file larger than a group's budget gets a group of its own."""
    groups: list[list[LedgerFile]] = []
    current: list[LedgerFile] = []
    used = 0
    for file in sorted(files, key=lambda f: f.path):
        cost = weight(file)
        if current:
            full = used + cost > limits.max_lines or len(current) >= limits.max_files
            new_dir = _directory(file.path) != _directory(current[-1].path)
            half = used * 2 >= limits.max_lines or len(current) * 2 >= limits.max_files
            if full or (new_dir and half):
                groups.append(current)
                current, used = [], 0
        current.append(file)
        used += cost
    if current:
        groups.append(current)
    return groups


#: How much larger than usual sweep concerns may grow to fit a cap on agents.
MAX_GROWTH = 4


def fit_groups(
    files: Sequence[LedgerFile], limits: SweepLimits, agents_left: int | None
) -> list[list[LedgerFile]]:
    """:func:`group_files`, with larger groups (up to :data:`MAX_GROWTH` times) when the
    agents left under ``--max-agents`` (a subagent and a verifier per group) are too few."""
    groups = group_files(files, limits)
    if agents_left is None:
        return groups
    budget = max(1, agents_left // 2)
    for factor in range(2, MAX_GROWTH + 1):
        if len(groups) <= budget:
            break
        grown = SweepLimits(limits.max_lines * factor, limits.max_files * factor)
        groups = group_files(files, grown)
    return groups


def _common_directory(paths: Sequence[str]) -> str:
    parts = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return "/".join(common)


def sweep_concern(group: Sequence[LedgerFile], base: str | None) -> str:
    """The self-contained subtask for one group: what to read and what to look for."""
    where = _common_directory([f.path for f in group])
    place = f"under `{quote_path(where)}/`" if where else "at the top of the repository"
    if base:
        head = (
            f"Sweep review of {counted(len(group), 'changed file')} {place} that no other concern "
            f"covered. Review what changed in each (`git diff {base} HEAD -- FILE` shows it; "
            "read the surrounding code too) for defects of any kind: correctness, security, "
            "error handling, resource use, concurrency. Files and changed line ranges:"
        )
        lines = [f"- {quote_path(f.path)} (lines {line_ranges(f.hunks) or 'n/a'})" for f in group]
    else:
        head = (
            f"Sweep review of {counted(len(group), 'file')} {place} that no other concern covered. "
            "Review each for defects of any kind: correctness, security, error handling, "
            "resource use, concurrency. Files:"
        )
        lines = [f"- {quote_path(f.path)} ({f.lines} lines)" for f in group]
    return "\n".join([head, *lines])


def covering(
    outcomes: Sequence[ConcernOutcome],
    files_of: Mapping[int, Sequence[str]],
    answered: AbstractSet[int] = frozenset(),
) -> tuple[dict[str, list[int]], dict[str, str]]:
    """Per path, the 1-based ids of the concerns that covered it; for paths named only by
    concerns that did not finish, why (the last such concern's reason). Concerns in
    ``answered`` were answered from an earlier review: their files count as reused."""
    covered_by: dict[str, list[int]] = defaultdict(list)
    reasons: dict[str, str] = {}
    for outcome in outcomes:
        if outcome.index in answered:
            continue
        for path in files_of.get(outcome.index, ()):
            if outcome.covered:
                covered_by[path].append(outcome.index + 1)
            else:
                reasons[path] = f"concern [{outcome.index + 1}] {_why(outcome)}"
    # A finding nobody verified may be a real problem: its file is not covered, whatever
    # other concerns (a sweep included) found there.
    for outcome in outcomes:
        for finding in outcome.findings:
            if finding.verdict is None and outcome.index not in answered:
                covered_by.pop(finding.path, None)
                why = f" ({outcome.error})" if outcome.error else ""
                reasons[finding.path] = (
                    f"concern [{outcome.index + 1}] reported a finding here that was not "
                    f"verified{why}"
                )
    return dict(covered_by), reasons


def _why(outcome: ConcernOutcome) -> str:
    if outcome.status == "failed":
        return f"failed: {outcome.error}"
    if outcome.status == "skipped":
        return f"was not run: {outcome.error}"
    return f"was not fully verified: {outcome.error or 'a verifier did not run'}"


def uncovered_files(
    files: Sequence[LedgerFile], workflow: Workflow, done: frozenset[str] = frozenset()
) -> list[LedgerFile]:
    """Files no finished, verified concern of ``workflow`` covered (``done``: already
    covered some other way, e.g. reused from an earlier review)."""
    covered_by, _ = covering(workflow.outcomes, workflow.files_of, workflow.answered)
    return [f for f in files if f.path not in covered_by and f.path not in done]


def run_sweep(
    workflow: Workflow,
    files: Sequence[LedgerFile],
    base: str | None,
    *,
    done: frozenset[str] = frozenset(),
    limits: SweepLimits = SweepLimits(),
    agents_left: int | None = None,
) -> list[ConcernOutcome]:
    """Review every file in ``files`` nothing covered yet; returns the sweep's outcomes.
    ``agents_left``: what ``--max-agents`` still allows (None: no cap)."""
    missing = uncovered_files(files, workflow, done)
    if not missing:
        return []
    groups = fit_groups(missing, limits, agents_left)
    return workflow.run(
        [sweep_concern(g, base) for g in groups], files=[[f.path for f in g] for g in groups]
    )
