"""The agents' tree of links is kept between reviews: the next review changes only what
changed, and what the tree shows is always exactly the commit under review."""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
from pathlib import Path

import pytest

from orch_review.scope import git as gitops
from orch_review.scope.resolve import ScopeRequest, resolve_scope
from orch_review.scope.snapshot import snapshot
from orch_review.tempdirs import remove_tree
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import branch_repo, commit, write

CHANGED = 80  # files under review: more than mounting them one by one is worth


def _kept(repo: Path) -> Path:
    return repo / ".git" / "orch-review-tree" / "tree"


def _review(repo: Path, base: str = "HEAD~1", head: str = "HEAD") -> Path:
    """Prepare a review of ``base..head`` as a review does; the tree its agents would see."""
    opened = gitops.open_repo(repo)
    scope = resolve_scope(opened, ScopeRequest("base", base=base, head=head), env={})
    with snapshot(opened, scope, os.environ) as content:
        assert content.view is not None
        (_, tree, _), *_ = content.view.steps
        return Path(tree)


def _shown(tree: Path) -> dict[bytes, tuple[str, bytes]]:
    """Path -> (git mode, content or link target) of everything in ``tree`` but ``.git``."""
    found: dict[bytes, tuple[str, bytes]] = {}
    top = os.fsencode(tree)
    for current, dirs, files in os.walk(top):
        if current == top:
            dirs.remove(b".git")
        for name in [*dirs, *files]:
            path = os.path.join(current, name)
            relative = os.path.relpath(path, top)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[relative] = ("120000", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                found[relative] = ("040000", b"")
            else:
                mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
                with open(path, "rb") as stream:
                    found[relative] = (mode, stream.read())
    return found


def _committed(repo: Path, rev: str) -> dict[bytes, tuple[str, bytes]]:
    """The same of the commit ``rev``, from git."""
    listing = subprocess.run(
        ["git", "ls-tree", "-r", "-t", "-z", rev], cwd=repo, capture_output=True, check=True
    ).stdout
    found: dict[bytes, tuple[str, bytes]] = {}
    for entry in filter(None, listing.split(b"\0")):
        meta, path = entry.split(b"\t", 1)
        mode, _, oid = meta.decode().split()
        content = b""
        if mode == "160000":  # a submodule: an empty directory, as a checkout leaves it
            mode = "040000"
        elif mode != "040000":
            content = subprocess.run(
                ["git", "cat-file", "blob", oid], cwd=repo, capture_output=True, check=True
            ).stdout
        found[path] = (mode, content)
    return found


@pytest.fixture
def large_change(git_repo: GitRepoFactory) -> Path:
    """A branch editing many files, with an executable script, a symbolic link and a file
    whose name is not UTF-8 left as they are."""
    repo = branch_repo(git_repo)
    base = {f"pkg/m{n}.py": f"value = {n}\n" for n in range(CHANGED)}
    write(repo, {**base, "run.sh": "#!/bin/sh\necho run\n", "docs/guide.md": "guide\n"})
    (repo / "run.sh").chmod(0o755)
    (repo / "link.py").symlink_to("pkg/m0.py")
    Path(os.fsdecode(os.fsencode(repo) + b"/caf\xe9.txt")).write_bytes(b"latin-1 name\n")
    commit(repo)
    commit(repo, {f"pkg/m{n}.py": f"value = {n + 1}\n" for n in range(CHANGED)})
    return repo


def test_the_next_review_changes_only_what_changed(large_change: Path) -> None:
    tree = _review(large_change)
    assert tree == _kept(large_change)
    assert _shown(tree) == _committed(large_change, "HEAD")
    untouched = os.lstat(large_change / "docs" / "guide.md")

    tree = _review(large_change)

    assert _shown(tree) == _committed(large_change, "HEAD")
    again = os.lstat(large_change / "docs" / "guide.md")
    assert again.st_ctime_ns == untouched.st_ctime_ns  # not linked again: git need not reread it
    assert os.lstat(tree / "docs" / "guide.md").st_ino == again.st_ino


def test_what_changed_between_reviews_is_shown_as_the_new_commit_has_it(
    large_change: Path,
) -> None:
    _review(large_change)
    # Between reviews: a file edited in place and committed, one replaced by a new file of
    # the same content, the script no longer executable, a file where a directory was, a
    # file deleted, a directory made, a submodule checked out, an untracked file.
    git(large_change, "checkout", "-q", "-b", "next")
    write(large_change, {"pkg/m3.py": "edited in place\n"})
    (large_change / "pkg" / "m4.py").unlink()
    write(large_change, {"pkg/m4.py": "value = 5\n"})
    (large_change / "run.sh").chmod(0o644)
    (large_change / "docs" / "guide.md").unlink()
    (large_change / "docs").rmdir()
    write(large_change, {"docs": "now a file\n", "new/deep/file.py": "new\n"})
    (large_change / "pkg" / "m7.py").unlink()
    (large_change / "sub").mkdir()
    git(large_change / "sub", "init", "-q")
    commit(large_change / "sub", {"checked-out.py": "a submodule's own files\n"})
    commit(large_change, {f"pkg/m{n}.py": f"value = {n + 2}\n" for n in range(10, CHANGED)})
    assert "160000 commit" in git(large_change, "ls-tree", "HEAD", "sub")
    write(large_change, {"untracked.txt": "not in any commit\n", "pkg/m9.py": "on disk only\n"})

    tree = _review(large_change, "HEAD~1", "HEAD")

    assert tree == _kept(large_change)
    assert _shown(tree) == _committed(large_change, "HEAD")
    # Files the working tree now has in another version are shown as the commit has them.
    git(large_change, "checkout", "-q", "HEAD~1", "--", "pkg", "run.sh")
    tree = _review(large_change, "HEAD~1", "HEAD")
    assert _shown(tree) == _committed(large_change, "HEAD")


def test_a_tree_left_half_made_is_made_afresh(large_change: Path) -> None:
    tree = _review(large_change)
    # As a review killed while changing the tree, or a hand, may leave it: a copy
    # half-written, a stray file, a link to another file, a symbolic link for a directory.
    (tree / "pkg" / "m5.py").chmod(0o644)
    (tree / "pkg" / "m5.py").write_text("half")
    (tree / "pkg" / "stray.py").write_text("left behind\n")
    (tree / "run.sh").unlink()
    os.link(large_change / "pkg" / "m1.py", tree / "run.sh")
    remove_tree(tree / "docs")
    (tree / "docs").symlink_to("/")

    tree = _review(large_change)

    assert _shown(tree) == _committed(large_change, "HEAD")


def test_a_second_review_while_the_first_holds_the_tree_makes_its_own(
    large_change: Path,
) -> None:
    kept = _review(large_change)
    before = _shown(kept)
    place = kept.parent
    holder = os.open(place / "lock", os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a review running now would
        tree = _review(large_change)
        assert tree != kept and not tree.exists()  # its own, removed with its snapshot
    finally:
        os.close(holder)
    assert _shown(kept) == before


@pytest.mark.parametrize("planted", ["file", "link"])
def test_where_no_tree_can_be_kept_the_review_makes_its_own(
    large_change: Path, tmp_path: Path, planted: str
) -> None:
    place, elsewhere = _kept(large_change).parent, tmp_path / "elsewhere"
    elsewhere.mkdir()
    if planted == "file":
        place.write_text("in the way\n")
    else:  # as a restored cache could plant it: nothing is written where it points
        place.symlink_to(elsewhere)

    tree = _review(large_change)

    assert tree != _kept(large_change) and not tree.exists()
    assert list(elsewhere.iterdir()) == []


def test_a_changed_symbolic_link_in_a_large_repository_is_shown_through_the_tree(
    git_repo: GitRepoFactory,
) -> None:
    # Mounts cannot show a symbolic link under review; copying would write every file.
    repo = branch_repo(git_repo)
    commit(repo, {f"lib/f{n}.py": f"n = {n}\n" for n in range(2600)})
    (repo / "link.py").symlink_to("lib/f1.py")
    commit(repo)
    (repo / "link.py").unlink()
    (repo / "link.py").symlink_to("lib/f2.py")
    commit(repo, {"lib/f3.py": "n = -3\n"})

    tree = _review(repo)

    assert tree == _kept(repo)
    assert _shown(tree) == _committed(repo, "HEAD")


def _settled(repo: Path) -> None:
    """Every directory of the working tree last changed an hour ago, as in a checkout that
    is not brand new: their stamps are kept (a directory changed within the last seconds
    could change again unseen within the same clock tick)."""
    past = os.stat(repo).st_mtime - 3600
    for current, dirs, _ in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        os.utime(current, (past, past), follow_symlinks=False)


def test_directories_nothing_happened_to_keep_their_links_and_the_rest_is_exact(
    large_change: Path,
) -> None:
    write(large_change, {"docs/extra.md": "on disk, not committed yet\n"})
    _settled(large_change)
    tree = _review(large_change)
    stamps = (tree.parent / "stamps.json").read_text()
    assert '"docs"' in stamps and '"pkg"' in stamps  # settled directories are stamped

    git(large_change, "checkout", "-q", "-b", "next")
    commit(large_change)  # docs/extra.md: the directory on disk is as it was
    commit(large_change, {f"pkg/m{n}.py": f"value = {n + 5}\n" for n in range(CHANGED)})
    commit(large_change, {"pkg/sub/new.py": "new\n"})
    tree = _review(large_change, "HEAD~2", "HEAD")

    assert _shown(tree) == _committed(large_change, "HEAD")


def test_a_tampered_tree_or_stamp_is_not_believed(large_change: Path) -> None:
    _settled(large_change)
    tree = _review(large_change)
    (tree / "docs" / "stray.md").write_text("planted\n")
    (tree / "run.sh").unlink()
    (tree / "run.sh").write_text("#!/bin/sh\necho planted\n")
    stamps = tree.parent / "stamps.json"
    stamps.write_text(stamps.read_text().replace('"pkg": ["', '"pkg": ["0'))

    tree = _review(large_change)

    assert _shown(tree) == _committed(large_change, "HEAD")


def test_where_git_ignores_file_modes_every_link_is_checked(large_change: Path) -> None:
    git(large_change, "config", "core.fileMode", "false")
    _settled(large_change)
    _review(large_change)
    # The working copy becomes executable; git, told to ignore modes, sees no difference;
    # the directory's entries are unchanged, so only a look at the link tells.
    (large_change / "docs" / "guide.md").chmod(0o755)

    tree = _review(large_change)

    assert _shown(tree) == _committed(large_change, "HEAD")
    assert _shown(tree)[b"docs/guide.md"][0] == "100644"
