"""Reading a repository's history for ``eval mine``: commits, the lines a commit removed,
and who last wrote a line. Plumbing only, through the inert repository of
:func:`orch_review.scope.git.open_repo` (textconv and external diff drivers off)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.errors import GitError, UsageError
from orch_review.scope.git.objects import FIXED_DATE, SNAPSHOT_IDENTITY

if TYPE_CHECKING:
    import git

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_BLAME = re.compile(r"^([0-9a-f]{40}) (\d+) (\d+)(?: \d+)?$")


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit: its id, its parents and its message."""

    sha: str
    parents: tuple[str, ...]
    message: str
    when: int  # committer time, seconds since the epoch

    @property
    def subject(self) -> str:
        """The message's first line."""
        return self.message.strip().splitlines()[0] if self.message.strip() else ""


@dataclass(frozen=True, slots=True)
class RemovedLine:
    """A line a commit deleted or changed, numbered as in its parent."""

    path: str
    line: int
    text: str
    #: The same hunk adds this line back with only its whitespace changed: a reformat.
    cosmetic: bool = False


@dataclass(frozen=True, slots=True)
class Origin:
    """The commit that last wrote a line, and where the line was in that commit."""

    sha: str
    path: str
    line: int


def _run(repo: git.Repo, *args: str) -> str:
    import git as gitpython

    try:
        return str(repo.git.execute(["git", *args], strip_newline_in_stdout=False))
    except gitpython.GitCommandError as exc:
        detail = (exc.stderr or "").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {detail[-1] if detail else exc}") from None


def check_since(repo: git.Repo, since: str, now: float) -> None:
    """UsageError unless git reads a date before ``now`` in ``since``: its date parser takes
    any text, and what it cannot read means "now", which selects no commit."""
    out = _run(repo, "rev-parse", f"--since={since}").strip()
    seconds = out.removeprefix("--max-age=")
    if seconds.isdigit() and int(seconds) < now - 1:
        return
    raise UsageError(
        f"--since {since!r}: git reads no past date in it, so no commit would be mined; "
        "give a date such as 2024-01-31 or '6 months ago'."
    )


def commits(repo: git.Repo, *, since: str | None, paths: Sequence[str]) -> list[Commit]:
    """The commits reachable from HEAD (newest first), merges included, touching ``paths``."""
    args = ["log", "--format=%H%x00%P%x00%ct%x00%B%x1e", "--no-color"]
    if since:
        args.append(f"--since={since}")
    out = _run(repo, *args, "HEAD", "--", *paths)
    found = []
    for record in out.split("\x1e"):
        fields = record.lstrip("\n").split("\x00")
        if len(fields) != 4 or not fields[0]:
            continue
        sha, parents, when, message = fields
        found.append(Commit(sha, tuple(parents.split()), message, int(when)))
    return found


def removed_lines(
    repo: git.Repo, parent: str, commit: str, paths: Sequence[str]
) -> list[RemovedLine]:
    """The lines ``commit`` deleted or changed, as numbered in ``parent`` (renames followed;
    binary files and paths git has to quote are left out)."""
    out = _run(
        repo,
        "diff-tree", "-p", "-U0", "-M", "--no-color", "--no-textconv", "--no-ext-diff",
        parent, commit, "--", *paths,
    )  # fmt: skip
    removed: list[RemovedLine] = []
    hunk: list[RemovedLine] = []
    added: list[str] = []
    path: str | None = None
    line = 0
    for raw in out.splitlines():
        if raw.startswith("--- "):
            name = raw[4:]
            path = name[2:] if name.startswith("a/") else None  # /dev/null, or a quoted name
            continue
        if raw.startswith("+++ ") or raw.startswith("diff --git"):
            continue
        hunk_header = _HUNK.match(raw)
        if hunk_header:
            removed += _reformatted(hunk, added)
            hunk, added = [], []
            line = int(hunk_header.group(1))
            continue
        if path is not None and raw.startswith("-"):
            hunk.append(RemovedLine(path, line, raw[1:]))
            line += 1
        elif raw.startswith("+"):
            added.append(raw[1:])
    removed += _reformatted(hunk, added)
    return removed


def _squashed(text: str) -> str:
    return "".join(text.split())


