"""The sweep: neighbours grouped within an agent's budget; the wave over what nothing covered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orch_review.engine.agents.sweep import covering, run_sweep, sweep_concern, uncovered_files
from orch_review.engine.agents.workflow import Workflow
from orch_review.findings.coverage import LedgerFile
from orch_review.findings.records import ConcernOutcome, Finding, Severity, Verdict
from orch_review.findings.sweep_groups import (
    MAX_GROWTH,
    SweepLimits,
    fit_groups,
    group_files,
    sweep_weight,
)
from tests.engine.sessions import Files, StandIn, session
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
        assert len(group) == 1 or sum(sweep_weight(f) for f in group) <= limits.max_lines
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


def _found(path: str, verified: bool) -> Finding:
    verdict = Verdict(True, "holds") if verified else None
    return Finding(path, 1, 2, Severity.HIGH, "security", "claim", "e", "c", verdict=verdict)


def test_covering_counts_only_finished_verified_concerns_and_says_why_not() -> None:
    outcomes = [
        ConcernOutcome(0, "a and b", "reviewed", (_found("a.py", True),)),
        ConcernOutcome(1, "b again", "reviewed"),
        ConcernOutcome(2, "c", "failed", error="API kept failing"),
        ConcernOutcome(3, "d", "skipped", error="agent cap reached (4 agents)"),
        ConcernOutcome(4, "e", "reviewed", (_found("e.py", False),), error="no verdict for 1"),
        ConcernOutcome(5, "f", "reviewed", (_found("f.py", False),), error="verification off"),
        ConcernOutcome(6, "g", "reviewed"),
    ]
    files_of = {
        0: ("a.py", "b.py"),
        1: ("b.py",),
        2: ("c.py", "a.py"),
        3: ("d.py",),
        4: ("e.py",),
        5: ("f.py", "g.py"),
        6: ("g.py",),
    }

    covered_by, reasons = covering(outcomes, files_of)

    # 1-based ids, each concern that covered the file; a failed concern takes nothing away.
    assert covered_by == {"a.py": [1], "b.py": [1, 2], "g.py": [7]}
    assert {path: why for path, why in reasons.items() if path not in covered_by} == {
        "c.py": "concern [3] failed: API kept failing",
        "d.py": "concern [4] was not run: agent cap reached (4 agents)",
        "e.py": "concern [5] reported a finding here that was not verified (no verdict for 1)",
        "f.py": "concern [6] reported a finding here that was not verified (verification off)",
    }


def test_an_unverified_finding_uncovers_its_file_whoever_else_covered_it() -> None:
    outcomes = [
        ConcernOutcome(0, "sweep", "reviewed"),
        ConcernOutcome(1, "x", "reviewed", (_found("a.py", False),), error="verification off"),
    ]
    covered_by, reasons = covering(outcomes, {0: ("a.py", "b.py"), 1: ("b.py",)})
    assert covered_by == {"b.py": [1]}
    assert reasons["a.py"] == (
        "concern [2] reported a finding here that was not verified (verification off)"
    )


def test_a_not_fully_verified_concern_says_which_verifier_was_missing() -> None:
    unverified = ConcernOutcome(0, "x", "reviewed", (_found("a.py", False),))
    failed_verifier = ConcernOutcome(
        1, "y", "reviewed", (_found("q.py", False),), error="verification failed: 529"
    )
    _, reasons = covering([unverified, failed_verifier], {0: ("b.py",), 1: ("c.py",)})
    assert reasons["b.py"] == "concern [1] was not fully verified: a verifier did not run"
    assert reasons["c.py"] == "concern [2] was not fully verified: verification failed: 529"


def test_concerns_answered_from_an_earlier_review_cover_nothing_themselves() -> None:
    outcomes = [
        ConcernOutcome(0, "reused", "reviewed", (_found("a.py", False),), from_journal=True),
        ConcernOutcome(1, "run", "reviewed"),
    ]
    covered_by, reasons = covering(outcomes, {0: ("a.py",), 1: ("b.py",)}, answered={0})
    assert covered_by == {"b.py": [2]} and reasons == {}


def _sized(path: str, cost: int) -> LedgerFile:
    """A file that costs exactly ``cost`` lines to read (no hunks)."""
    return LedgerFile(path, cost - 4)


def test_a_file_costs_its_lines_its_hunks_context_and_a_fixed_overhead() -> None:
    assert sweep_weight(LedgerFile("a.py", 10, ((1, 2), (5, 6)))) == 10 + 2 * 6 + 4
    assert sweep_weight(LedgerFile("a.py", 10)) == 14


def test_a_group_is_filled_exactly_to_its_budget_and_not_beyond() -> None:
    files = [_sized(f"a/{n}.py", 50) for n in range(4)]
    groups = group_files(files, SweepLimits(max_lines=100, max_files=100))
    assert [[f.path for f in g] for g in groups] == [["a/0.py", "a/1.py"], ["a/2.py", "a/3.py"]]


@pytest.mark.parametrize(
    ("cost", "max_files", "split"),
    [
        (25, 100, True),  # two files fill half the lines: the next directory starts a group
        (20, 100, False),  # two files fill 40% of the lines: still room for a neighbour
        (1, 4, True),  # two files are half the files allowed
        (1, 6, False),  # two files are a third of the files allowed
    ],
)
def test_a_directory_boundary_closes_a_group_once_it_is_half_full(
    cost: int, max_files: int, split: bool
) -> None:
    files = [_sized(p, cost) for p in ("a/b/1.py", "a/b/2.py", "a/c/1.py", "a/c/2.py")]
    groups = group_files(files, SweepLimits(max_lines=100, max_files=max_files))
    paths = [[f.path for f in g] for g in groups]
    if split:  # a/b and a/c are different directories, although both are under a/
        assert paths == [["a/b/1.py", "a/b/2.py"], ["a/c/1.py", "a/c/2.py"]]
    else:
        assert paths == [["a/b/1.py", "a/b/2.py", "a/c/1.py", "a/c/2.py"]]


@pytest.mark.parametrize(
    ("agents_left", "sizes"),
    [
        (None, [4, 4, 4, 4]),
        (100, [4, 4, 4, 4]),  # enough agents: the limits given, not the defaults
        (8, [4, 4, 4, 4]),
        (4, [8, 8]),  # two groups for two agent pairs: twice the usual size is enough
        (2, [16]),  # one pair: grown up to MAX_GROWTH times
    ],
)
def test_groups_grow_only_as_much_as_the_agents_left_need(
    agents_left: int | None, sizes: list[int]
) -> None:
    files = _files(16)
    limits = SweepLimits(max_lines=10_000, max_files=4)
    assert [len(g) for g in fit_groups(files, limits, agents_left)] == sizes


@pytest.mark.parametrize(
    ("paths", "place"),
    [
        (["src/x.py"], "under `src/`"),
        (["src/pkg/a.py", "src/pkg/b.py"], "under `src/pkg/`"),
        (["src/a/x.py", "src/b/y.py"], "under `src/`"),
        (["src/a.py", "src/sub/b.py"], "under `src/`"),
        (["a.py", "src/b.py"], "at the top of the repository"),
    ],
)
def test_the_concern_says_the_directory_its_files_share(paths: list[str], place: str) -> None:
    text = sweep_concern([LedgerFile(p, 1) for p in paths], None)
    assert text.splitlines()[0].startswith(f"Sweep review of {len(paths)} file")
    assert f" {place} that no other concern covered." in text.splitlines()[0]


def test_the_sweep_subtask_is_worded_exactly() -> None:
    changed = [LedgerFile("src/a.py", 3, ((4, 9),)), LedgerFile("src/b.py", 0)]
    assert sweep_concern(changed, "abc123") == (
        "Sweep review of 2 changed files under `src/` that no other concern covered. Review "
        "what changed in each (`git diff abc123 HEAD -- FILE` shows it; read the surrounding "
        "code too) for defects of any kind: correctness, security, error handling, resource "
        "use, concurrency. Files and changed line ranges:\n"
        "- src/a.py (lines 4-9)\n"
        "- src/b.py (lines n/a)"
    )
    assert sweep_concern([LedgerFile("x.py", 12)], None) == (
        "Sweep review of 1 file at the top of the repository that no other concern covered. "
        "Review each for defects of any kind: correctness, security, error handling, resource "
        "use, concurrency. Files:\n"
        "- x.py (12 lines)"
    )


def test_a_concern_that_named_no_files_covers_nothing() -> None:
    outcomes = [ConcernOutcome(0, "broad", "reviewed"), ConcernOutcome(1, "b", "reviewed")]
    assert covering(outcomes, {1: ("b.py",)}) == ({"b.py": [2]}, {})


# -- the sweep wave over a workflow (a stand-in model; agents' shells are started: slow) --------


def _sweep_after(tmp_path: Path, **options: Any) -> tuple[list[ConcernOutcome], Workflow, StandIn]:
    names = ("a.py", "b.py", "c.py", "d.py", "lib/e.py")
    content = Files(tmp_path, {name: b"x = 1\n" for name in names})
    client = StandIn(content)
    files = [LedgerFile(name, 1, ((1, 1),)) for name in names]
    with session(tmp_path, content, client, journal=tmp_path / "journal.sqlite3") as s:
        workflow = Workflow(s)
        workflow.run(["Review `a.py` for defects."])
        outcomes = run_sweep(workflow, files, "abc123", done=frozenset({"d.py"}), **options)
    return outcomes, workflow, client


@pytest.mark.slow
def test_the_sweep_reviews_only_what_nothing_covered_in_groups(tmp_path: Path) -> None:
    outcomes, workflow, client = _sweep_after(tmp_path, limits=SweepLimits(max_files=1))
    groups = [[LedgerFile(p, 1, ((1, 1),))] for p in ("b.py", "c.py", "lib/e.py")]
    assert [(o.index, o.concern, o.covered) for o in outcomes] == [
        (i + 1, sweep_concern(g, "abc123"), True) for i, g in enumerate(groups)
    ]
    assert [workflow.files_of[o.index] for o in outcomes] == [("b.py",), ("c.py",), ("lib/e.py",)]
    assert len(client.tasks["subagent"]) == 4
    assert uncovered_files([LedgerFile("d.py", 1), *groups[0]], workflow) == [LedgerFile("d.py", 1)]
    assert uncovered_files([LedgerFile("d.py", 1)], workflow, frozenset({"d.py"})) == []


@pytest.mark.slow
def test_the_sweep_fits_the_agents_left_and_runs_nothing_when_all_is_covered(
    tmp_path: Path,
) -> None:
    outcomes, workflow, client = _sweep_after(
        tmp_path,
        limits=SweepLimits(max_files=1),
        agents_left=2,  # one pair of agents: groups grow (a directory still starts its own)
    )
    assert [workflow.files_of[o.index] for o in outcomes] == [("b.py", "c.py"), ("lib/e.py",)]
    names = ["a.py", "b.py", "c.py", "d.py", "lib/e.py"]
    assert uncovered_files([LedgerFile(n, 1) for n in names], workflow) == [LedgerFile("d.py", 1)]
    asked = len(client.tasks["subagent"])
    assert (
        run_sweep(workflow, [LedgerFile(n, 1) for n in names], None, done=frozenset({"d.py"})) == []
    )
    assert len(client.tasks["subagent"]) == asked
