"""How the sweep packs files into concerns: neighbours together, each group sized to fit one
agent's budget. The engine's sweep (``engine/sweep.py``) runs these groups; the estimate
(``cost.py``) counts them, so both always agree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orch_review.findings.coverage import LedgerFile

# A hunk costs more than its changed lines: the agent reads the context around it.
HUNK_OVERHEAD = 6
FILE_OVERHEAD = 4


@dataclass(frozen=True, slots=True)
class SweepLimits:
    """How much one sweep concern may hold: changed lines (weighted) and files."""

    max_lines: int = 1500
    max_files: int = 40


def sweep_weight(file: LedgerFile) -> int:
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
        cost = sweep_weight(file)
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