def _reformatted(removed: list[RemovedLine], added: list[str]) -> list[RemovedLine]:
    """``removed``, each marked cosmetic when the hunk adds it back with only whitespace
    changed (SZZ blames no line for a reformat)."""
    pool = Counter(_squashed(text) for text in added)
    marked = []
    for line in removed:
        key = _squashed(line.text)
        if pool[key] > 0:
            pool[key] -= 1
            line = RemovedLine(line.path, line.line, line.text, cosmetic=True)
        marked.append(line)
    return marked


def blame(
    repo: git.Repo, rev: str, path: str, lines: Sequence[int], *, moves: bool
) -> dict[int, Origin]:
    """Line number in ``rev`` -> the commit that last wrote it, for ``lines``. With
    ``moves``, lines moved or copied within or across files are followed to the commit that
    first wrote them. The whole file is blamed: git finds a moved block only when it sees
    the block, not one line of it."""
    if not lines:
        return {}
    wanted = set(lines)
    detect = ["-M", "-C"] if moves else []
    out = _run(repo, "blame", "--porcelain", "--no-textconv", "-w", *detect, rev, "--", path)
    origins: dict[int, Origin] = {}
    names: dict[str, str] = {}
    groups: list[list[object]] = []  # [sha, line in that commit, line in rev, its path]
    for raw in out.splitlines():
        match = _BLAME.match(raw)
        if match:
            groups.append([match.group(1), int(match.group(2)), int(match.group(3)), None])
        elif raw.startswith("filename ") and groups:
            groups[-1][3] = names[str(groups[-1][0])] = raw[len("filename ") :]
    for sha, orig, final, name in groups:
        assert isinstance(sha, str) and isinstance(orig, int) and isinstance(final, int)
        if final in wanted:
            origins[final] = Origin(sha, str(name or names.get(sha, path)), orig)
    return origins


def effective_remote_url(repo: git.Repo, name: str) -> str | None:
    """The URL of remote ``name``, or None when there is no such remote."""
    try:
        return _run(repo, "remote", "get-url", "--", name).strip() or None
    except GitError:
        return None


def parents(repo: git.Repo, commit: str) -> list[str]:
    """The parents of ``commit`` (none for a root commit)."""
    return _run(repo, "rev-list", "--parents", "-n", "1", commit, "--").split()[1:]


def changed_line_count(repo: git.Repo, commit: str) -> int:
    """Lines added plus lines deleted by a single-parent commit (binary files count 0)."""
    out = _run(repo, "diff-tree", "--numstat", "-M", "--no-color", f"{commit}^", commit)
    total = 0
    for row in out.splitlines():
        added, deleted, *_ = [*row.split("\t"), "", ""]
        if added.isdigit() and deleted.isdigit():
            total += int(added) + int(deleted)
    return total


def commit_patch(repo: git.Repo, base: str, patch: str, message: str) -> str:
    """An unreferenced commit of ``patch`` applied to ``base``, made in a private index
    (the work tree and the repository's index are not touched); GitError when the patch does
    not apply."""
    import tempfile

    import git as gitpython

    with (
        tempdirs.directory("patch") as scratch,
        tempfile.TemporaryFile() as stdin,
    ):
        stdin.write(patch.encode("utf-8", "surrogateescape"))
        stdin.seek(0)
        env = {"GIT_INDEX_FILE": str(Path(scratch, "index"))}
        try:
            repo.git.execute(["git", "read-tree", base], env=env)
            repo.git.execute(
                ["git", "apply", "--cached", "--whitespace=nowarn", "-"], istream=stdin, env=env
            )
            tree = str(repo.git.execute(["git", "write-tree"], env=env)).strip()
            command = ["git", "commit-tree", "--no-gpg-sign", tree, "-p", base, "-m", message]
            # Fixed dates: the same patch on the same base is the same commit, run after run.
            dated = {
                **SNAPSHOT_IDENTITY,
                "GIT_AUTHOR_DATE": FIXED_DATE,
                "GIT_COMMITTER_DATE": FIXED_DATE,
            }
            return str(repo.git.execute(command, env={**env, **dated})).strip()
        except gitpython.GitCommandError as exc:
            detail = (exc.stderr or "").strip().splitlines()
            raise GitError(
                f"the case's patch does not apply to {base[:12]}: {detail[-1] if detail else exc}"
            ) from None
