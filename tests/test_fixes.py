"""Verified patches applied to a working tree: exact lines only, bottom-up, atomically, never
through a symbolic link."""

from __future__ import annotations

import dataclasses
import errno
import os
from pathlib import Path

import pytest

from orch_review.findings.records import Finding, PatchCheck, Severity, Verdict
from orch_review.fixes import CHANGED, apply_fixes

TEXT = "one\ntwo\nthree\nfour\nfive\n"


def _patch(start: int, end: int, new: str, path: str = "a.txt", **changes: object) -> Finding:
    reviewed = "\n".join(TEXT.split("\n")[start - 1 : end])
    finding = Finding(
        path=path,
        start_line=start,
        end_line=end,
        severity=Severity.HIGH,
        category="correctness",
        claim=f"lines {start}-{end}",
        evidence="e",
        concern="c",
        verdict=Verdict(True, "holds", fix_ok=True),
        replacement=new,
        patch_check=PatchCheck(True, "checked", reviewed),
    )
    return dataclasses.replace(finding, **changes)  # type: ignore[arg-type]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text(TEXT)
    return tmp_path


def test_patches_of_one_file_are_all_applied_bottom_up(tree: Path) -> None:
    outcomes = apply_fixes(tree, [_patch(1, 1, "ONE\nONE-B"), _patch(4, 5, "FOUR-FIVE")])
    assert [o.applied for o in outcomes] == [True, True]
    assert (tree / "a.txt").read_text() == "ONE\nONE-B\ntwo\nthree\nFOUR-FIVE\n"


def test_an_overlapping_patch_is_skipped_for_the_first(tree: Path) -> None:
    first, second = _patch(2, 3, "TWO-THREE"), _patch(3, 4, "THREE-FOUR")
    outcomes = apply_fixes(tree, [first, second])
    assert [(o.applied, o.reason) for o in outcomes] == [
        (True, ""),
        (False, "overlaps the patch of lines 2-3"),
    ]
    assert (tree / "a.txt").read_text() == "one\nTWO-THREE\nfour\nfive\n"


def test_a_file_changed_at_the_lines_is_left_alone(tree: Path) -> None:
    (tree / "a.txt").write_text(TEXT.replace("two", "2"))
    outcomes = apply_fixes(tree, [_patch(2, 2, "TWO"), _patch(5, 5, "FIVE")])
    assert [(o.applied, o.reason) for o in outcomes] == [(False, CHANGED), (True, "")]
    assert (tree / "a.txt").read_text() == "one\n2\nthree\nfour\nFIVE\n"


def test_only_verified_patches_of_confirmed_findings_are_applied(tree: Path) -> None:
    unverified = _patch(1, 1, "X", patch_check=PatchCheck(False, "check failed", "one"))
    refuted = _patch(2, 2, "Y", verdict=Verdict(False, "no", fix_ok=True))
    rejected = _patch(3, 3, "Z", verdict=Verdict(True, "holds", fix_ok=False))
    unjudged = _patch(4, 4, "W", verdict=Verdict(True, "holds"))
    assert apply_fixes(tree, [unverified, refuted, rejected, unjudged]) == []
    assert (tree / "a.txt").read_text() == TEXT


def test_mode_and_line_endings_are_kept(tree: Path) -> None:
    (tree / "a.txt").write_bytes(TEXT.replace("\n", "\r\n").encode())
    (tree / "a.txt").chmod(0o750)
    (outcome,) = apply_fixes(tree, [_patch(2, 2, "TWO\nTWO-B")])
    assert outcome.applied
    assert (tree / "a.txt").read_bytes() == b"one\r\nTWO\r\nTWO-B\r\nthree\r\nfour\r\nfive\r\n"
    assert (tree / "a.txt").stat().st_mode & 0o777 == 0o750
    assert sorted(p.name for p in tree.iterdir()) == ["a.txt"]  # no temporary file left


@pytest.mark.parametrize("link", ["file", "directory"])
def test_a_symbolic_link_is_never_followed(tmp_path: Path, link: str) -> None:
    tree, outside = tmp_path / "repo", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (outside / "a.txt").write_text(TEXT)
    if link == "file":
        (tree / "a.txt").symlink_to(outside / "a.txt")
        path = "a.txt"
    else:
        (tree / "sub").symlink_to(outside)
        path = "sub/a.txt"
    (outcome,) = apply_fixes(tree, [_patch(1, 1, "ONE", path=path)])
    assert not outcome.applied and "symbolic link" in outcome.reason
    assert (outside / "a.txt").read_text() == TEXT


def test_a_missing_file_is_reported(tree: Path) -> None:
    os.remove(tree / "a.txt")
    (outcome,) = apply_fixes(tree, [_patch(1, 1, "ONE")])
    assert (outcome.applied, outcome.reason) == (False, "the file is gone from the working tree")


