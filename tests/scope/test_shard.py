"""--shard K/N: every file in exactly one shard, balanced by size, the same on every machine."""

from __future__ import annotations

import random

import pytest

from orch_review.errors import ConfigError
from orch_review.scope.diff import FileChange
from orch_review.scope.resolve import ReviewFile
from orch_review.scope.shard import Shard, assign, parse_shard, review_weight


def _file(path: str, lines: int) -> ReviewFile:
    change = FileChange(path, "added", additions=lines, hunks=((1, lines),))
    return ReviewFile(path, lines * 30, change)


FILES = [_file(f"src/m{n:03d}.py", 1 + (n * 37) % 400) for n in range(300)]


def test_every_file_is_in_exactly_one_shard_and_shards_are_balanced() -> None:
    owner = assign(FILES, 4)
    assert set(owner) == {f.path for f in FILES} and set(owner.values()) == {1, 2, 3, 4}
    loads = [sum(review_weight(f) for f in FILES if owner[f.path] == k) for k in range(1, 5)]
    assert max(loads) - min(loads) <= max(review_weight(f) for f in FILES)


def test_the_split_does_not_depend_on_the_order_files_come_in() -> None:
    # Equal weights, so only the tie-break by path makes the order irrelevant.
    tied = [_file(f"src/t{n:02d}.py", 1 + n % 3) for n in range(30)]
    orders = [list(tied), list(reversed(tied))]
    for seed in range(5):
        shuffled = list(tied)
        random.Random(seed).shuffle(shuffled)
        orders.append(shuffled)
    splits = [assign(order, 4) for order in orders]
    assert all(split == splits[0] for split in splits)
    shuffled = list(FILES)
    random.Random(7).shuffle(shuffled)
    assert assign(shuffled, 3) == assign(FILES, 3)


def test_the_largest_files_go_first_each_to_the_lightest_shard() -> None:
    """Largest first, to the least loaded shard, ties to the lowest shard and by path:
    a split by file count or in path order would put both large files together."""
    files = [
        _file("a.py", 20),
        _file("b.py", 20),
        _file("big1.py", 300),
        _file("big2.py", 300),
        _file("c.py", 20),
        _file("d.py", 20),
    ]
    assert assign(files, 2) == {
        "big1.py": 1,
        "big2.py": 2,
        "a.py": 1,
        "b.py": 2,
        "c.py": 1,
        "d.py": 2,
    }
    huge = [_file("huge.py", 900), *files]
    owner = assign(huge, 2)
    assert [p for p, k in owner.items() if k == 1] == ["huge.py"]  # 900 outweighs the rest


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_a_bad_shard_is_a_usage_error(text: str) -> None:
    with pytest.raises(ConfigError, match="--shard"):
        parse_shard(text)


def test_parse_shard() -> None:
    assert parse_shard(" 2/5 ") == Shard(2, 5) and str(Shard(2, 5)) == "2/5"
