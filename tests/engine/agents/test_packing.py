"""Small subtasks packed into shared agents (``engine.agents.packing``)."""

from __future__ import annotations

from orch_review.engine.agents.packing import PACK_MARK, PackLimits, pack

SIZES = {f"m{n:02d}.py": 100 for n in range(40)} | {"big.py": 10_000}


def _sizes(subtask: str) -> list[int]:
    return [size for path, size in SIZES.items() if path in subtask]


def _subtasks(count: int) -> list[str]:
    return [f"Check `m{n:02d}.py`." for n in range(count)]


def test_no_more_small_subtasks_than_run_at_once_are_left_alone() -> None:
    subtasks = _subtasks(10)
    packed = pack(subtasks, _sizes, PackLimits(slots=10, budget=24_000))
    assert packed.concerns == tuple(subtasks) and packed.packed == 0


def test_more_are_packed_into_as_many_agents_as_run_at_once() -> None:
    subtasks = [*_subtasks(25), "Check `big.py`.", "Look at the design."]

    packed = pack(subtasks, _sizes, PackLimits(slots=10, budget=24_000))

    # The large and the fileless subtasks keep their own agents, ahead of the packs.
    assert packed.concerns[:2] == ("Check `big.py`.", "Look at the design.")
    packs = packed.members[2:]
    assert [len(m) for m in packs] == [3] * 8 + [1]
    assert [s for m in packs for s in m] == subtasks[:25]  # every one, in order, once
    assert packed.packed == 24
    first = packed.concerns[2]
    assert first.startswith(f"{PACK_MARK}3 small subtasks")
    assert "1. Check `m00.py`.\n\n2. Check `m01.py`.\n\n3. Check `m02.py`." in first
    assert packed.concerns[-1] == "Check `m24.py`."  # a pack of one is the subtask itself


def test_a_pack_holds_at_most_ten_and_what_one_task_shows() -> None:
    many = pack(_subtasks(40), _sizes, PackLimits(slots=2, budget=24_000))
    assert [len(m) for m in many.members] == [10] * 4
    tight = pack(_subtasks(12), _sizes, PackLimits(slots=2, budget=200))
    assert [len(m) for m in tight.members] == [2] * 6  # 100 bytes each, 200 a task


def test_a_subtask_is_small_up_to_the_limit_and_never_with_no_budget() -> None:
    exact = pack(_subtasks(12), _sizes, PackLimits(slots=2, budget=24_000, small_bytes=100))
    assert exact.packed == 12
    empty = pack(_subtasks(30), lambda _: [0], PackLimits(slots=10, budget=0))
    assert empty.packed == 0  # even empty files: no budget, nothing shown, nothing packed
    assert pack(_subtasks(30), lambda _: [0], PackLimits(slots=10, budget=1)).packed == 30


def test_each_packed_subtask_is_numbered_and_kept_whole() -> None:
    subtasks = [f"Check `m{n:02d}.py`:\nits loop, then its return." for n in range(11)]

    packed = pack(subtasks, _sizes, PackLimits(slots=10, budget=24_000))

    assert packed.concerns[0] == (
        f"{PACK_MARK}2 small subtasks, each about files shown below. Treat each as its own "
        "question and review it fully; report the findings of all of them in one "
        "report_findings call.\n\n"
        "1. Check `m00.py`:\n   its loop, then its return.\n\n"
        "2. Check `m01.py`:\n   its loop, then its return."
    )


def test_no_budget_no_packing_and_duplicates_are_packed_once() -> None:
    assert pack(_subtasks(30), _sizes, PackLimits(slots=10, budget=0)).packed == 0
    twice = [*_subtasks(11), *_subtasks(11)]
    packed = pack(twice, _sizes, PackLimits(slots=10, budget=24_000))
    assert sorted(s for m in packed.members for s in m) == sorted(_subtasks(11))


def test_no_file_is_read_when_there_are_too_few_subtasks_to_pack() -> None:
    def unread(subtask: str) -> list[int]:
        raise AssertionError(f"read the files of {subtask!r}")

    subtasks = [*_subtasks(10), *_subtasks(10)]  # ten, each asked for twice
    assert pack(subtasks, unread, PackLimits(slots=10, budget=24_000)).packed == 0
    assert pack(_subtasks(30), unread, PackLimits(slots=10, budget=0)).packed == 0