@pytest.mark.parametrize("path", ["../a.txt", "sub/../../a.txt", "./a.txt", "sub//a.txt"])
def test_a_path_that_climbs_out_or_is_not_plain_is_never_written(tmp_path: Path, path: str) -> None:
    tree = tmp_path / "repo"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.txt").write_text(TEXT)
    (tree / "sub" / "a.txt").write_text(TEXT)
    (tmp_path / "a.txt").write_text(TEXT)  # what `..` would reach
    (outcome,) = apply_fixes(tree, [_patch(1, 1, "ONE", path=path)])
    assert (outcome.applied, outcome.reason) == (False, "not a path inside the repository")
    assert {p.read_text() for p in (tmp_path / "a.txt", tree / "a.txt", tree / "sub/a.txt")} == {
        TEXT
    }


def test_each_outcome_names_its_own_finding(tree: Path) -> None:
    patches = [_patch(2, 3, "X"), _patch(3, 3, "Y"), _patch(5, 5, "Z", claim="changed")]
    (tree / "a.txt").write_text(TEXT.replace("five", "5"))
    outcomes = apply_fixes(tree, patches)
    assert [o.finding for o in outcomes] == patches
    assert [o.applied for o in outcomes] == [True, False, False]


def test_a_patch_ending_where_an_earlier_one_starts_overlaps_it(tree: Path) -> None:
    first, second = _patch(3, 4, "THREE-FOUR"), _patch(2, 3, "TWO-THREE")
    outcomes = apply_fixes(tree, [first, second])
    assert [(o.applied, o.reason) for o in outcomes] == [
        (True, ""),
        (False, "overlaps the patch of lines 3-4"),
    ]


def test_a_file_that_is_not_utf8_is_left_alone_saying_why(tree: Path) -> None:
    (tree / "a.txt").write_bytes(b"one\n\xff\xfe\n")
    (outcome,) = apply_fixes(tree, [_patch(1, 1, "ONE")])
    assert (outcome.finding.path, outcome.applied, outcome.reason) == (
        "a.txt",
        False,
        "the file is not UTF-8 text",
    )


def test_a_file_shorter_than_the_patch_or_changed_in_spaces_is_changed(tree: Path) -> None:
    spaced = "a b\nc d\n"
    (tree / "b.txt").write_text(spaced)
    reviewed = PatchCheck(True, "checked", "a b\nc d")
    moved = _patch(1, 2, "AB", path="b.txt", patch_check=reviewed)
    (tree / "a.txt").write_text("one\ntwo\n")  # lines 4-5 are gone
    outcomes = apply_fixes(tree, [_patch(4, 5, "X"), moved])
    assert [(o.applied, o.reason) for o in outcomes] == [(False, CHANGED), (True, "")]
    assert (tree / "b.txt").read_text() == "AB\n"


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        ("directory", "not a regular file in the working tree"),
        ("file-link", "a symbolic link is in the way; not followed"),
        ("dir-link", "a symbolic link is in the way; not followed"),
        ("missing-dir", "the file is gone from the working tree"),
    ],
)
def test_what_stops_a_patch_is_said_exactly(tmp_path: Path, make: str, reason: str) -> None:
    tree = tmp_path / "repo"
    (tree / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a.txt").write_text(TEXT)
    path = "sub/a.txt"
    if make == "directory":
        (tree / "sub" / "a.txt").mkdir()
    elif make == "file-link":
        (tree / "sub" / "a.txt").symlink_to(tmp_path / "elsewhere" / "a.txt")
    elif make == "dir-link":
        (tree / "link").symlink_to(tmp_path / "elsewhere")
        path = "link/a.txt"
    else:
        path = "gone/a.txt"
    (outcome,) = apply_fixes(tree, [_patch(1, 1, "ONE", path=path)])
    assert (outcome.applied, outcome.reason) == (False, reason)
    assert (tmp_path / "elsewhere" / "a.txt").read_text() == TEXT


def test_a_file_whose_replacement_cannot_be_written_is_left_alone_saying_why(
    tmp_path: Path,
) -> None:
    # The longest name a directory holds leaves no room for the temporary file's name.
    name = "a" * 236 + ".txt"
    (tmp_path / name).write_text(TEXT)
    outcomes = apply_fixes(
        tmp_path, [_patch(1, 1, "ONE", path=name), _patch(4, 4, "FOUR", path=name)]
    )
    assert [(o.finding.start_line, o.applied, o.reason) for o in outcomes] == [
        (1, False, os.strerror(errno.ENAMETOOLONG)),
        (4, False, os.strerror(errno.ENAMETOOLONG)),
    ]
    assert os.listdir(tmp_path) == [name] and (tmp_path / name).read_text() == TEXT


def test_a_patch_whose_reviewed_lines_are_unknown_is_never_applied(tree: Path) -> None:
    unknown = _patch(2, 2, "TWO", patch_check=PatchCheck(True, "checked", None))
    (outcome,) = apply_fixes(tree, [unknown])
    assert (outcome.applied, outcome.reason) == (False, CHANGED)
    assert (tree / "a.txt").read_text() == TEXT
