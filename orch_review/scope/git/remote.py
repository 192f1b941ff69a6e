"""Reaching a remote: clone and fetch, the only git calls whose input may be a stranger's URL."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.environment import blanked_secrets, without_secrets
from orch_review.errors import GitError
from orch_review.programs import require_git
from orch_review.scope.git.objects import objects_dir

if TYPE_CHECKING:
    import git


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
        git.Git().execute(command, env={**blanked_secrets(), "GIT_TERMINAL_PROMPT": "0"})
    except git.GitCommandError as exc:
        raise GitError(f"cannot clone {url}: {str(exc.stderr).strip()[:300]}") from None
    except git.GitCommandNotFound:
        raise GitError("git is not installed or not on PATH: install git and try again.") from None


def remote_url(repo: git.Repo, remote: str = "origin") -> str | None:
    """The URL of ``remote`` as its configuration writes it (hostile: it comes from
    .git/config), not rewritten by the repository's own ``url.*.insteadOf``; None without
    one."""
    import git

    try:
        url = str(repo.git.config("--get", f"remote.{remote}.url")).strip()
    except git.GitCommandError:
        return None
    return url or None


# A clone's `.git/config` may be a stranger's, and a fetch run in the clone reads it: it can
# name programs for git to run on the host (remote.*.uploadpack, core.sshCommand,
# core.gitProxy, core.askPass, credential.helper) and send the fetch elsewhere
# (url.*.insteadOf, protocol.*.allow). Command-line settings cannot undo all of that: git
# keeps the first uploadpack and the first matching gitProxy it reads, and the repository's
# file is read before the command line; insteadOf rules can only be added to. So the fetch
# runs in a scratch bare repository whose configuration is orch-review's (the user's global
# and system files still apply), borrowing the clone's objects as an alternate; its packs are
# then copied into the clone and the clone's refs set with update-ref. Only well-known
# transports are allowed: no `ext::`, no remote helper a URL could name.
_LOCATING = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_QUARANTINE_PATH",
        "GIT_NAMESPACE",
    }
)
_TRANSPORTS = ("file", "git", "http", "https", "ssh")
_SCRATCH_CONFIG = (
    "-c",
    "protocol.allow=never",
    *(arg for name in _TRANSPORTS for arg in ("-c", f"protocol.{name}.allow=always")),
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "core.hooksPath=/dev/null",
    # Keep what arrives as a pack (even one object), so that it can be copied whole.
    "-c",
    "fetch.unpackLimit=1",
    "-c",
    "transfer.unpackLimit=1",
)


def fetch_isolated(repo: git.Repo, url: str, wanted: Mapping[str, str | None]) -> None:
    """Fetch each source of ``wanted`` (a ref or a commit of the remote at ``url``) into the
    clone's ref it maps to (None: the objects only), without reading the clone's own
    configuration; GitError with git's words on failure."""
    if url.startswith("-"):
        raise GitError(f"not a repository URL: {url[:60]!r}")
    require_git()
    # The user's environment (GIT_SSH_COMMAND, GIT_CONFIG_GLOBAL, ...) stands, but not what
    # names a repository: a hook's GIT_DIR would make git fetch into the clone after all.
    env = {k: v for k, v in without_secrets(os.environ).items() if k not in _LOCATING}
    env["GIT_TERMINAL_PROMPT"] = "0"
    with tempdirs.directory("fetch") as scratch:
        git_dir = scratch / "repo.git"
        init = ["git", "init", "-q", "--bare", "--template=", str(git_dir)]
        if str(repo.git.rev_parse("--show-object-format")).strip() == "sha256":
            init.insert(3, "--object-format=sha256")  # older gits know SHA-1 only
        _run(init, env, "could not make a scratch repository to fetch into")
        shallow = Path(repo.common_dir) / "shallow"
        if shallow.is_file():  # the clone's history ends there: so does the scratch's
            shutil.copyfile(shallow, git_dir / "shallow")
        (git_dir / "objects" / "info").mkdir(parents=True, exist_ok=True)
        (git_dir / "objects" / "info" / "alternates").write_text(
            f"{objects_dir(repo)}\n", encoding="utf-8"
        )
        refspecs = [
            f"+{source}:refs/fetched/{n}" + ("/*" if "*" in source else "")
            for n, source in enumerate(wanted)
        ]
        fetch = ["git", f"--git-dir={git_dir}", *_SCRATCH_CONFIG, "fetch", "--quiet"]
        fetch += ["--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", "--"]
        failure = f"cannot fetch {' '.join(wanted)} from {_without_credentials(url)}"
        _run([*fetch, url, *refspecs], env, failure)
        _copy_packs(git_dir / "objects" / "pack", objects_dir(repo) / "pack")
        for n, local in enumerate(wanted.values()):
            if local is not None:
                sha = _run(
                    ["git", f"--git-dir={git_dir}", "rev-parse", "--verify", f"refs/fetched/{n}"],
                    env,
                    "the fetched ref is missing",
                ).strip()
                repo.git.update_ref(local, sha)


_CREDENTIALS = re.compile(r"://[^/@\s]+@")


def _without_credentials(url: str) -> str:
    """``url`` with the user and password it may carry (``https://user:token@host/``)
    shown as ``***``."""
    scheme, found, rest = url.partition("://")
    if not found or "@" not in rest.split("/", 1)[0]:
        return url
    return f"{scheme}://***@{rest.split('@', 1)[1]}"


def _run(command: list[str], env: Mapping[str, str], failure: str) -> str:
    done = subprocess.run(command, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        said = " ".join(done.stderr.decode("utf-8", "replace").split())
        detail = _CREDENTIALS.sub("://***@", said)[:300]
        raise GitError(f"{failure}: {detail}")
    return done.stdout.decode("utf-8", "replace")


def _copy_packs(source: Path, destination: Path) -> None:
    """Copy the packs in ``source`` that ``destination`` lacks; each index last, since git
    finds a pack by its index."""
    for pack in sorted(source.glob("pack-*.pack")):
        parts = [pack.with_suffix(s) for s in (".pack", ".rev", ".idx")]
        for part in parts:
            target = destination / part.name
            if not part.exists() or target.exists():
                continue
            temporary = destination / f"tmp_orch_review_{part.name}"
            shutil.copyfile(part, temporary)
            temporary.chmod(0o444)
            os.replace(temporary, target)
