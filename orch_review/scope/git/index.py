"""The index and the working copy, read through a private copy of the index."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.scope.git.repo import _lines0, work_tree
from orch_review.scope.reviewable import can_read

if TYPE_CHECKING:
    import git


def index_modes(repo: git.Repo, pathspecs: tuple[str, ...] = ()) -> dict[str, str]:
    """Path -> index mode ("100644", "120000" for a symlink, "160000" for a submodule)."""
    modes = {}
    for entry in _lines0(repo.git.ls_files("-z", "-s", "--full-name", "--", *pathspecs)):
        meta, _, path = entry.partition("\t")
        modes[path] = meta.split(" ", 1)[0]
    return modes


def indexed_files(repo: git.Repo) -> int | None:
    """How many entries the repository's index holds (its header says, no need to read the
    rest): about the files of the tree to link, known at once; None without an index."""
    try:
        with open(os.path.join(repo.git_dir, "index"), "rb") as index:
            header = index.read(12)
    except OSError:
        return None
    if len(header) < 12 or header[:4] != b"DIRC":
        return None
    return int.from_bytes(header[8:12], "big")


def skip_worktree_files(repo: git.Repo, pathspecs: tuple[str, ...] = ()) -> set[str]:
    """Tracked files git keeps out of the working tree on purpose (a sparse checkout's
    skip-worktree bit): git has them, the disk does not."""
    if not _may_skip_worktree(repo):
        return set()
    listing = _lines0(repo.git.ls_files("-z", "-t", "--full-name", "--", *pathspecs))
    return {entry[2:] for entry in listing if entry.startswith("S ")}


def _may_skip_worktree(repo: git.Repo) -> bool:
    """False when the index's header shows no entry can have the skip-worktree bit, so that
    the whole index need not be listed to find none: git writes version 2 unless an entry
    needs the extended flags that bit is one of. A split index keeps its entries in another
    file, whose version this one does not tell."""
    try:
        with index_file(repo, os.environ).open("rb") as index:
            header = index.read(8)
    except OSError:
        return True
    if header[:4] != b"DIRC" or int.from_bytes(header[4:8], "big") != 2:
        return True
    return any(Path(repo.git_dir).glob("sharedindex.*"))


def untracked_entries(repo: git.Repo, pathspecs: tuple[str, ...] = ()) -> list[str]:
    """Untracked files and whole untracked directories (ending in ``/``), ignored or not."""
    out = repo.git.ls_files(
        "-z", "--others", "--directory", "--no-empty-directory", "--", *pathspecs
    )
    return _lines0(out)


def pathspec_matches(repo: git.Repo, spec: str, revisions: tuple[str, ...] = ()) -> bool:
    """True when ``spec`` names any file: tracked, untracked, or in one of ``revisions``."""
    if repo.git.ls_files("-z", "--cached", "--others", "--", spec):
        return True
    return any(repo.git.ls_tree("-r", "-z", "--name-only", rev, "--", spec) for rev in revisions)


# What git reads to find the user's global configuration and excludes file.
_USER_CONFIG_VARIABLES = ("HOME", "XDG_CONFIG_HOME")


def untracked_files(
    repo: git.Repo, env: Mapping[str, str], pathspecs: tuple[str, ...] = ()
) -> list[str]:
    """Untracked files git does not ignore, sorted, as git decides: ``.gitignore`` at every
    level, ``.git/info/exclude`` and the global excludes file of the user ``env`` describes.

    A nested repository is listed as its directory (git would record it as a submodule).
    """
    command = ["git", "ls-files", "-z", "--others", "--exclude-standard", "--", *pathspecs]
    user = {name: env[name] for name in _USER_CONFIG_VARIABLES if name in env}
    return sorted(p.removesuffix("/") for p in _lines0(str(repo.git.execute(command, env=user))))


def untracked_among(repo: git.Repo, env: Mapping[str, str], entries: list[str]) -> list[str]:
    """The untracked files git does not ignore, sorted, as :func:`untracked_files` lists
    them, found among ``entries`` (:func:`untracked_entries` with no pathspec) instead of in
    another walk of the whole working tree: only the directories not ignored are walked."""
    user = {name: env[name] for name in _USER_CONFIG_VARIABLES if name in env}
    ignored = _ignored(repo, user, entries)
    if ignored is None:  # git could not say: ask it the usual way
        return untracked_files(repo, env)
    kept = [e for e in entries if e not in ignored]
    files = [e for e in kept if not e.endswith("/")]
    directories = [e for e in kept if e.endswith("/")]
    if directories:
        specs = [f":(top,literal){d}" for d in directories]
        command = ["git", "ls-files", "-z", "--others", "--exclude-standard", "--", *specs]
        files += _lines0(str(repo.git.execute(command, env=user)))
    return sorted(p.removesuffix("/") for p in files)


def _ignored(repo: git.Repo, user: Mapping[str, str], entries: list[str]) -> set[str] | None:
    """Those of ``entries`` (untracked; a directory ends in ``/``) that git ignores; None
    when git fails to tell."""
    if not entries:
        return set()
    with tempfile.TemporaryFile() as stdin:
        stdin.write(b"".join(e.encode("utf-8", "surrogateescape") + b"\0" for e in entries))
        stdin.seek(0)
        # No entry is tracked: the index, as large as the repository, need not be read.
        status, out, _ = repo.git.execute(
            ["git", "check-ignore", "--no-index", "-z", "--stdin"],
            istream=stdin,
            env=user,
            with_exceptions=False,
            with_extended_output=True,
        )
    if status not in (0, 1):  # 1: none is ignored
        return None
    return set(_lines0(str(out)))


def index_file(repo: git.Repo, env: Mapping[str, str]) -> Path:
    """The index git uses here: ``GIT_INDEX_FILE`` (a hook's temporary index) or the default."""
    explicit = env.get("GIT_INDEX_FILE")
    return Path(work_tree(repo), explicit) if explicit else Path(repo.index.path)


@contextmanager
def _index_copy(repo: git.Repo, env: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """Environment for git commands on a private copy of the index.

    ``git diff`` refreshes the index it reads and ``git write-tree`` stores its cache there,
    both ignoring ``GIT_OPTIONAL_LOCKS``; in a hook that index is the one ``git commit`` is
    about to record, so orch-review never writes to it. The copy keeps the original's
    modification time, which git compares file times with to spot racy entries.
    """
    index_path = index_file(repo, env)
    with tempdirs.directory("index") as tmp:
        copy = Path(tmp, "index")
        if index_path.exists():
            shutil.copy2(index_path, copy)
        yield {"GIT_INDEX_FILE": str(copy)}


def index_tree(repo: git.Repo, env: Mapping[str, str]) -> str:
    """The tree of the index (``GIT_INDEX_FILE`` honoured): what ``git commit`` would record."""
    with _index_copy(repo, env) as copy_env:
        return str(repo.git.execute(["git", "write-tree"], env=copy_env)).strip()


def working_tree_tree(repo: git.Repo, env: Mapping[str, str], untracked: list[str]) -> str:
    """A tree of the working copy: tracked files as they are on disk plus ``untracked``.

    Built in a copy of the index, so the user's index is never touched.
    """
    with _index_copy(repo, env) as copy_env:
        _record_working_copy(repo, copy_env, untracked)
        return str(repo.git.execute(["git", "write-tree"], env=copy_env)).strip()


def _record_working_copy(
    repo: git.Repo,
    index_env: Mapping[str, str],
    untracked: list[str],
    changed: Collection[str] | None = None,
) -> None:
    """Put every modified tracked file as it is on disk, plus ``untracked``, into the index
    ``index_env`` names; ``changed``, when given, holds every tracked path whose working copy
    may differ from the index (else they are found by comparing every file). A file that
    cannot be read is skipped by the scope: its indexed content stays."""
    root = work_tree(repo)
    if changed is None:
        modified = modified_files(repo)
    else:  # git keeps a sparse checkout's files off the disk: they are not deletions
        modified = sorted(set(changed) - skip_worktree_files(repo))
    paths = [p for p in modified if can_read(root / p)] + untracked
    if not paths:
        return
    listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
    with tempfile.TemporaryFile() as stdin:
        stdin.write(listing)
        stdin.seek(0)
        repo.git.execute(
            ["git", "update-index", "--add", "--remove", "-z", "--stdin"],
            istream=stdin,
            env=dict(index_env),
        )


def unmerged_paths(repo: git.Repo) -> list[str]:
    """Paths with unresolved merge conflicts in the index."""
    entries = _lines0(repo.git.ls_files("-z", "--unmerged", "--full-name"))
    return sorted({entry.partition("\t")[2] for entry in entries})


def index_entries(repo: git.Repo) -> str:
    """``git ls-files -s`` output: mode, blob id and path of every index entry."""
    return str(repo.git.ls_files("-s", "-z"))


def modified_files(repo: git.Repo) -> list[str]:
    """Tracked files whose working copy differs from the index (deleted ones included)."""
    with _index_copy(repo, os.environ) as copy_env:
        command = ["git", "diff", "--name-only", "-z", "--ignore-submodules=dirty"]
        out = repo.git.execute(command, env=copy_env)
    return _lines0(str(out))


def tree_in_index(
    repo: git.Repo,
    env: Mapping[str, str],
    index: Path,
    untracked: list[str] | None,
    changed: Collection[str] | None = None,
) -> str:
    """The tree of a copy, at ``index``, of the index git uses here (``GIT_INDEX_FILE``
    honoured); with ``untracked`` (a list, maybe empty), of the working copy instead: every
    modified tracked file as on disk (among ``changed`` when given), plus those untracked
    files. The copy is left in place, its stat data still matching the working tree, for a
    private repository to use."""
    shutil.copy2(index_file(repo, env), index)  # keeps the time racy entries are judged by
    copy_env = {"GIT_INDEX_FILE": str(index)}
    if untracked is not None:
        _record_working_copy(repo, copy_env, untracked, changed)
    return str(repo.git.execute(["git", "write-tree"], env=copy_env)).strip()
