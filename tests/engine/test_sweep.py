"""The sweep's grouping: neighbours together, each group within one agent's budget."""

from __future__ import annotations

from orch_review.engine.sweep import (
    MAX_GROWTH,
    SweepLimits,
    fit_groups,
    group_files,
    sweep_concern,
    weight,
)
from orch_review.findings.coverage import LedgerFile
from tests.scripted import sweep_files


def _files(count: int, lines: int = 10, directory: str = "src") -> list[LedgerFile]:
    return [LedgerFile(f"{directory}/f{n:04d}.py", lines, ((1, lines),)) for n in range(count)]


def test_every_file_lands_in_exactly_one_group_within_the_limits() -> None:
    files = _files(1000) + _files(7, 400, "big")
    limits = SweepLimits(max_lines=1500, max_files=40)

    groups = group_files(files, limits)

    flat = [f.path for group in groups for f in group]
    assert sorted(flat) == sorted(f.path for f in files) and len(flat) == len(set(flat))
    for group in groups:
        assert len(group) <= limits.max_files
        assert len(group) == 1 or sum(weight(f) for f in group) <= limits.max_lines
    assert len(groups) <= 1000 // 40 + 7  # fewer, larger concerns: not one per file


def test_a_file_larger_than_the_budget_gets_a_group_of_its_own() -> None:
    huge = LedgerFile("src/huge.py", 50_000, ((1, 50_000),))
    groups = group_files([huge, *_files(3)], SweepLimits(max_lines=1500))
    assert [huge] in groups


def test_directories_are_kept_together_when_groups_are_half_full() -> None:
    files = _files(25, directory="a") + _files(25, directory="b")
    groups = group_files(files, SweepLimits(max_lines=10_000, max_files=40))
    assert [{f.path.split("/")[0] for f in g} for g in groups] == [{"a"}, {"b"}]


def test_the_concern_names_every_file_with_its_changed_lines() -> None:
    group = [LedgerFile("src/a.py", 3, ((4, 9), (20, 20))), LedgerFile("src/b.py", 1, ((2, 2),))]
    text = sweep_concern(group, "abc123")
    assert "under `src/`" in text and "git diff abc123 HEAD -- FILE" in text
    assert "- src/a.py (lines 4-9, 20)" in text
    assert sweep_files(text) == ["src/a.py", "src/b.py"]
    full = sweep_concern([LedgerFile("x.py", 12)], None)
    assert "- x.py (12 lines)" in full and "at the top of the repository" in full


def test_groups_grow_to_fit_the_agents_a_cap_leaves() -> None:
    files = _files(400)
    limits = SweepLimits(max_lines=1500, max_files=40)
    assert len(fit_groups(files, limits, None)) == 10
    fitted = fit_groups(files, limits, agents_left=10)  # a subagent and a verifier each
    assert len(fitted) <= 5 and sum(len(g) for g in fitted) == 400
    # Never beyond MAX_GROWTH times the usual size: then the cap leaves files uncovered.
    assert max(len(g) for g in fit_groups(files, limits, agents_left=2)) <= 40 * MAX_GROWTH
