"""Every git operation orch-review performs, through GitPython, made inert by
:func:`open_repo` (see :data:`INERT_CONFIG`)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.errors import GitError
from orch_review.programs import require_git
from orch_review.scope.reviewable import can_read

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
    require_git()  # GitPython cannot even be imported without it
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
    repo = _at_its_work_tree(repo, Path(cwd), env)
    # Reading must never write: no opportunistic index refresh behind a running `git commit`.
    repo.git.update_environment(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    _check_ownership(repo)
    inherited = (os.environ if env is None else env).get("GIT_CONFIG_PARAMETERS", "")
    repo.git.update_environment(GIT_CONFIG_PARAMETERS=config_parameters(inherited, INERT_CONFIG))
    filters = _configured_filters(repo)
    if filters:
        inert = {**INERT_CONFIG, **_no_filters(filters)}
        repo.git.update_environment(GIT_CONFIG_PARAMETERS=config_parameters(inherited, inert))
    return repo


# The repository's own configuration is hostile data: a clone received from a stranger can
# carry a `.git/config` naming programs for git to run. Every git command orch-review runs
# on the host gets these settings at command-line scope (which beats every file), through
# GIT_CONFIG_PARAMETERS, so child gits (submodules) get them too. Textconv and external
# diff drivers are turned off on the diff commands themselves (--no-textconv, --no-ext-diff).
# Programs git runs only to reach a remote (credential helper, ssh command) are left alone:
# the only fetch orch-review runs is the `github` command's, in a checkout CI made.
INERT_CONFIG = {
    "core.fsmonitor": "false",
    "core.hooksPath": "/dev/null",
    "core.pager": "cat",
    "diff.external": "",
    "log.showSignature": "false",
}


def config_parameters(inherited: str, settings: Mapping[str, str]) -> str:
    """``GIT_CONFIG_PARAMETERS`` holding ``inherited`` (a hook's ``git -c``) then ``settings``,
    which come later and so win."""

    def quote(text: str) -> str:
        return "'" + text.replace("'", "'\\''") + "'"

    # The 'key=value' form is understood by every git; 'key'='value' (git 2.31+) is needed
    # only for a key that holds "=" itself, and an older git refuses it rather than misread it.
    pairs = [
        quote(f"{key}={value}") if "=" not in key else f"{quote(key)}={quote(value)}"
        for key, value in settings.items()
    ]
    return " ".join([inherited.strip(), *pairs]).strip()


def _configured_filters(repo: git.Repo) -> list[str]:
    """Names of the filter drivers any configuration file defines."""
    import git

    try:
        out = repo.git.execute(["git", "config", "-z", "--name-only", "--get-regexp", r"^filter\."])
    except git.GitCommandError:  # exit 1: no such key
        return []
    names = {key.partition(".")[2].rpartition(".")[0] for key in _lines0(str(out))}
    return sorted(name for name in names if name)


def _no_filters(names: list[str]) -> dict[str, str]:
    """Settings that make each clean/smudge/process driver a no-op, not a program to run:
    git stores and checks out the bytes as they are."""
    settings = {}
    for name in names:
        for part in ("clean", "smudge", "process"):
            settings[f"filter.{name}.{part}"] = ""
        settings[f"filter.{name}.required"] = "false"
    return settings


def _at_its_work_tree(repo: git.Repo, cwd: Path, env: Mapping[str, str] | None) -> git.Repo:
    """``repo``, opened at the work tree git itself uses from ``cwd``; a GitError when that is
    not the directory holding the ``.git`` found from ``cwd`` (with ``GIT_DIR``: ``cwd``;
    with ``GIT_WORK_TREE``, that directory).

    ``core.worktree`` in a repository's configuration (hostile data) could point git at any
    directory on the machine; orch-review only reviews the tree it was started in. A ``.git``
    file (``git init --separate-git-dir``, a linked worktree, a submodule) is an ordinary
    layout: GitPython opened through the git directory alone guesses its parent as the work
    tree, so the repository is opened again from the work tree.
    """
    import git

    variables = os.environ if env is None else env
    if variables.get("GIT_WORK_TREE"):  # the user's (or a hook's) own say: trusted
        holder: Path | None = Path(cwd, variables["GIT_WORK_TREE"])
    elif variables.get("GIT_DIR"):
        holder = cwd
    else:
        holder = _dot_git_holder(cwd)
    if holder is None:
        return repo
    inherited = variables.get("GIT_CONFIG_PARAMETERS", "")
    probe_env = {
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_CONFIG_PARAMETERS": config_parameters(inherited, INERT_CONFIG),
    }
    # Only git's own variables: the review's environment holds the API key and tokens, which
    # no git process may inherit.
    git_vars = {k: v for k, v in (env or {}).items() if k.startswith("GIT_")}
    try:
        out = git.Git(str(cwd)).execute(
            ["git", "rev-parse", "--show-toplevel"], env={**git_vars, **probe_env}
        )
    except git.GitCommandError as exc:
        stderr = str(exc.stderr)
        if "dubious ownership" in stderr:
            return repo  # _check_ownership says what to do
        if "core.worktree" not in stderr and "chdir" not in stderr:
            raise
        top = None
    else:
        top = Path(str(out).strip())
    if top is None or top.resolve() != holder.resolve():
        shown = repr(str(top))[1:-1] if top is not None else "a directory that does not exist"
        raise GitError(
            f"the repository at {holder} sets core.worktree to {shown}, another directory than "
            "the one holding it: orch-review reviews only the tree it runs in; unset it "
            "(`git config --unset core.worktree`) or run orch-review in that work tree."
        )
    if Path(work_tree(repo)).resolve() == holder.resolve():
        return repo
    if not (holder / ".git").exists():
        raise GitError(
            f"GIT_DIR names {repo.git_dir}, whose work tree git finds at {holder} without a "
            "`.git` there: run orch-review in a work tree that has its `.git`."
        )
    reopened = git.Repo(holder, search_parent_directories=False)
    if Path(reopened.git_dir).resolve() != Path(repo.git_dir).resolve():
        raise GitError(
            f"GIT_DIR names {repo.git_dir}, but {holder}/.git is another repository: run "
            "orch-review without GIT_DIR, in the work tree."
        )
    return reopened


def _dot_git_holder(cwd: Path) -> Path | None:
    """The nearest directory, ``cwd`` or above, with a ``.git`` entry (directory or file)."""
    for directory in [cwd, *cwd.parents]:
        if os.path.lexists(directory / ".git"):
            return directory
    return None


def _check_ownership(repo: git.Repo) -> None:
    """A GitError with the command to run when git refuses a repository owned by another
    user ("dubious ownership", CVE-2022-24765): every later git command would fail."""
    import git

    try:
        repo.git.rev_parse("--git-dir")
    except git.GitCommandError as exc:
        stderr = str(exc.stderr)
        if "dubious ownership" not in stderr:
            raise
        # git names the exact directory to trust; fall back to the work tree.
        match = re.search(r"git config --global --add safe\.directory (.+?)'?$", stderr, re.M)
        directory = match.group(1).strip() if match else str(work_tree(repo))
        raise GitError(
            f'git refuses {directory}: it belongs to another user ("dubious ownership"); if '
            "you trust it, run `git config --global --add safe.directory "
            f"{shlex.quote(directory)}` and try again."
        ) from None


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


def diff_lines(repo: git.Repo, *args: str) -> list[str]:
    """``git diff`` patch output as lines (names C-quoted, content bytes kept)."""
    # Pin every option user configuration could change the shape of the output with
    # (diff.mnemonicPrefix, diff.noprefix, diff.submodule, textconv drivers, ...).
    command = [
        "git", "-c", "core.quotePath=true", "diff", "--no-color", "--no-ext-diff",
        "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--submodule=short",
        # A submodule's own configuration is not ours to neutralize: never run git in it.
        "--ignore-submodules=dirty",
        "-M", "--unified=3", *args,
    ]  # fmt: skip
    with _index_copy(repo, os.environ) as copy_env:
        out = repo.git.execute(
            command, env=copy_env, stdout_as_string=False, strip_newline_in_stdout=False
        )
    assert isinstance(out, bytes)
    return out.decode("utf-8", errors="surrogateescape").split("\n")


def changed_names(repo: git.Repo, *args: str) -> list[str]:
    """``git diff --name-only`` of ``args``: names only, so no file content is read (an
    unreadable file is listed, not an error)."""
    with _index_copy(repo, os.environ) as copy_env:
        out = repo.git.execute(["git", "diff", "--name-only", "-z", *args], env=copy_env)
    return _lines0(str(out))


def modified_files(repo: git.Repo) -> list[str]:
    """Tracked files whose working copy differs from the index (deleted ones included)."""
    with _index_copy(repo, os.environ) as copy_env:
        command = ["git", "diff", "--name-only", "-z", "--ignore-submodules=dirty"]
        out = repo.git.execute(command, env=copy_env)
    return _lines0(str(out))


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


def blob_head(repo: git.Repo, rev: str, path: str, limit: int) -> bytes | None:
    """The first ``limit`` bytes of ``path`` at ``rev`` (":0" for the index), or None when it
    does not exist there; the rest of a large blob is never read."""
    command = ["git", "cat-file", "blob", f"{rev}:{path}"]
    with subprocess.Popen(
        command,
        cwd=work_tree(repo),
        env={**os.environ, **repo.git.environment()},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdout is not None
        data = process.stdout.read(limit)
        if len(data) < limit:
            return data if process.wait() == 0 else None
        process.kill()
    return data


def check_attributes(
    repo: git.Repo, paths: Collection[str], names: tuple[str, ...], rev: str | None
) -> dict[str, dict[str, str]]:
    """Path -> {attribute: value} for the ``names`` git assigns to ``paths`` ("set",
    "unset", "unspecified" or a value). With ``rev``, the ``.gitattributes`` files are those
    of the tree of ``rev`` and the working tree's are never read; else git's usual order
    (working tree, then index)."""
    found: dict[str, dict[str, str]] = {path: {} for path in paths}
    if not found:
        return found
    listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in found)
    with tempdirs.directory("attr") as tmp:
        env = {}
        command = ["git", "check-attr", "-z", "--stdin"]
        if rev is not None:
            # `check-attr --source` needs git 2.40; an index of the tree works everywhere.
            env["GIT_INDEX_FILE"] = str(Path(tmp, "index"))
            repo.git.execute(["git", "read-tree", rev], env=env)
            command.append("--cached")
        with tempfile.TemporaryFile() as stdin:
            stdin.write(listing)
            stdin.seek(0)
            out = repo.git.execute(
                [*command, *names], istream=stdin, env=env, stdout_as_string=False
            )
    assert isinstance(out, bytes)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    for path, name, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
        if path in found:
            found[path][name] = value
    return found


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
    repo: git.Repo, index_env: Mapping[str, str], untracked: list[str]
) -> None:
    """Put every modified tracked file as it is on disk, plus ``untracked``, into the index
    ``index_env`` names. A file that cannot be read is skipped by the scope: its indexed
    content stays."""
    root = work_tree(repo)
    paths = [p for p in modified_files(repo) if can_read(root / p)] + untracked
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


def commit_tree(repo: git.Repo, tree: str, parent: str | None, message: str) -> str:
    """An unreferenced commit of ``tree`` on top of ``parent``."""
    args = ["git", "commit-tree", "--no-gpg-sign", tree, "-m", message]
    if parent is not None:
        args += ["-p", parent]
    return str(repo.git.execute(args, env=SNAPSHOT_IDENTITY)).strip()


def unmerged_paths(repo: git.Repo) -> list[str]:
    """Paths with unresolved merge conflicts in the index."""
    entries = _lines0(repo.git.ls_files("-z", "--unmerged", "--full-name"))
    return sorted({entry.partition("\t")[2] for entry in entries})


def index_entries(repo: git.Repo) -> str:
    """``git ls-files -s`` output: mode, blob id and path of every index entry."""
    return str(repo.git.ls_files("-s", "-z"))


def objects_dir(repo: git.Repo) -> Path:
    """The repository's own object directory (shared by its worktrees)."""
    return (git_dir(repo) / "objects").resolve()


def writing_objects_to(repo: git.Repo, objects: Path) -> git.Repo:
    """The same repository, opened again so that every object git writes for it lands in
    ``objects``; the repository's objects stay readable as alternates. A review adds nothing
    to ``.git/objects`` this way, and works when ``.git`` is read-only."""
    import git

    other = git.Repo(repo.git_dir, search_parent_directories=False)
    if other.working_tree_dir != repo.working_tree_dir:
        # A `.git` file (`git init --separate-git-dir`, a linked worktree): the git directory
        # alone does not say where the work tree is.
        other = git.Repo(work_tree(repo), search_parent_directories=False)
    # The inert settings of open_repo (no hook, no fsmonitor, no filter) come along.
    other.git.update_environment(**repo.git.environment())
    other.git.update_environment(
        GIT_OPTIONAL_LOCKS="0",
        GIT_OBJECT_DIRECTORY=str(objects),
        GIT_ALTERNATE_OBJECT_DIRECTORIES=str(objects_dir(repo)),
    )
    return other


def _private_repo_env(git_directory: Path, work: Path, alternate: Path) -> dict[str, str]:
    """Every git variable set, so a hook's ``GIT_DIR``/``GIT_INDEX_FILE`` cannot redirect a
    command about a private repository to the user's."""
    return {
        "GIT_DIR": str(git_directory),
        "GIT_WORK_TREE": str(work),
        "GIT_INDEX_FILE": str(git_directory / "index"),
        "GIT_OBJECT_DIRECTORY": str(git_directory / "objects"),
        "GIT_COMMON_DIR": str(git_directory),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(alternate),
    }


def init_private_repo(repo: git.Repo, git_directory: Path, work: Path) -> None:
    """Make ``git_directory`` an empty repository for the work tree ``work`` (which gets a
    ``.git`` file naming it), borrowing ``repo``'s objects through ``objects/info/alternates``.
    No ``core.worktree`` is recorded: whatever directory shows ``work``'s content with that
    ``.git`` in it is the work tree."""
    object_format = str(repo.git.rev_parse("--show-object-format")).strip()
    init = ["git", "init", "-q", f"--separate-git-dir={git_directory}", str(work)]
    if object_format == "sha256":  # older gits, SHA-1 only, echo the unknown option back
        init.insert(3, "--object-format=sha256")
    # Run without the variables a hook sets: they would make git init the user's repository.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    inert = repo.git.environment().get("GIT_CONFIG_PARAMETERS")
    if inert:
        env["GIT_CONFIG_PARAMETERS"] = inert
    import subprocess

    done = subprocess.run(init, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"could not create the snapshot's repository: {said}")
    alternates = git_directory / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text(str(objects_dir(repo)) + "\n", encoding="utf-8")


def point_head(repo: git.Repo, git_directory: Path, work: Path, commit: str) -> None:
    """Set the private repository's HEAD to ``commit``."""
    env = _private_repo_env(git_directory, work, objects_dir(repo))
    repo.git.execute(["git", "update-ref", "--no-deref", "HEAD", commit], env=env)


def index_private(repo: git.Repo, git_directory: Path, work: Path, commit: str) -> None:
    """Give the private repository the index of ``commit``'s tree, keeping the stat data of
    the user's index wherever the content is the same: ``git status`` in a view of the
    working tree then hashes only what differs, not every file."""
    import git

    env = _private_repo_env(git_directory, work, objects_dir(repo))
    user_index = index_file(repo, os.environ)
    if user_index.is_file():
        shutil.copy2(user_index, git_directory / "index")
        try:
            repo.git.execute(["git", "read-tree", "-m", commit], env=env)
            return
        except git.GitCommandError:
            pass  # a split or sparse index: start from the tree alone
    (git_directory / "index").unlink(missing_ok=True)
    repo.git.execute(["git", "read-tree", commit], env=env)


def check_out_private(repo: git.Repo, git_directory: Path, work: Path, commit: str) -> None:
    """Write every file of ``commit`` into ``work``, the private repository's work tree."""
    env = _private_repo_env(git_directory, work, objects_dir(repo))
    # checkout.workers=0: write files with one worker per core (git 2.32+; older gits ignore it).
    checkout = ["git", "-c", "checkout.workers=0", "read-tree", "-u", "--reset", commit]
    repo.git.execute(checkout, env=env)


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


def blob(repo: git.Repo, rev: str, path: str) -> bytes | None:
    """The content of the file ``path`` at ``rev`` (a symlink's target name), or None when it
    is no file there."""
    import git

    try:
        out = repo.git.execute(
            ["git", "cat-file", "blob", f"{rev}:{path}"],
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
    except git.GitCommandError:
        return None
    assert isinstance(out, bytes)
    return out


def write_blobs(repo: git.Repo, blobs: Sequence[tuple[str, Path]]) -> None:
    """Write each (blob id, file) pair's content to the file, with one ``git cat-file``."""
    if not blobs:
        return
    import subprocess

    env = {**os.environ, **repo.git.environment()}
    with subprocess.Popen(
        ["git", "cat-file", "--batch"],
        cwd=work_tree(repo),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(f"{oid}\n" for oid, _ in blobs).encode())
        proc.stdin.close()
        for oid, target in blobs:
            header = proc.stdout.readline().split()
            if len(header) != 3:
                raise GitError(f"object {oid} is missing from the repository")
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            target.write_bytes(data)
    if proc.returncode != 0:
        raise GitError(f"git cat-file failed (exit status {proc.returncode})")


def differences_from(repo: git.Repo, rev: str) -> list[str]:
    """Paths whose working copy differs from the tree of ``rev`` (deleted ones included), for
    every path in that tree or the index: compared through a copy of the index."""
    command = ["git", "diff", "--name-only", "-z", "--no-renames", rev, "--"]
    with _index_copy(repo, os.environ) as copy_env:
        out = repo.git.execute(command, env=copy_env)
    return _lines0(str(out))


def own_objects_pack(repo: git.Repo, objects: Path) -> bytes:
    """A pack of the loose objects in ``objects`` (a review's private object directory)."""
    ids = [
        f"{entry.name}{obj.name}"
        for entry in os.scandir(objects)
        if len(entry.name) == 2 and entry.is_dir()
        for obj in os.scandir(entry.path)
    ]
    listing = "".join(f"{oid}\n" for oid in ids).encode()
    with tempfile.TemporaryFile() as stdin:
        stdin.write(listing)
        stdin.seek(0)
        out = repo.git.execute(
            ["git", "pack-objects", "-q", "--stdout"],
            istream=stdin,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
    assert isinstance(out, bytes)
    return out


def unpack_into(repo: git.Repo, pack: bytes) -> None:
    """Add the objects of ``pack`` to the object directory ``repo`` writes to."""
    with tempfile.TemporaryFile() as stdin:
        stdin.write(pack)
        stdin.seek(0)
        repo.git.execute(["git", "unpack-objects", "-q"], istream=stdin)


def tree_listing(
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
    Picked out of git's output with one regular expression: in a 100,000-file tree, making a
    list of every path first costs more than git listing them."""
    import re

    if not names:
        return []
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
    import re

    if rev is None:
        out = str(repo.git.execute(["git", "ls-files", "-z", "-s", "--full-name"]))
    else:
        out = str(repo.git.execute(["git", "ls-tree", "-r", "-z", "--full-tree", rev]))
    return re.findall(r"(?:^|\0)160000 [^\t]*\t([^\0]*)", out)


def tree_in_index(
    repo: git.Repo, env: Mapping[str, str], index: Path, untracked: list[str] | None
) -> str:
    """The tree of a copy, at ``index``, of the index git uses here (``GIT_INDEX_FILE``
    honoured); with ``untracked`` (a list, maybe empty), of the working copy instead: every
    modified tracked file as on disk, plus those untracked files. The copy is left in place,
    its stat data still matching the working tree, for a private repository to use."""
    shutil.copy2(index_file(repo, env), index)  # keeps the time racy entries are judged by
    copy_env = {"GIT_INDEX_FILE": str(index)}
    if untracked is not None:
        _record_working_copy(repo, copy_env, untracked)
    return str(repo.git.execute(["git", "write-tree"], env=copy_env)).strip()


# Cloning is the one git call whose input (a URL from an evaluation case file) is not ours:
# no `ext::` transport (it runs commands), no hooks, no password prompt.
_CLONE_CONFIG = ("-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null")


def clone(url: str, destination: Path) -> None:
    """Clone ``url`` into the new folder ``destination``; GitError naming the URL on failure."""
    import git

    if url.startswith("-"):
        raise GitError(f"not a repository URL: {url[:60]!r}")
    require_git()
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
    with tempdirs.directory("index") as tmp:
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
    dated = {**SNAPSHOT_IDENTITY, "GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}
    command = ["git", "commit-tree", "--no-gpg-sign", tree, "-p", parent, "-m", message]
    return str(repo.git.execute(command, env=dated)).strip()


FIXED_DATE = "946684800 +0000"  # 2000-01-01


def user_identity(repo: git.Repo) -> str | None:
    """``Name <email>`` from ``git config user.name`` and ``user.email`` (either alone when
    only one is set), or None when neither is."""
    import git

    values = []
    for key in ("user.name", "user.email"):
        try:
            values.append(str(repo.git.config("--get", key)).strip())
        except git.GitCommandError:
            values.append("")
    name, email = values
    if name and email:
        return f"{name} <{email}>"
    return name or email or None


def remote_url(repo: git.Repo, remote: str = "origin") -> str | None:
    """The URL of ``remote`` (hostile: it comes from .git/config), or None without one."""
    import git

    try:
        url = str(repo.git.remote("get-url", remote)).strip()
    except git.GitCommandError:
        return None
    return url or None


def fetch_refs(repo: git.Repo, remote: str, refspecs: Collection[str]) -> None:
    """Fetch ``refspecs`` from ``remote`` (no tags, no hooks, no ``ext::`` transport);
    GitError with git's words on failure."""
    import git

    command = ["git", *_CLONE_CONFIG, "fetch", "--quiet", "--no-tags", "--", remote, *refspecs]
    try:
        repo.git.execute(command, env={"GIT_TERMINAL_PROMPT": "0"})
    except git.GitCommandError as exc:
        detail = " ".join(str(exc.stderr).split())[:300]
        raise GitError(f"cannot fetch {' '.join(refspecs)} from {remote}: {detail}") from None
