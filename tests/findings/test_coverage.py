"""The coverage ledger: files, not concerns, and merging shard ledgers."""

from __future__ import annotations

import pytest

from orch_review.findings.coverage import (
    NOT_NAMED,
    Coverage,
    LedgerFile,
    SkippedPath,
    build_coverage,
    merge_coverage,
)

FILES = [LedgerFile("a.py", 3, ((1, 3),)), LedgerFile("b.py", 1), LedgerFile("c.py", 2)]


def test_a_file_is_covered_only_by_a_concern_that_covered_it() -> None:
    coverage = build_coverage(
        FILES,
        covered_by={"a.py": [2, 1]},
        reused={"c.py"},
        reasons={"b.py": "concern [3] failed: 529"},
        skipped=[SkippedPath("x.bin", "binary")],
    )
    assert [(f.path, f.status, f.concerns) for f in coverage.files] == [
        ("a.py", "covered", (1, 2)),
        ("b.py", "uncovered", ()),
        ("c.py", "reused", ()),
    ]
    assert coverage.uncovered[0].reason == "concern [3] failed: 529"
    assert not coverage.complete
    assert coverage.headline() == "2 of 3 changed files covered (1 reused from an earlier review)"
    assert Coverage.from_json(coverage.to_json()) == coverage


def test_a_file_nobody_named_says_so() -> None:
    coverage = build_coverage(FILES[:1], covered_by={})
    assert coverage.uncovered[0].reason == NOT_NAMED


def test_merged_shards_count_each_file_once_and_keep_notes() -> None:
    one = build_coverage(FILES[:2], covered_by={"a.py": [1], "b.py": [2]})
    two = build_coverage(FILES[2:], covered_by={}, skipped=[SkippedPath("x.bin", "binary")])
    three = build_coverage([], covered_by={}, skipped=[SkippedPath("x.bin", "binary")])
    merged = merge_coverage([one, two, three], notes=["shard 3/3 produced no report"])
    assert merged.headline() == "2 of 3 changed files covered"
    assert [f.path for f in merged.files] == ["a.py", "b.py", "c.py"]
    assert [s.path for s in merged.skipped] == ["x.bin"]
    assert not merged.complete and merged.notes == ("shard 3/3 produced no report",)


@pytest.mark.parametrize("order", [1, -1])
def test_a_file_covered_in_any_shard_is_covered_in_the_merge(order: int) -> None:
    """The same file in two shards' ledgers (a re-run shard, or one that reviewed it too):
    whichever shard covered it wins, in either order, and the others' reason is dropped."""
    uncovered = build_coverage(FILES, covered_by={}, reasons={"a.py": "concern [1] failed: 529"})
    covered = build_coverage(FILES, covered_by={"a.py": [4]}, reused={"b.py"})
    merged = merge_coverage([uncovered, covered][::order])
    by_path = {f.path: f for f in merged.files}
    assert (by_path["a.py"].status, by_path["a.py"].concerns, by_path["a.py"].reason) == (
        "covered",
        (4,),
        "",
    )
    assert by_path["b.py"].status == "reused"
    assert by_path["c.py"].status == "uncovered"
    assert len(merged.files) == 3
    assert merged.headline() == "2 of 3 changed files covered (1 reused from an earlier review)"


def test_the_first_covering_shard_is_kept() -> None:
    first = build_coverage(FILES[:1], covered_by={"a.py": [1]})
    second = build_coverage(FILES[:1], covered_by={"a.py": [7]})
    assert merge_coverage([first, second]).files[0].concerns == (1,)
    assert merge_coverage([]).files == () and merge_coverage([]).unit == "changed files"
    audit = build_coverage(FILES[:1], covered_by={}, unit="files")
    assert merge_coverage([audit]).unit == "files"


def test_the_ledger_as_json_and_back() -> None:
    coverage = build_coverage(
        [LedgerFile("z.py", 7, ((2, 4), (9, 9))), LedgerFile("a.py", 1), LedgerFile("m.py", 2)],
        covered_by={"z.py": [3, 1, 3]},
        reused={"m.py"},
        reasons={"a.py": "concern [2] failed: 529"},
        skipped=[SkippedPath("y.bin", "binary"), SkippedPath("b.bin", "too large")],
        unit="files",
    )
    data = coverage.to_json()
    assert data == {
        "unit": "files",
        "total": 3,
        "covered": 2,
        "reused": 1,
        "uncovered": 1,
        "complete": False,
        "files": [
            {
                "path": "a.py",
                "lines": 1,
                "hunks": [],
                "status": "uncovered",
                "concerns": [],
                "reason": "concern [2] failed: 529",
            },
            {
                "path": "m.py",
                "lines": 2,
                "hunks": [],
                "status": "reused",
                "concerns": [],
                "reason": None,
            },
            {
                "path": "z.py",
                "lines": 7,
                "hunks": [[2, 4], [9, 9]],
                "status": "covered",
                "concerns": [1, 3],
                "reason": None,
            },
        ],
        "skipped": [
            {"path": "b.bin", "reason": "too large"},
            {"path": "y.bin", "reason": "binary"},
        ],
        "notes": [],
    }
    back = Coverage.from_json(data)
    assert {f.path: f for f in back.files} == {f.path: f for f in coverage.files}
    assert back.unit == "files" and back.notes == () and len(back.skipped) == 2
    assert back.to_json() == data


def test_json_from_elsewhere_is_read_with_its_defaults_or_refused() -> None:
    minimal = {
        "files": [{"path": "a.py", "lines": "3", "status": "covered"}],
        "skipped": [],
    }
    coverage = Coverage.from_json(minimal)
    assert coverage.unit == "changed files" and coverage.notes == ()
    (file,) = coverage.files
    assert (file.lines, file.hunks, file.concerns, file.reason) == (3, (), (), "")
    assert Coverage.from_json({**minimal, "notes": ["n"], "unit": "files"}).notes == ("n",)
    with pytest.raises(ValueError, match="unknown file coverage status 'done'"):
        Coverage.from_json({"files": [{"path": "a", "lines": 1, "status": "done"}], "skipped": []})


def test_the_headline_counts_one_file_in_the_singular() -> None:
    assert build_coverage(FILES[:1], covered_by={"a.py": [1]}).headline() == (
        "1 of 1 changed file covered"
    )
