"""What a review covers: which content, compared with what, and which files are reviewable.

Four scopes: the current change (default), the index (``--staged``), a pull request
(``--base``/``--head``) and every file (``--all``). Positional pathspecs narrow any of them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from stat import S_ISLNK, S_ISREG
from typing import TYPE_CHECKING, Literal

from orch_review.errors import ConfigError, ExitCode, GitError, OrchReviewError, UsageError
from orch_review.quoting import quote_path
from orch_review.scope import git as gitops
from orch_review.scope import pathspecs
from orch_review.scope.attributes import (
    ContentReader,
    attribute_skips,
    content_reader,
    rediff_text_files,
)
from orch_review.scope.deleted import DeletedCode, deleted_code
from orch_review.scope.diff import FileChange, parse_patch
from orch_review.scope.own_reports import SKIP_REASON as OWN_REPORT
from orch_review.scope.own_reports import own_reports, working_copy
from orch_review.scope.reviewable import (
    BINARY_PROBE_BYTES,
    DEFAULT_GENERATED,
    DEFAULT_MAX_FILE_SIZE,
    REVIEW_IGNORE_FILE,
    SUBMODULE_MODE,
    SYMLINK_MODE,
    UNREADABLE,
    ReviewRules,
    SkippedFile,
    SkipSettings,
    can_read,
    file_looks_binary,
    has_text_suffix,
    looks_binary,
)
from orch_review.scope.skipped import all_skipped
from orch_review.wording import counted

if TYPE_CHECKING:
    import git

ScopeKind = Literal["change", "staged", "base", "all"]
Source = Literal["worktree", "index", "commit"]


class NothingToReview(OrchReviewError):
    """The scope holds no reviewable file; not an error for hooks (exit 0)."""

    exit_code = ExitCode.CLEAN


class NothingReadable(OrchReviewError):
    """Every reviewable file in scope is one orch-review may not read: nothing was covered."""

    exit_code = ExitCode.INCOMPLETE


@dataclass(frozen=True, slots=True)
class ScopeRequest:
    """What the user asked for."""

    kind: ScopeKind = "change"
    base: str | None = None
    head: str | None = None
    pathspecs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReviewFile:
    """One reviewable file in scope."""

    path: str
    size: int
    change: FileChange | None = None


@dataclass(frozen=True)
class Scope:
    """The content one review covers, resolved against git."""

    kind: ScopeKind
    root: Path
    git_dir: Path
    head: str  # human description of HEAD
    source: Source  # where the content comes from
    base_commit: str | None  # what the change is compared with (None for --all)
    head_commit: str | None  # the commit whose content is reviewed (source "commit")
    files: tuple[ReviewFile, ...]
    skipped: tuple[SkippedFile, ...]
    pathspecs: tuple[str, ...]
    untracked: tuple[str, ...] = ()  # untracked, not ignored files part of a worktree scope
    base_ref: str | None = None
    base_reason: str | None = None  # why base_ref was chosen, when it was not given
    excluded: frozenset[str] = field(default_factory=frozenset)
    # The revision configuration, ignore and guidance files are read from (with --base), so
    # a change cannot weaken its own review; None: the content under review itself.
    config_revision: str | None = None
    shard: str | None = None  # "K/N" when this is one shard of a split review
    # What the change deletes: files, and names removed code defined (for the main agent).
    deleted: tuple[DeletedCode, ...] = ()
    # Every tracked path whose working copy may differ from the index (a worktree scope not
    # narrowed by pathspecs), so the snapshot need not compare every file again; None: unknown.
    compared: tuple[str, ...] | None = None
    # Every untracked and ignored entry of the working tree, as the scope listed them (a
    # worktree scope not narrowed by pathspecs); None: not listed.
    others: tuple[str, ...] | None = None

    def describe(self) -> str:
        """One line for headers: what is reviewed, against what."""
        narrowed = f" under {pathspecs.shown_list(self.pathspecs)}" if self.pathspecs else ""
        if self.shard is not None:
            narrowed += f" [shard {self.shard}]"
        if self.kind == "all":
            return f"all tracked files{narrowed} ({self.head})"
        against = self.base_ref or (self.base_commit or "")[:12]
        if self.kind == "staged":
            if not against:
                return f"staged changes{narrowed} (the first commit: everything is new)"
            return f"staged changes{narrowed} (against {against})"
        if self.kind == "base":
            return f"{(self.head_commit or '')[:12]} against merge-base with {against}{narrowed}"
        why = f" [{self.base_reason}]" if self.base_reason else ""
        return f"working tree changes{narrowed} against {against}{why} ({self.head})"

    def nothing_reviewable(self) -> str | None:
        """When files are in scope but every one is skipped: what to say, with hints that fit
        the reasons; None otherwise."""
        if self.files or not self.skipped:
            return None
        return all_skipped(self.skipped, "files" if self.kind == "all" else "changed files")

    @property
    def paths(self) -> tuple[str, ...]:
        """Repository-relative paths of the reviewable files."""
        return tuple(f.path for f in self.files)

    @property
    def changes(self) -> dict[str, FileChange]:
        """Per reviewable path, its change (empty for ``--all``)."""
        return {f.path: f.change for f in self.files if f.change is not None}


def _review_rules(
    repo: git.Repo, skip: SkipSettings, rev: str | None, untracked: tuple[str, ...] = ()
) -> ReviewRules:
    """Rules from ``.orch-reviewignore`` files and the config's ``exclude``.

    The files are read at ``rev`` when given (a change cannot weaken its own review), else
    from the working tree: the tracked ones, those among ``untracked`` (files that are part of
    the change) and the one at the top in any case.
    """
    files: dict[str, str] = {}
    if rev is not None:
        for path in gitops.files_named(repo, rev, REVIEW_IGNORE_FILE):
            raw = gitops.show_file(repo, rev, path)
            if raw is not None:
                files[_directory_of(path)] = raw.decode("utf-8", "replace")
    else:
        root = gitops.work_tree(repo)
        named = gitops.files_named(repo, None, REVIEW_IGNORE_FILE)
        named += [p for p in untracked if p.rpartition("/")[2] == REVIEW_IGNORE_FILE]
        for path in {REVIEW_IGNORE_FILE, *named}:
            full = root / path
            if full.is_file():
                try:
                    text = full.read_text(encoding="utf-8", errors="replace")
                except OSError as exc:
                    raise ConfigError(
                        f"cannot read {quote_path(path)} ({exc.strerror}): its exclusions "
                        "would be lost; give this user read permission."
                    ) from None
                files[_directory_of(path)] = text
    return ReviewRules.build(files, skip.exclude, skip.generated, skip.max_file_size)


def _directory_of(path: str) -> str:
    return path.rpartition("/")[0]


def resolve_scope(
    repo: git.Repo,
    request: ScopeRequest,
    *,
    exclude: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    generated: tuple[str, ...] = DEFAULT_GENERATED,
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
) -> Scope:
    """Resolve ``request`` against the repository; raises NothingToReview when no file is
    in scope. When every file in scope is skipped the scope has no :attr:`Scope.files`, and
    :attr:`Scope.skipped` says why (:meth:`Scope.nothing_reviewable`).

    ``exclude`` and ``generated`` are gitignore-style globs of files not to review; files
    larger than ``max_file_size`` bytes are skipped too.
    """
    env = dict(os.environ) if env is None else env
    skip = SkipSettings(exclude, generated, max_file_size)
    if request.kind == "all":
        return _resolve_all(repo, request, skip, env)
    head = gitops.head_commit(repo)
    specs = request.pathspecs
    if request.kind == "staged":
        conflicted = gitops.unmerged_paths(repo)
        if conflicted:
            raise GitError(
                f"the index has unresolved merge conflicts ({', '.join(conflicted[:3])}"
                f"{', ...' if len(conflicted) > 3 else ''}): resolve them and `git add` the "
                "result before reviewing --staged."
            )
        # With no commit yet, `git diff --cached` compares with the empty tree by itself.
        revs = ("--cached", head) if head else ("--cached",)
        # git diffs a staged file from its working copy when that looks unchanged, and shows
        # an unreadable one as empty: such files are left out and skipped, as in a worktree.
        unreadable = _unreadable(repo, gitops.changed_names(repo, *revs, "--", *specs))
        read = content_reader(repo, ":0", BINARY_PROBE_BYTES)
        changes = _changes(repo, revs, specs, read, _left_out(unreadable))
        base_ref = "HEAD" if head else None
        return _build(
            repo, request, "index", head, None, base_ref, changes, (), skip, None, read, unreadable
        )
    if head is None:
        _check_paths_exist(repo, request)
        tracked = bool(gitops.index_modes(repo, specs))
        raise NothingToReview(
            "nothing to review: HEAD has no commits yet (a new repository or orphan branch); "
            + (
                "use --staged to review the staged files, or --all to review every tracked file."
                if tracked
                else "`git add` the files to review, then run `orch-review --staged`."
            )
        )
    chosen = None if request.base else gitops.default_base(repo)
    base_ref = request.base or (chosen[0] if chosen else None)
    base_reason = chosen[1] if chosen else None
    if base_ref is None:
        raise GitError(
            "no default branch (origin/HEAD, main or master) to compare with: pass --base REF, "
            "or use --all to review every file."
        )
    base_tip = gitops.resolve_commit(repo, base_ref)
    # With an explicit --base, exclusions come from the base: a change cannot weaken its review.
    config_rev = base_tip if request.base is not None else None
    if request.kind == "base" and request.head is not None:
        head_commit = gitops.resolve_commit(repo, request.head)
        base = gitops.merge_base(repo, base_tip, head_commit, (base_ref, request.head))
        read = content_reader(repo, head_commit, BINARY_PROBE_BYTES)
        changes = _changes(repo, (base, head_commit), specs, read)
        pinned = (base, head_commit, base_ref)
        return _build(repo, request, "commit", *pinned, changes, (), skip, config_rev, read)
    base = gitops.merge_base(repo, base_tip, head, (base_ref, "HEAD"))
    # Without pathspecs, one walk of the working tree lists what the snapshot hides and,
    # among it, the untracked files under review.
    others = None if specs else gitops.untracked_entries(repo)
    if others is None:
        untracked = gitops.untracked_files(repo, env, specs)
    else:
        untracked = gitops.untracked_among(repo, env, others)
    # Both sides of a rename: the snapshot records these without comparing every file again.
    # The patch below is not limited to them: a pathspec makes git compare a wide directory
    # with the base very slowly (3.4 s of CPU for 2 paths among 100,000 files in one
    # directory, against 0.14 s for all of it).
    named = gitops.changed_names(repo, "--no-renames", base, "--", *specs)
    # git cannot diff a file it may not read: such files are left out by name, and skipped.
    unreadable = _unreadable(repo, named + untracked)
    untracked = [p for p in untracked if p not in unreadable]
    # A file removed from the index but kept on disk (`git rm --cached`) is untracked: it is
    # part of the content under review, so it is not also a deletion.
    present = set(untracked)
    read = content_reader(repo, None, BINARY_PROBE_BYTES)
    changes = [
        c
        for c in _changes(repo, (base,), specs, read, _left_out(unreadable), bool(named))
        if not (c.status == "deleted" and c.path in present)
    ]
    changes += [_untracked_change(repo, p) for p in untracked]
    built = _build(
        repo,
        request,
        "worktree",
        base,
        None,
        base_ref,
        changes,
        tuple(untracked),
        skip,
        config_rev,
        read,
        unreadable,
    )
    if not specs:
        # A file whose working copy is back to the base but whose index is not differs from
        # the index without differing from the base: the index's changes name it.
        staged = gitops.changed_names(repo, "--cached", "--no-renames", base, "--")
        built = replace(
            built, compared=tuple(sorted({*named, *staged})), others=tuple(others or ())
        )
    return replace(built, base_reason=base_reason) if base_reason else built


def _changes(
    repo: git.Repo,
    revs: tuple[str, ...],
    specs: tuple[str, ...],
    read: ContentReader,
    leave_out: list[str] | None = None,
    any_changed: bool = True,
) -> list[FileChange]:
    """The changed files between ``revs`` (without ``leave_out``; none when ``any_changed``
    says a listing found none); text files are text whatever attributes say."""
    if not any_changed:
        return []
    changes = parse_patch(gitops.diff_lines(repo, *revs, "--", *specs, *(leave_out or ())))
    return rediff_text_files(repo, changes, revs, read)


def _unreadable(repo: git.Repo, paths: list[str]) -> list[str]:
    """Those of ``paths`` whose working copy this process may not read, sorted."""
    root = gitops.work_tree(repo)
    return sorted({p for p in paths if not can_read(root / p)})


def _left_out(paths: list[str]) -> list[str]:
    """Pathspecs that keep ``paths`` out of a ``git diff``."""
    return [f":(top,exclude,literal){p}" for p in paths]


def _untracked_change(repo: git.Repo, path: str) -> FileChange:
    full = gitops.work_tree(repo) / path
    try:
        if full.is_symlink():
            data = os.readlink(full).encode("utf-8", "surrogateescape")
        else:
            with full.open("rb") as stream:
                # A file over the size limit is skipped: its first bytes are enough.
                data = stream.read(DEFAULT_MAX_FILE_SIZE + 1)
    except OSError:
        data = b""  # a nested repository, or gone since git listed it
    lines = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    binary = looks_binary(data)
    return FileChange(
        path=path,
        status="added",
        additions=0 if binary else lines,
        binary=binary,
        added_lines=frozenset() if binary else frozenset(range(1, lines + 1)),
        hunks=() if binary or not lines else ((1, lines),),
    )


def _build(
    repo: git.Repo,
    request: ScopeRequest,
    source: Source,
    base: str | None,
    head_commit: str | None,
    base_ref: str | None,
    changes: list[FileChange],
    untracked: tuple[str, ...],
    skip: SkipSettings,
    config_rev: str | None,
    read: ContentReader,
    unreadable: list[str] | None = None,
) -> Scope:
    root = gitops.work_tree(repo)
    rules = _review_rules(repo, skip, config_rev, untracked)
    specs = request.pathspecs
    # Only the changed files are looked up: in a big repository, listing and measuring every
    # entry of the index or tree would cost more than the rest of resolving the scope.
    present = [c.path for c in changes if c.status != "deleted"]
    if source == "commit":
        assert head_commit is not None
        entries = gitops.tree_entries(repo, head_commit, present)
    else:  # the index; for the working tree, sizes are read from the files below
        entries = gitops.staged_entries(repo, present)
    modes = {path: mode for path, (mode, _) in entries.items()}
    sizes = {path: size for path, (_, size) in entries.items()} if source != "worktree" else {}
    files: list[ReviewFile] = []
    skipped = [SkippedFile(p, UNREADABLE) for p in unreadable or ()]
    nested: set[str] = set()
    by_attribute = attribute_skips(repo, present, config_rev, read)
    own = own_reports(gitops.git_dir(repo), present, _content_of(repo, source, head_commit))
    for change in sorted(changes, key=lambda c: c.path):
        if change.status == "deleted":
            skipped.append(SkippedFile(change.path, "deleted in this change"))
            continue
        if change.path in own:
            skipped.append(SkippedFile(change.path, OWN_REPORT))
            continue
        size = sizes.get(change.path)
        mode = modes.get(change.path)
        link_target = None
        if source == "worktree":
            full = root / change.path
            try:
                size = full.lstat().st_size
            except OSError:
                size = None
            if full.is_symlink():
                mode, link_target = SYMLINK_MODE, os.readlink(full)
            elif full.is_dir():
                mode = SUBMODULE_MODE
                nested.add(change.path)
            elif mode == SYMLINK_MODE:
                mode = "100644"  # a link in the index, a file in the working tree
        elif mode == SYMLINK_MODE:
            # The link as it is in the content under review: the index (":0") or the commit.
            rev = head_commit if source == "commit" and head_commit else ":0"
            raw = gitops.show_file(repo, rev, change.path)
            link_target = raw.decode("utf-8", "surrogateescape") if raw is not None else None
        reason = rules.skip_reason(
            change.path,
            mode=mode,
            size=size,
            binary=change.binary,
            link_target=link_target,
            root=root,
        ) or by_attribute.get(change.path)
        if reason is None and change.replaced is not None and mode == SYMLINK_MODE:
            # A file that became a link: the link's target is reviewed as itself, if changed.
            reason = f"{change.replaced} replaced by a symlink to {link_target or '?'}"
        if reason is not None:
            skipped.append(SkippedFile(change.path, reason))
        else:
            files.append(ReviewFile(change.path, size or 0, change))
    skipped.sort(key=lambda s: s.path)
    reviewed = {f.path for f in files}
    if not files:
        _refuse_unreadable(skipped)
        _check_paths_exist(repo, request)
        if not skipped:
            raise NothingToReview(_nothing_message(request, source, base))
        # Every file skipped: a scope of no file, so that each is listed with its reason.
    return Scope(
        kind=request.kind,
        root=root,
        git_dir=gitops.git_dir(repo),
        head=gitops.head_description(repo),
        source=source,
        base_commit=base,
        head_commit=head_commit,
        files=tuple(files),
        skipped=tuple(skipped),
        pathspecs=specs,
        untracked=tuple(p for p in untracked if p not in nested),
        base_ref=base_ref,
        excluded=frozenset(s.path for s in skipped),
        config_revision=config_rev,
        # Deleted files, and removed names of the files reviewed (not of generated ones).
        deleted=deleted_code(c for c in changes if c.status == "deleted" or c.path in reviewed),
    )


def _content_of(
    repo: git.Repo, source: Source, head_commit: str | None
) -> Callable[[str], bytes | None]:
    """A reader of a file's bytes in the content under review."""
    if source == "worktree":
        return working_copy(gitops.work_tree(repo))
    rev = head_commit if source == "commit" and head_commit else ":0"
    return partial(gitops.show_file, repo, rev)


