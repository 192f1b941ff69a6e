"""What a tree (or the index) holds: names, modes, sizes and object ids of its entries."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING

from orch_review.scope.git.repo import _lines0

if TYPE_CHECKING:
    import git


# Bytes of path arguments for one command; past this, everything is listed and filtered.
_ARGV_BUDGET = 100_000
# Paths named as pathspecs at most; past this, everything is listed and filtered: git
# matches every entry of a wide directory against every pathspec (1,500 paths in a flat
# 100,000-file tree: 0.8 s a listing, against 0.1 s for all of it).
_PATHSPECS = 200


def as_pathspecs(paths: Collection[str]) -> list[str] | None:
    """Literal pathspecs (from the top) naming exactly ``paths``, or None when they are too
    many to be worth matching one by one or to fit on a command line."""
    if len(paths) > _PATHSPECS or sum(len(p) + 1 for p in paths) > _ARGV_BUDGET:
        return None
    return [f":(top,literal){p}" for p in sorted(paths)]


def _entries_about(
    repo: git.Repo, command: list[str], paths: Collection[str]
) -> Iterator[tuple[list[str], str]]:
    """The fields and path of each ``meta<TAB>path`` entry ``command`` (NUL-terminated
    output, literal pathspecs) lists about ``paths``: named as arguments when they are few
    and fit on one command line, else everything is listed and filtered."""
    wanted = set(paths)
    if not wanted:
        return
    few = len(wanted) <= _PATHSPECS and sum(len(p) + 1 for p in wanted) <= _ARGV_BUDGET
    named = list(wanted) if few else []
    for entry in _lines0(str(repo.git.execute([*command, "--", *named]))):
        meta, _, path = entry.partition("\t")
        if path in wanted:
            yield meta.split(), path


def tree_entries(repo: git.Repo, rev: str, paths: Collection[str]) -> dict[str, tuple[str, int]]:
    """Path -> (mode, size) of each of ``paths`` in the tree of ``rev`` (size 0 for a
    submodule). ``paths`` are file names, not patterns: ls-tree supports neither globs nor
    exclusions, so the user's pathspecs cannot be passed to it."""
    # Sizes are asked of the entries wanted alone: `ls-tree -l` would look up every blob of
    # the tree when the paths are too many to name.
    command = ["git", "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", rev]
    found = {path: (mode, oid) for (mode, _, oid), path in _entries_about(repo, command, paths)}
    sizes = _sizes(repo, [oid for mode, oid in found.values() if mode != "160000"])
    return {path: (mode, sizes.get(oid, 0)) for path, (mode, oid) in found.items()}


def _sizes(repo: git.Repo, oids: Sequence[str]) -> dict[str, int]:
    """Object id -> size of each of ``oids``, through one ``git cat-file --batch-check``."""
    if not oids:
        return {}
    with tempfile.TemporaryFile() as stdin:
        stdin.write("".join(f"{oid}\n" for oid in oids).encode())
        stdin.seek(0)
        command = ["git", "cat-file", "--batch-check=%(objectname) %(objectsize)"]
        out = str(repo.git.execute(command, istream=stdin))
    return {
        oid: int(size)
        for oid, _, size in (line.partition(" ") for line in out.split("\n"))
        if size.isdigit()
    }


def whole_tree(repo: git.Repo, commit: str) -> list[tuple[str, str, str]]:
    """(mode, object id, path) of every entry of ``commit``'s tree, directories first."""
    command = ["git", "ls-tree", "-r", "-t", "-z", "--full-tree", commit]
    found = []
    for entry in str(repo.git.execute(command)).split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        mode, _, oid = meta.split(" ", 2)
        found.append((mode, oid, path))
    return found


def tree_archive(repo: git.Repo, commit: str) -> bytes:
    """The files of ``commit`` as a tar archive (``git archive``)."""
    data = repo.git.execute(
        ["git", "archive", "--format=tar", commit],
        stdout_as_string=False,
        strip_newline_in_stdout=False,
    )
    assert isinstance(data, bytes)
    return data


def staged_entries(repo: git.Repo, paths: Collection[str]) -> dict[str, tuple[str, int]]:
    """Path -> (mode, size of the staged content) of each of ``paths`` in the index: only
    those files are listed and measured, not the whole index."""
    command = ["git", "--literal-pathspecs", "ls-files", "-z", "-s", "--full-name"]
    blobs = {path: (mode, sha) for (mode, sha, _), path in _entries_about(repo, command, paths)}
    if not blobs:
        return {}
    with tempfile.TemporaryFile() as stdin:
        stdin.write("".join(f"{sha}\n" for _, sha in blobs.values()).encode())
        stdin.seek(0)
        command = ["git", "cat-file", "--batch-check=%(objectsize)"]
        sizes = str(repo.git.execute(command, istream=stdin)).split("\n")
    return {
        path: (mode, int(size) if size.isdigit() else 0)
        for (path, (mode, _)), size in zip(blobs.items(), sizes, strict=False)
    }


