"""Every git operation orch-review performs, through GitPython."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.errors import GitError

if TYPE_CHECKING:
    import git

# Commits orch-review writes for a snapshot are never referenced by a branch.
SNAPSHOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "orch-review",
    "GIT_AUTHOR_EMAIL": "orch-review@localhost",
    "GIT_COMMITTER_NAME": "orch-review",
    "GIT_COMMITTER_EMAIL": "orch-review@localhost",
}


def open_repo(cwd: Path, env: Mapping[str, str] | None = None) -> git.Repo:
    """The repository containing ``cwd`` (honouring ``GIT_DIR`` when a hook sets it)."""
    import git

    git_dir = (env or {}).get("GIT_DIR")
    try:
        if git_dir:
            repo = git.Repo(Path(cwd, git_dir), search_parent_directories=False)
        else:
            repo = git.Repo(cwd, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(
            f"{cwd} is not inside a git repository: run orch-review from a repository "
            "(or `git init` one first)."
        ) from None
    except git.GitCommandNotFound:
        raise GitError("git is not installed or not on PATH: install git and try again.") from None
    if repo.bare or repo.working_tree_dir is None:
        raise GitError(
            f"{repo.git_dir} is a bare repository: orch-review needs a working tree; run it in a "
            "clone with a checkout."
        )
    # Reading must never write: no opportunistic index refresh behind a running `git commit`.
    repo.git.update_environment(GIT_OPTIONAL_LOCKS="0")
    return repo


def work_tree(repo: git.Repo) -> Path:
    """The repository's top-level directory."""
    assert repo.working_tree_dir is not None  # open_repo refuses bare repositories
    return Path(repo.working_tree_dir)


def git_dir(repo: git.Repo) -> Path:
    """The common git directory (shared by worktrees), where orch-review keeps its journal."""
    return Path(repo.common_dir)


def _lines0(output: str) -> list[str]:
    return [p for p in output.split("\0") if p]


def index_modes(repo: git.Repo, pathspecs: tuple[str, ...] = ()) -> dict[str, str]:
    """Path -> index mode ("100644", "120000" for a symlink, "160000" for a submodule)."""
    modes = {}
    for entry in _lines0(repo.git.ls_files("-z", "-s", "--full-name", "--", *pathspecs)):
        meta, _, path = entry.partition("\t")
        modes[path] = meta.split(" ", 1)[0]
    return modes


def untracked_entries(repo: git.Repo, pathspecs: tuple[str, ...] = ()) -> list[str]:
    """Untracked files and whole untracked directories (ending in ``/``), ignored or not."""
    out = repo.git.ls_files(
        "-z", "--others", "--directory", "--no-empty-directory", "--", *pathspecs
    )
    return _lines0(out)


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
    """``origin/HEAD``'s target, else the first of main, master (local, then origin/)."""
    import git

    try:
        target = str(repo.git.symbolic_ref("-q", "--short", "refs/remotes/origin/HEAD"))
        if target:
            return target
    except git.GitCommandError:
        pass
    for candidate in ("main", "master", "origin/main", "origin/master"):
        try:
            repo.git.rev_parse("--verify", "--quiet", f"{candidate}^{{commit}}")
            return candidate
        except git.GitCommandError:
            continue
    return None


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


def diff_lines(repo: git.Repo, *args: str) -> list[str]:
    """``git diff`` patch output as lines (names C-quoted, content bytes kept)."""
    # Pin every option user configuration could change the shape of the output with
    # (diff.mnemonicPrefix, diff.noprefix, diff.submodule, textconv drivers, ...).
    command = [
        "git", "-c", "core.quotePath=true", "diff", "--no-color", "--no-ext-diff",
        "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--submodule=short",
        "-M", "--unified=3", *args,
    ]  # fmt: skip
    with _index_copy(repo, os.environ) as copy_env:
        out = repo.git.execute(
            command, env=copy_env, stdout_as_string=False, strip_newline_in_stdout=False
        )
    assert isinstance(out, bytes)
    return out.decode("utf-8", errors="surrogateescape").split("\n")


def modified_files(repo: git.Repo) -> list[str]:
    """Tracked files whose working copy differs from the index (deleted ones included)."""
    with _index_copy(repo, os.environ) as copy_env:
        out = repo.git.execute(["git", "diff", "--name-only", "-z"], env=copy_env)
    return _lines0(str(out))