def _check_paths_exist(repo: git.Repo, request: ScopeRequest) -> None:
    """A path typed wrong is a mistake to point out, not an empty review (exit 0)."""
    revisions = tuple(r for r in (gitops.head_commit(repo), request.head) if r)
    for spec in request.pathspecs:
        if not gitops.pathspec_matches(repo, spec, revisions):
            raise UsageError(
                f"`{pathspecs.shown(spec)}` matches no file in the repository (tracked, "
                "untracked or committed): check the path."
            )


def _refuse_unreadable(skipped: list[SkippedFile]) -> None:
    """When nothing is left to review and files were skipped as unreadable, the review did
    not cover them: that is not a clean result."""
    unreadable = [s.path for s in skipped if s.reason == UNREADABLE]
    if unreadable:
        raise NothingReadable(
            f"nothing could be reviewed: {counted(len(unreadable), 'file')} in scope cannot be "
            f"read ({', '.join(quote_path(p) for p in unreadable[:5])}"
            f"{', ...' if len(unreadable) > 5 else ''}): give this user read permission."
        )


def _add_sparse(
    repo: git.Repo,
    absent: list[str],
    modes: Mapping[str, str],
    rules: ReviewRules,
    root: Path,
    files: list[ReviewFile],
    skipped: list[SkippedFile],
) -> None:
    """Sort tracked files missing from the disk: a sparse checkout's (git keeps them out of
    the working tree) are reviewed from the index, the others were deleted."""
    sparse = gitops.skip_worktree_files(repo) if absent else set()
    entries = gitops.staged_entries(repo, [p for p in absent if p in sparse])
    read = content_reader(repo, ":0", BINARY_PROBE_BYTES)
    for path in absent:
        if path not in entries:
            skipped.append(SkippedFile(path, "deleted in the working tree"))
            continue
        mode, size = entries[path]
        reason = rules.skip_reason(
            path,
            mode=modes.get(path, mode),
            size=size,
            binary=mode in ("100644", "100755") and looks_binary(read(path) or b""),
            link_target=None,
            root=root,
        )
        if reason is not None:
            skipped.append(SkippedFile(path, reason))
        else:
            files.append(ReviewFile(path, size))
    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda f: f.path)