# The empty tree of each object format (git knows it without storing it), by id length.
_EMPTY_TREES = {
    40: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    64: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}
_GLOB_SPECIAL = re.compile(r"[*?\[\]\\]")
_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _called_in_tree(repo: git.Repo, rev: str, names: Collection[str]) -> list[str] | None:
    """Paths of the files called one of ``names`` in the tree of the commit or tree ``rev``
    (an object id), matched by git itself: the tree compared with the empty tree, limited
    to those names, so that no listing of every path reaches Python. None when ``rev`` or a
    name does not lend itself to it."""
    if not _OBJECT_ID.fullmatch(rev) or any(_GLOB_SPECIAL.search(n) for n in names):
        return None
    specs = [f":(top,glob)**/{name}" for name in sorted(names)]
    command = ["git", "diff-tree", "-r", "--name-only", "-z", "--no-renames"]
    return _lines0(str(repo.git.execute([*command, _EMPTY_TREES[len(rev)], rev, "--", *specs])))


def files_named(repo: git.Repo, rev: str | None, name: str) -> list[str]:
    """Paths of the files called ``name`` in any directory: in the tree of ``rev``, or (None)
    in the index."""
    if rev is None:
        return _lines0(repo.git.ls_files("-z", "--cached", "--", f":(top,glob)**/{name}"))
    matched = _called_in_tree(repo, rev, [name])
    if matched is not None:
        return matched
    # endswith first: a C-speed test that rules out nearly every path of a big tree.
    nested = "/" + name
    return [
        p for p in files_at(repo, rev) if p.endswith(name) and (p == name or p.endswith(nested))
    ]


def files_at(repo: git.Repo, rev: str) -> list[str]:
    """Every file path in the tree of ``rev``."""
    return _lines0(repo.git.ls_tree("-r", "-z", "--name-only", "--full-tree", rev))


def tree_of(repo: git.Repo, commit: str) -> str:
    """The id of ``commit``'s tree."""
    return str(repo.git.rev_parse("--verify", f"{commit}^{{tree}}")).strip()


def tree_blobs(repo: git.Repo, rev: str, paths: Collection[str]) -> dict[str, tuple[str, str]]:
    """Path -> (mode, object id) of each of ``paths`` that is a file in the tree of ``rev``."""
    command = ["git", "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", rev]
    return {
        path: (mode, oid)
        for (mode, kind, oid), path in _entries_about(repo, command, paths)
        if kind == "blob"
    }


def directory_entries(
    repo: git.Repo, rev: str, directories: Sequence[str]
) -> dict[str, list[tuple[str, str, str]]]:
    """Directory -> (mode, object id, name) of each entry directly in it, in the tree of
    ``rev`` ("" is the top directory)."""
    found: dict[str, list[tuple[str, str, str]]] = {d: [] for d in directories}
    nested = [f"{d}/" for d in directories if d]
    commands = [["git", "ls-tree", "-z", "--full-tree", rev]] if "" in found else []
    if nested:
        commands.append(["git", "--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--"])
    for command in commands:
        args = nested if "--" in command else []
        for entry in _lines0(str(repo.git.execute([*command, *args]))):
            meta, _, path = entry.partition("\t")
            mode, _, oid = meta.split()
            parent, _, name = path.rpartition("/")
            if parent in found:
                found[parent].append((mode, oid, name))
    return found


def files_called(repo: git.Repo, rev: str, names: Collection[str]) -> list[str]:
    """Paths of the files called one of ``names``, in any directory of the tree of ``rev``.
    Matched by git when it can (:func:`_called_in_tree`), else picked out of its listing
    with one regular expression: in a 100,000-file tree, making a list of every path first
    costs more than git listing them."""

    if not names:
        return []
    matched = _called_in_tree(repo, rev, names)
    if matched is not None:
        return matched
    out = str(repo.git.ls_tree("-r", "-z", "--name-only", "--full-tree", rev))
    alternatives = "|".join(re.escape(n) for n in sorted(names))
    pattern = re.compile(f"(?:^|\0)((?:[^\0]*/)?(?:{alternatives}))(?=\0|$)")
    return pattern.findall(out)


def files_under(repo: git.Repo, rev: str, directories: Collection[str]) -> list[str]:
    """Paths of the files in (or below) ``directories`` of the tree of ``rev``."""
    if not directories:
        return []
    command = ["git", "--literal-pathspecs", "ls-tree", "-r", "-z", "--name-only", "--full-tree"]
    return _lines0(str(repo.git.execute([*command, rev, "--", *sorted(directories)])))


def submodules(repo: git.Repo, rev: str | None) -> list[str]:
    """Paths of the submodules in the tree of ``rev``, or (None) in the index."""

    if rev is None:
        out = str(repo.git.execute(["git", "ls-files", "-z", "-s", "--full-name"]))
    else:
        out = str(repo.git.execute(["git", "ls-tree", "-r", "-z", "--full-tree", rev]))
    return re.findall(r"(?:^|\0)160000 [^\t]*\t([^\0]*)", out)