def global_excludes_file(repo: git.Repo, env: Mapping[str, str]) -> Path | None:
    """The user's global ignore file: core.excludesFile, else $XDG_CONFIG_HOME/git/ignore."""
    import git

    try:
        configured = str(repo.git.config("--path", "--get", "core.excludesFile")).strip()
        if configured:
            # git opens a relative path from where it runs: the top of the work tree here.
            return work_tree(repo) / configured
    except git.GitCommandError:
        pass
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"], "git", "ignore")
    return Path(env["HOME"], ".config", "git", "ignore") if env.get("HOME") else None


# Bytes of path arguments for one command; past this, everything is listed and filtered.
_ARGV_BUDGET = 100_000


def _entries_about(
    repo: git.Repo, command: list[str], paths: Collection[str]
) -> Iterator[tuple[list[str], str]]:
    """The fields and path of each ``meta<TAB>path`` entry ``command`` (NUL-terminated
    output, literal pathspecs) lists about ``paths``: named as arguments when they fit on
    one command line, else everything is listed and filtered."""
    wanted = set(paths)
    if not wanted:
        return
    named = list(wanted) if sum(len(p) + 1 for p in wanted) <= _ARGV_BUDGET else []
    for entry in _lines0(str(repo.git.execute([*command, "--", *named]))):
        meta, _, path = entry.partition("\t")
        if path in wanted:
            yield meta.split(), path


def tree_entries(repo: git.Repo, rev: str, paths: Collection[str]) -> dict[str, tuple[str, int]]:
    """Path -> (mode, size) of each of ``paths`` in the tree of ``rev`` (size 0 for a
    submodule). ``paths`` are file names, not patterns: ls-tree supports neither globs nor
    exclusions, so the user's pathspecs cannot be passed to it."""
    command = ["git", "--literal-pathspecs", "ls-tree", "-r", "-l", "-z", "--full-tree", rev]
    return {
        path: (mode, int(size) if size.isdigit() else 0)
        for (mode, _, _, size), path in _entries_about(repo, command, paths)
    }


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


def files_named(repo: git.Repo, rev: str | None, name: str) -> list[str]:
    """Paths of the files called ``name`` in any directory: in the tree of ``rev``, or (None)
    in the index."""
    if rev is None:
        return _lines0(repo.git.ls_files("-z", "--cached", "--", f":(top,glob)**/{name}"))
    # endswith first: a C-speed test that rules out nearly every path of a big tree.
    nested = "/" + name
    return [
        p for p in files_at(repo, rev) if p.endswith(name) and (p == name or p.endswith(nested))
    ]


def files_at(repo: git.Repo, rev: str) -> list[str]:
    """Every file path in the tree of ``rev``."""
    return _lines0(repo.git.ls_tree("-r", "-z", "--name-only", "--full-tree", rev))


def show_file(repo: git.Repo, rev: str, path: str) -> bytes | None:
    """The content of ``path`` at ``rev``, or None when it does not exist there."""
    import git

    try:
        out = repo.git.execute(
            ["git", "show", f"{rev}:{path}"], stdout_as_string=False, strip_newline_in_stdout=False
        )
    except git.GitCommandError:
        return None
    assert isinstance(out, bytes)
    return out


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
    with tempfile.TemporaryDirectory(prefix="orch-review-index-") as tmp:
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
        paths = modified_files(repo) + untracked
        if paths:
            listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
            with tempfile.TemporaryFile() as stdin:
                stdin.write(listing)
                stdin.seek(0)
                repo.git.execute(
                    ["git", "update-index", "--add", "--remove", "-z", "--stdin"],
                    istream=stdin,
                    env=copy_env,
                )
        return str(repo.git.execute(["git", "write-tree"], env=copy_env)).strip()


def commit_tree(repo: git.Repo, tree: str, parent: str | None, message: str) -> str:
    """An unreferenced commit of ``tree`` on top of ``parent``."""
    args = ["git", "commit-tree", "--no-gpg-sign", tree, "-m", message]
    if parent is not None:
        args += ["-p", parent]
    return str(repo.git.execute(args, env=SNAPSHOT_IDENTITY)).strip()


