"""Opening a repository inert: its own configuration names no program for git to run."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.environment import blanked_secrets
from orch_review.errors import GitError
from orch_review.programs import require_git

if TYPE_CHECKING:
    import git


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
    # GitPython starts git with the process environment plus these: no key or token in it.
    repo.git.update_environment(**blanked_secrets())
    _check_ownership(repo)
    inherited = (os.environ if env is None else env).get("GIT_CONFIG_PARAMETERS", "")
    settings = {**INERT_CONFIG, **STAT_CONFIG}
    repo.git.update_environment(GIT_CONFIG_PARAMETERS=config_parameters(inherited, settings))
    filters = _configured_filters(repo)
    if filters:
        inert = {**settings, **_no_filters(filters)}
        repo.git.update_environment(GIT_CONFIG_PARAMETERS=config_parameters(inherited, inert))
    return repo


# The repository's own configuration is hostile data: a clone received from a stranger can
# carry a `.git/config` naming programs for git to run. Every git command orch-review runs
# on the host gets these settings at command-line scope (which beats every file), through
# GIT_CONFIG_PARAMETERS, so child gits (submodules) get them too. Textconv and external
# diff drivers are turned off on the diff commands themselves (--no-textconv, --no-ext-diff).
# Programs git runs only to reach a remote (uploadpack, ssh command, proxy, credential
# helper) cannot all be turned off this way, so no fetch runs with this configuration: `pr`
# and `mr` fetch in a scratch repository (remote.fetch_isolated), and the `github` and
# `gitlab` commands deepen only a checkout their CI made.
INERT_CONFIG = {
    "core.fsmonitor": "false",
    "core.hooksPath": "/dev/null",
    "core.pager": "cat",
    "diff.external": "",
    "log.showSignature": "false",
}


# A review whose agents see a tree of hard links (scope/farm.py) changes the change time of
# every file it links: git, trusting it, would read every file of the working tree again at
# each later comparison (a second of CPU per 40,000 files), since orch-review never writes
# the refreshed index back. Its size, modification time and inode still tell a changed file.
STAT_CONFIG = {"core.trustctime": "false"}


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
            ["git", "rev-parse", "--show-toplevel"],
            env={**blanked_secrets(), **git_vars, **probe_env},
        )
    except git.GitCommandError as exc:
        stderr = str(exc.stderr)
        if "dubious ownership" in stderr:
            return repo  # _check_ownership says what to do
        if "must be run in a work tree" in stderr:  # started inside the .git directory
            raise GitError(
                f"{cwd} is inside the git directory of {holder}, not its working tree: run "
                f"orch-review in {holder} (cd {shlex.quote(str(holder))})."
            ) from None
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


def compares_file_modes(repo: git.Repo) -> bool:
    """Whether git tells a file whose executable bit changed from one that did not
    (``core.fileMode``, true unless set otherwise)."""
    import git

    try:
        value = str(repo.git.config("--type=bool", "--get", "core.fileMode")).strip()
    except git.GitCommandError:
        return True  # not set: git's default
    return value != "false"


def git_dir(repo: git.Repo) -> Path:
    """The common git directory (shared by worktrees), where orch-review keeps its journal."""
    return Path(repo.common_dir)


def _lines0(output: str) -> list[str]:
    return [p for p in output.split("\0") if p]


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