def _nothing_message(request: ScopeRequest, source: Source, base: str | None) -> str:
    where = f" under {' '.join(request.pathspecs)}" if request.pathspecs else ""
    if source == "index":
        return (
            f"nothing to review: no staged changes{where} (stage files with `git add`); use "
            "--all to review every file."
        )
    if source == "worktree" and request.base is None and not request.pathspecs:
        return (
            f"nothing to review: the working tree is clean and the branch has no commits since "
            f"the default branch (merge-base {(base or '')[:12]}); use --all to review every "
            "file, or --base REF to compare with another branch."
        )
    return f"nothing to review: no changed files{where}; use --all to review every file."


def _resolve_all(
    repo: git.Repo, request: ScopeRequest, skip: SkipSettings, env: Mapping[str, str]
) -> Scope:
    root = gitops.work_tree(repo)
    rules = _review_rules(repo, skip, None)
    files: list[ReviewFile] = []
    skipped: list[SkippedFile] = []
    top = f"{root}/"
    modes = gitops.index_modes(repo, request.pathspecs)
    read = content_reader(repo, None, BINARY_PROBE_BYTES)
    by_attribute = attribute_skips(repo, modes, None, read)
    own = own_reports(gitops.git_dir(repo), modes, working_copy(root))
    absent: list[str] = []
    # Strings, not Paths, and no per-file function calls that can be avoided: this loop runs
    # once per tracked file, 100,000 times in a big repository.
    for path, mode in modes.items():
        full = top + path
        try:
            stat = os.lstat(full)
        except OSError:
            absent.append(path)
            continue
        regular = S_ISREG(stat.st_mode)
        if path in own:
            skipped.append(SkippedFile(path, OWN_REPORT))
            continue
        if regular and not can_read(Path(full)):
            skipped.append(SkippedFile(path, UNREADABLE))
            continue
        link_target = os.readlink(full) if mode == SYMLINK_MODE and S_ISLNK(stat.st_mode) else None
        reason = rules.skip_reason(
            path,
            mode=mode,
            size=stat.st_size,
            binary=partial(file_looks_binary, full)
            if regular and not has_text_suffix(path)
            else False,
            link_target=link_target,
            root=root,
        ) or by_attribute.get(path)
        if reason is not None:
            skipped.append(SkippedFile(path, reason))
        else:
            files.append(ReviewFile(path, stat.st_size))
    if absent:
        _add_sparse(repo, absent, modes, rules, root, files, skipped)
    if not files:
        _refuse_unreadable(skipped)
        _check_paths_exist(repo, request)
    if not files and not skipped:  # with skipped files: a scope of none, listing them
        where = f" matching {' '.join(request.pathspecs)}" if request.pathspecs else ""
        hint = ""
        if gitops.untracked_files(repo, env, request.pathspecs):
            hint = "; --all reviews tracked files: `git add` the files to review first"
        raise NothingToReview(f"nothing to review: no tracked reviewable files{where}{hint}.")
    return Scope(
        kind="all",
        root=root,
        git_dir=gitops.git_dir(repo),
        head=gitops.head_description(repo),
        source="worktree",
        base_commit=None,
        head_commit=None,
        files=tuple(files),
        skipped=tuple(skipped),
        pathspecs=request.pathspecs,
        excluded=frozenset(s.path for s in skipped),
    )


def content_id(repo: git.Repo, scope: Scope) -> str:
    """A hash of everything under review, for journal keys of concerns naming no file.

    Computed when a review starts, not when the scope is resolved: ``plan`` never needs it.
    """
    source, files = scope.source, scope.files
    digest = hashlib.sha256(source.encode())
    if source == "commit":
        digest.update((scope.head_commit or "").encode())
        return digest.hexdigest()
    digest.update(gitops.index_entries(repo).encode())
    if source == "worktree":
        root = gitops.work_tree(repo)
        added = {f.path for f in files if f.change is not None and f.change.status == "added"}
        for path in sorted(set(gitops.modified_files(repo)) | added):
            digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
            digest.update(_file_digest(root / path))
    return digest.hexdigest()


def _file_digest(full: Path) -> bytes:
    """SHA-256 of a file's content (of its target name for a symlink), read in chunks."""
    try:
        if full.is_symlink():
            return hashlib.sha256(os.readlink(full).encode("utf-8", "surrogateescape")).digest()
        with full.open("rb") as stream:
            return hashlib.file_digest(stream, "sha256").digest()
    except OSError:
        return b"-"  # deleted, or a directory (a nested repository)
