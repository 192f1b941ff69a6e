"""Splitting a review into shards, one per job of a CI matrix (``--shard K/N``).

Every reviewable file lands in exactly one shard. Shards are balanced by size: files are taken
largest first (ties by path) and each goes to the shard with the least work so far (ties to
the lowest number). That depends only on the files and their sizes, so every job of a matrix,
on any machine, computes the same split.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from orch_review.errors import ConfigError
from orch_review.scope.resolve import ReviewFile, Scope

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
# A file's weight: its changed lines for a change (a hunk costs some context), else its size.
HUNK_WEIGHT = 6
BYTES_PER_LINE = 40


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``K/N`` with 1 <= K <= N; raises ConfigError with what to write otherwise."""
    match = _SHARD.match(text)
    if match is None:
        raise ConfigError(f"--shard {text!r}: write it as K/N, for example --shard 1/4.")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= index <= count:
        raise ConfigError(f"--shard {text}: K must be between 1 and N ({count}).")
    return Shard(index, count)


def review_weight(file: ReviewFile) -> int:
    """How much reviewing ``file`` costs, in lines."""
    if file.change is not None:
        change = file.change
        return change.additions + change.deletions + HUNK_WEIGHT * len(change.hunks) + 1
    return file.size // BYTES_PER_LINE + 1


def assign(files: Sequence[ReviewFile], count: int) -> dict[str, int]:
    """Path -> 1-based shard, balanced by :func:`review_weight`, deterministic."""
    loads = [0] * count
    out: dict[str, int] = {}
    for file in sorted(files, key=lambda f: (-review_weight(f), f.path)):
        lightest = min(range(count), key=lambda n: (loads[n], n))
        loads[lightest] += review_weight(file)
        out[file.path] = lightest + 1
    return out


def shard_scope(scope: Scope, shard: Shard) -> Scope:
    """``scope`` narrowed to the files of ``shard`` (skipped files stay listed in every
    shard; merging reports lists each once)."""
    owner = assign(scope.files, shard.count)
    files = tuple(f for f in scope.files if owner[f.path] == shard.index)
    return dataclasses.replace(scope, files=files, shard=str(shard))