def materialize(repo: git.Repo, commit: str, directory: Path) -> None:
    """Make ``directory`` a repository checked out at ``commit``, sharing our objects.

    Every git variable is set explicitly so a hook's ``GIT_DIR``/``GIT_INDEX_FILE`` cannot
    redirect these commands to the user's repository.
    """
    dot_git = directory / ".git"
    env = {
        "GIT_DIR": str(dot_git),
        "GIT_WORK_TREE": str(directory),
        "GIT_INDEX_FILE": str(dot_git / "index"),
        "GIT_OBJECT_DIRECTORY": str(dot_git / "objects"),
        "GIT_COMMON_DIR": str(dot_git),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": "",
    }
    # Objects are shared, so the snapshot must hash them the same way (SHA-1 or SHA-256).
    object_format = str(repo.git.rev_parse("--show-object-format")).strip()
    init = ["git", "init", "-q"]
    if object_format == "sha256":  # older gits, SHA-1 only, echo the unknown option back
        init.append("--object-format=sha256")
    repo.git.execute(init, env=env)
    alternates = dot_git / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text(os.path.abspath(git_dir(repo) / "objects") + "\n", encoding="utf-8")
    repo.git.execute(["git", "update-ref", "--no-deref", "HEAD", commit], env=env)
    # checkout.workers=0: write files with one worker per core (git 2.32+; older gits ignore it).
    checkout = ["git", "-c", "checkout.workers=0", "read-tree", "-u", "--reset", commit]
    repo.git.execute(checkout, env=env)


def unmerged_paths(repo: git.Repo) -> list[str]:
    """Paths with unresolved merge conflicts in the index."""
    entries = _lines0(repo.git.ls_files("-z", "--unmerged", "--full-name"))
    return sorted({entry.partition("\t")[2] for entry in entries})


def index_entries(repo: git.Repo) -> str:
    """``git ls-files -s`` output: mode, blob id and path of every index entry."""
    return str(repo.git.ls_files("-s", "-z"))


# Cloning is the one git call whose input (a URL from an evaluation case file) is not ours:
# no `ext::` transport (it runs commands), no hooks, no password prompt.
_CLONE_CONFIG = ("-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null")


def clone(url: str, destination: Path) -> None:
    """Clone ``url`` into the new folder ``destination``; GitError naming the URL on failure."""
    import git

    if url.startswith("-"):
        raise GitError(f"not a repository URL: {url[:60]!r}")
    command = ["git", *_CLONE_CONFIG, "clone", "--quiet", "--", url, str(destination)]
    try:
        git.Git().execute(command, env={"GIT_TERMINAL_PROMPT": "0"})
    except git.GitCommandError as exc:
        raise GitError(f"cannot clone {url}: {str(exc.stderr).strip()[:300]}") from None
    except git.GitCommandNotFound:
        raise GitError("git is not installed or not on PATH: install git and try again.") from None


def fetch_origin(repo: git.Repo, refspecs: Collection[str] = ()) -> None:
    """Bring a clone's remote-tracking branches up to date (``git fetch origin``), then fetch
    ``refspecs`` too (pull request heads, commits no branch reaches)."""
    import git

    commands = [["git", *_CLONE_CONFIG, "fetch", "--quiet", "--", "origin"]]
    if refspecs:
        commands.append(["git", *_CLONE_CONFIG, "fetch", "--quiet", "--", "origin", *refspecs])
    for command in commands:
        try:
            repo.git.execute(command, env={"GIT_TERMINAL_PROMPT": "0"})
        except git.GitCommandError as exc:
            where = work_tree(repo)
            raise GitError(f"cannot fetch in {where}: {str(exc.stderr).strip()[:300]}") from None


def has_commit(repo: git.Repo, rev: str) -> bool:
    """True when ``rev`` names a commit here."""
    try:
        resolve_commit(repo, rev)
    except GitError:
        return False
    return True


def commit_with_file(repo: git.Repo, parent: str, path: str, content: bytes, message: str) -> str:
    """An unreferenced commit: ``parent``'s tree with ``path`` replaced by ``content``.

    Built in a private index, so neither the working tree nor the index is touched."""
    with tempfile.TemporaryDirectory(prefix="orch-review-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp, "index"))}
        repo.git.execute(["git", "read-tree", parent], env=env)
        with tempfile.TemporaryFile() as stdin:
            stdin.write(content)
            stdin.seek(0)
            blob = str(repo.git.execute(["git", "hash-object", "-w", "--stdin"], istream=stdin))
        mode = tree_entries(repo, parent, [path]).get(path, ("100644", 0))[0]
        entry = f"{mode},{blob.strip()},{path}"
        repo.git.execute(["git", "update-index", "--cacheinfo", entry], env=env)
        tree = str(repo.git.execute(["git", "write-tree"], env=env)).strip()
    # Fixed dates: the same edit of the same parent is the same commit, run after run.
    dated = {**SNAPSHOT_IDENTITY, "GIT_AUTHOR_DATE": _EPOCH, "GIT_COMMITTER_DATE": _EPOCH}
    command = ["git", "commit-tree", "--no-gpg-sign", tree, "-p", parent, "-m", message]
    return str(repo.git.execute(command, env=dated)).strip()


_EPOCH = "946684800 +0000"  # 2000-01-01
