"""What a review covers: the scope kind, the repository and the reviewable files."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import git as gitops
from orch_review.errors import OrchReviewError

if TYPE_CHECKING:
    import git

    from orch_review.config import Config

# How many files the main agent's task lists before it says how to page through the rest.
LISTED_FILES_CAP = 300


class NothingToReview(OrchReviewError):
    """The scope holds no reviewable file."""


@dataclass(frozen=True, slots=True)
class ReviewFile:
    """One reviewable file."""

    path: str
    size: int


@dataclass(frozen=True, slots=True)
class Scope:
    """The content one review covers."""

    kind: str  # "all" (the change-based scopes build on the same record)
    root: Path
    git_dir: Path
    head: str
    files: tuple[ReviewFile, ...]
    pathspecs: tuple[str, ...]
    content_id: str  # hash of everything under review, for the journal

    def describe(self) -> str:
        """One line for headers: what is reviewed, where."""
        narrowed = f" under {' '.join(self.pathspecs)}" if self.pathspecs else ""
        return f"all tracked files{narrowed} ({self.head})"

    @property
    def paths(self) -> tuple[str, ...]:
        """Repository-relative paths of the reviewable files."""
        return tuple(f.path for f in self.files)


def resolve_all(repo: git.Repo, config: Config, pathspecs: tuple[str, ...] = ()) -> Scope:
    """Every tracked file of the working tree (narrowed by ``pathspecs``) not excluded."""
    import pathspec

    root = gitops.work_tree(repo)
    excluded = pathspec.GitIgnoreSpec.from_lines(config.exclude)
    listed = gitops.tracked_files(repo, pathspecs)
    files = []
    for path in listed:
        full = root / path
        if full.is_symlink() or not full.is_file() or excluded.match_file(path):
            continue
        files.append(ReviewFile(path, full.stat().st_size))
    if not files:
        where = f" matching {' '.join(pathspecs)}" if pathspecs else ""
        raise NothingToReview(f"No tracked files{where} to review: commit or `git add` some first.")
    digest = hashlib.sha256(gitops.index_entries(repo).encode())
    for path in sorted(gitops.modified_files(repo)):
        try:
            digest.update(path.encode() + b"\0" + (root / path).read_bytes())
        except OSError:
            digest.update(path.encode() + b"\0deleted")
    return Scope(
        kind="all",
        root=root,
        git_dir=gitops.git_dir(repo),
        head=gitops.head_description(repo),
        files=tuple(files),
        pathspecs=pathspecs,
        content_id=digest.hexdigest(),
    )


def task_text(scope: Scope) -> str:
    """The main agent's first user turn: what to review, as data."""
    files = sorted(scope.files, key=lambda f: f.path)
    shown = files[:LISTED_FILES_CAP]
    total = sum(f.size for f in files)
    lines = [
        "Review the following repository content. Find real defects and report them through "
        "the Workflow tool.",
        "",
        "<scope>",
        f"kind: {scope.kind}",
        f"what: {scope.describe()}",
        f"files: {len(files)} ({total:,} bytes)",
        "</scope>",
        "",
        "<files>",
        *(f"{f.path}\t{f.size} bytes" for f in shown),
        "</files>",
    ]
    if len(files) > len(shown):
        lines.append(
            f"({len(files) - len(shown)} more files not listed; run `git ls-files` to see them.)"
        )
    lines += [
        "",
        "Your working directory is the repository root. Scout with bash, then call Workflow "
        "with one subtask per concern.",
    ]
    return "\n".join(lines)
