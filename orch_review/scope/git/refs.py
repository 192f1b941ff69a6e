"""Commits and branches: what HEAD is, what a ref names, the default base, merge bases."""

from __future__ import annotations

from typing import TYPE_CHECKING

from orch_review.errors import GitError

if TYPE_CHECKING:
    import git


def head_commit(repo: git.Repo) -> str | None:
    """The full object id of HEAD, or None when HEAD has no commit yet."""
    import git

    # Asked of git, not GitPython's ref objects: those only know SHA-1 ids.
    try:
        return str(repo.git.rev_parse("--verify", "--quiet", "HEAD^{commit}")).strip() or None
    except git.GitCommandError:
        return None


def head_description(repo: git.Repo) -> str:
    """The branch name, or the short commit for a detached HEAD, or "no commits yet"."""
    import git

    commit = head_commit(repo)
    if commit is None:
        return "no commits yet"
    try:
        branch = str(repo.git.symbolic_ref("--quiet", "--short", "HEAD")).strip()
    except git.GitCommandError:
        return f"detached at {commit[:12]}"
    return f"{branch} at {commit[:12]}"


def resolve_commit(repo: git.Repo, ref: str) -> str:
    """The commit sha ``ref`` names; GitError naming the ref when it names none."""
    import git

    try:
        name = f"{ref}^{{commit}}"
        return str(repo.git.rev_parse("--verify", "--quiet", "--end-of-options", name))
    except git.GitCommandError:
        remote, _, branch = ref.partition("/")
        fetch = f"git fetch {remote} {branch}" if branch and remote == "origin" else "git fetch"
        raise GitError(
            f"unknown ref `{ref}`: check the name, or fetch it first (`{fetch}`)."
        ) from None


def is_shallow(repo: git.Repo) -> bool:
    """True in a shallow clone."""
    return str(repo.git.rev_parse("--is-shallow-repository")).strip() == "true"


def default_branch(repo: git.Repo) -> str | None:
    """The branch a change is compared with by default (see :func:`default_base`)."""
    chosen = default_base(repo)
    return chosen[0] if chosen else None


def default_base(repo: git.Repo) -> tuple[str, str | None] | None:
    """The ref a change is compared with by default, and why it was chosen (None when the
    only candidate was a local branch and no remote is configured: nothing to explain).

    In order: ``origin/HEAD``, the remote's default branch; the current branch's upstream
    when it is another branch (``feature`` tracking ``origin/main``); the remote-tracking
    ``main`` or ``master`` of the upstream's remote, then of origin, then of other remotes;
    and only then a local ``main`` or ``master``, which may be far behind the remote (a
    repository that got its remote by ``git remote add`` has no ``origin/HEAD``).
    """
    import git

    def verified(ref: str) -> bool:
        try:
            repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")
        except git.GitCommandError:
            return False
        return True

    try:
        target = str(repo.git.symbolic_ref("-q", "--short", "refs/remotes/origin/HEAD"))
    except git.GitCommandError:
        target = ""
    if target and verified(target):
        return target, "origin/HEAD, the remote's default branch"
    branch, upstream = _current_upstream(repo)
    upstream_remote = None
    if upstream:
        upstream_remote, _, upstream_branch = upstream.partition("/")
        if upstream_branch != branch and verified(upstream):
            return upstream, f"the upstream of {branch}"
    remotes = _remote_names(repo)
    ordered = sorted(remotes, key=lambda r: (r != upstream_remote, r != "origin", r))
    for remote in ordered:
        for name in ("main", "master"):
            ref = f"{remote}/{name}"
            if verified(f"refs/remotes/{ref}"):
                tracking = f"{remote}'s {name}, preferred to a local branch that may be behind it"
                return ref, tracking + (f" (no {remote}/HEAD)" if remote == "origin" else "")
    for name in ("main", "master"):
        if verified(f"refs/heads/{name}"):
            local = f"local {name}: no remote-tracking main or master" if remotes else None
            return name, local
    return None


def _current_upstream(repo: git.Repo) -> tuple[str | None, str | None]:
    """The current branch's name and its upstream (``origin/main``), each None when absent."""
    import git

    try:
        branch = str(repo.git.symbolic_ref("-q", "--short", "HEAD")) or None
    except git.GitCommandError:
        return None, None
    try:
        upstream = str(repo.git.rev_parse("--abbrev-ref", "--symbolic-full-name", "@{upstream}"))
    except git.GitCommandError:
        return branch, None
    return branch, upstream or None


def _remote_names(repo: git.Repo) -> list[str]:
    """The configured remotes' names."""
    import git

    try:
        return str(repo.git.remote()).split()
    except git.GitCommandError:
        return []


def merge_base(repo: git.Repo, a: str, b: str, names: tuple[str, str] | None = None) -> str:
    """The best common ancestor of commits ``a`` and ``b`` (shown as ``names``); a GitError
    that says how to fetch it when it is missing."""
    import git

    shown_a, shown_b = names or (a, b)
    try:
        return str(repo.git.merge_base(a, b)).strip()
    except git.GitCommandError:
        if is_shallow(repo):
            raise GitError(
                f"this shallow clone lacks the common ancestor of {shown_a} and {shown_b}: run "
                "`git fetch --deepen=100` (or `git fetch --unshallow`), or check out with "
                "`fetch-depth: 0` in GitHub Actions."
            ) from None
        raise GitError(
            f"{shown_a} and {shown_b} have no common ancestor: pass another --base."
        ) from None


def has_commit(repo: git.Repo, rev: str) -> bool:
    """True when ``rev`` names a commit here."""
    try:
        resolve_commit(repo, rev)
    except GitError:
        return False
    return True
