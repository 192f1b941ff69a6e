"""Parsing real `git diff` output: statuses, counts, new-side lines and awkward names."""

from __future__ import annotations

from pathlib import Path

import pytest

from orch_review.quoting import quote_path, unquote_path
from orch_review.scope import git as gitops
from orch_review.scope.diff import FileChange, parse_patch
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import commit, head

AWKWARD_NAMES = (
    "with space.py",
    "tab\there.py",
    'quote"d.py',
    "back\\slash.py",
    "ünïcødé.py",
    "new\nline.py",
    "-leading-dash.py",
    "--double-dash.py",
    "dir with space/inner file.py",
)


def _changes(repo: Path, *args: str) -> dict[str, FileChange]:
    lines = gitops.diff_lines(gitops.open_repo(repo), *args)
    return {c.path: c for c in parse_patch(lines)}


def test_statuses_counts_and_new_side_lines(git_repo: GitRepoFactory) -> None:
    old_body = "".join(f"line {i}\n" for i in range(1, 21))
    repo = git_repo(
        {
            "edit.py": old_body,
            "gone.py": "bye\n",
            "moved.py": "".join(f"stable {i}\n" for i in range(30)),
            "mode.sh": "echo hi\n",
            "blob.bin": b"\x00\x01\x02",
        }
    )
    base = head(repo)
    edited = old_body.replace("line 3\n", "LINE 3\n").replace("line 18\n", "")
    edited += "tail 1\ntail 2\n"
    (repo / "gone.py").unlink()
    (repo / "moved.py").rename(repo / "renamed.py")
    (repo / "mode.sh").chmod(0o755)
    commit(repo, {"edit.py": edited, "added.py": "a\nb\n", "blob.bin": b"\x00\x03"})

    changes = _changes(repo, base, "HEAD")

    edit = changes["edit.py"]
    assert (edit.status, edit.additions, edit.deletions) == ("modified", 3, 2)
    new_lines = edited.splitlines()
    assert sorted(edit.added_lines) == [3, 20, 21]
    assert [new_lines[n - 1] for n in sorted(edit.added_lines)] == ["LINE 3", "tail 1", "tail 2"]
    assert edit.hunks == ((1, 6), (15, 21))
    assert edit.in_hunks(5) and not edit.in_hunks(10)
    assert changes["gone.py"].status == "deleted"
    assert (changes["renamed.py"].status, changes["renamed.py"].old_path) == ("renamed", "moved.py")
    assert changes["renamed.py"].hunks == ()
    assert changes["added.py"] == FileChange(
        "added.py", "added", additions=2, added_lines=frozenset({1, 2}), hunks=((1, 2),)
    )
    assert changes["mode.sh"].status == "modified" and changes["mode.sh"].hunks == ()
    assert changes["blob.bin"].binary


def test_content_lines_that_look_like_headers_are_counted_as_content(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo({"tricky.txt": "-- removed dashes\nkeep\n++ plus\n"})
    base = head(repo)
    commit(repo, {"tricky.txt": "keep\n++ plus\n+++ b/fake\n--- a/fake\ndiff --git a/x b/x\n"})

    change = _changes(repo, base, "HEAD")["tricky.txt"]

    assert (change.additions, change.deletions) == (3, 1)
    assert change.added_lines == frozenset({3, 4, 5})
    assert list(_changes(repo, base, "HEAD")) == ["tricky.txt"]


def test_missing_final_newline_and_blank_context_lines(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"f.txt": "a\n\nb\nc\n\nd"})
    base = head(repo)
    # diff.suppressBlankEmpty prints blank context lines as empty lines, not " ".
    git(repo, "config", "diff.suppressBlankEmpty", "true")
    commit(repo, {"f.txt": "a\n\nB\nc\n\nd\ne"})

    change = _changes(repo, base, "HEAD")["f.txt"]

    assert (change.additions, change.deletions) == (3, 2)
    assert change.added_lines == frozenset({3, 6, 7})
    assert change.hunks == ((1, 7),)


@pytest.mark.parametrize(
    "setting",
    [
        ("diff.mnemonicPrefix", "true"),
        ("diff.noprefix", "true"),
        ("diff.submodule", "log"),
        ("diff.renames", "copies"),
        ("color.ui", "always"),
        ("diff.external", "false"),
    ],
)
def test_user_diff_configuration_does_not_change_what_is_parsed(
    git_repo: GitRepoFactory, setting: tuple[str, str]
) -> None:
    repo = git_repo({"b/inner.py": "x\n", "a.py": "one\n"})
    base = head(repo)
    git(repo, "config", *setting)
    commit(repo, {"b/inner.py": "y\n", "a.py": "one\ntwo\n", "copy.py": "one\n"})

    changes = _changes(repo, base, "HEAD")

    assert sorted(changes) == ["a.py", "b/inner.py", "copy.py"]
    assert changes["copy.py"].status == "added"
    assert changes["a.py"].added_lines == frozenset({2})


def test_awkward_file_names_round_trip(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"seed": "x\n"})
    base = head(repo)
    commit(repo, {name: f"content of {name!r}\n" for name in AWKWARD_NAMES})
    git(repo, "mv", "with space.py", "renamed with space.py")
    git(repo, "commit", "-q", "-m", "rename")

    changes = _changes(repo, base, "HEAD")

    expected = {n for n in AWKWARD_NAMES if n != "with space.py"} | {"renamed with space.py"}
    assert set(changes) == expected
    assert all(c.status == "added" and c.added_lines == {1} for c in changes.values())
    assert all((repo / path).is_file() for path in changes)


def test_rename_of_an_awkward_name_keeps_both_names(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"old name ü.py": "".join(f"l{i}\n" for i in range(20))})
    base = head(repo)
    git(repo, "mv", "old name ü.py", "new\tname ü.py")
    commit(repo, {"new\tname ü.py": "".join(f"l{i}\n" for i in range(20)) + "extra\n"})

    change = _changes(repo, base, "HEAD")["new\tname ü.py"]

    assert (change.status, change.old_path, change.added_lines) == (
        "renamed",
        "old name ü.py",
        frozenset({21}),
    )


def test_binary_files_take_their_names_from_the_header(git_repo: GitRepoFactory) -> None:
    names = ["an image.png", 'a" b.bin', "tab\t b.bin", "ü b.bin"]
    repo = git_repo({"seed": "x\n"})
    base = head(repo)
    commit(repo, {name: b"\x89PNG\x00\x00" for name in names})

    changes = _changes(repo, base, "HEAD")

    assert sorted(changes) == sorted(names)
    assert all(change.binary for change in changes.values())


def test_unquote_path_decodes_octal_escapes_and_keeps_plain_names() -> None:
    assert unquote_path('"\\303\\274n\\tx\\"y\\\\z"') == 'ün\tx"y\\z'
    assert unquote_path("plain name") == "plain name"
    assert unquote_path('"\\377bad"') == "\udcffbad"  # not UTF-8: kept, not lost


def test_quote_path_writes_what_git_writes_and_round_trips() -> None:
    assert quote_path("caf\udce9.py") == '"caf\\351.py"'
    assert quote_path('a\tb"c\\d\x01') == '"a\\tb\\"c\\\\d\\001"'
    assert quote_path("café.py") == "café.py"  # printable: left readable
    for name in ("caf\udce9.py", "a\nb", "x\x7f\udcff"):
        assert unquote_path(quote_path(name)) == name
