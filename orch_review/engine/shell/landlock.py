"""Agents' shells under Landlock and seccomp, where bubblewrap cannot run (no user namespaces:
docker's default profile, most container CI, rootless containers).

Each shell starts through the launcher of :mod:`.landlock_exec`: forked by the review's
zygote (that launcher started once, see :mod:`.zygote`), or, where the zygote cannot, run by
this interpreter as ``python -I -S -c SOURCE`` for that shell alone (no site, no file of
this package read). Either way the shell confines itself with the same rules before it
execs. The shell may read and execute the system's programs and libraries (``/usr``,
``/bin``, ``/lib*``, the interpreter's prefix), a list of ``/etc`` files with no secrets in
them, ``/proc`` and the content under review (with the snapshot's private git directory and
the objects it borrows; never a git config holding more than ``[core]`` settings); it may
write only its private home.

Not reachable: ``$HOME`` and every other home, the checkout and its ``.git`` (remote URLs,
``http.extraheader``), ``~/.netrc``, cloud and ``gh`` credentials, the CI runner's files,
``/tmp``, ``/run``, ``/sys``; the network (seccomp refuses every socket but ``AF_UNIX`` and
every ``connect()``, and Landlock refuses TCP bind and connect from ABI 4 on); the
environment and memory of every process outside the sandbox (Landlock scopes ptrace, so
``/proc/PID/environ`` and ``mem``; signals too from ABI 6 on). Run as root, the shell also
runs as an unused uid, as under bubblewrap, and every process of that uid is killed with the
shell.

What it cannot hide, unlike bubblewrap: other processes' command lines and status in
``/proc``; before Landlock ABI 6, a regular user's shell may signal that user's processes.
"""

from __future__ import annotations

import functools
import marshal
import os
import stat
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orch_review import tempdirs
from orch_review.engine.shell import landlock_exec
from orch_review.engine.shell.bash import ShellLaunch
from orch_review.engine.shell.bwrap import ETC as BWRAP_ETC
from orch_review.engine.shell.bwrap import git_paths, sanitized_git_config
from orch_review.engine.shell.confinement import (
    DEFAULT_PATH,
    Limits,
    SandboxUnavailable,
    agent_environment,
    hard_limits,
    kill_everything_of,
    private_home,
    unused_uid,
)
from orch_review.engine.shell.toolchains import exposure
from orch_review.engine.shell.zygote import Zygote

_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs need from /etc: bubblewrap's list (no shadow, ssh, ssl keys, credentials or
# machine-id), and three more files without secrets. OpenSSL's configuration, because a
# program built with the system's OpenSSL (Debian's node) refuses to start when it may not
# read it (under bubblewrap it is absent, which OpenSSL accepts; Landlock can only deny).
LANDLOCK_ETC = (*BWRAP_ETC, "/etc/debian_version", "/etc/mime.types", "/etc/ssl/openssl.cnf")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


@dataclass(frozen=True)
class LandlockLauncher:
    """Starts shells through the Landlock launcher; see :meth:`find`.

    With a ``zygote``, each shell is forked by it (see :mod:`.zygote`), and started by a
    launcher of its own where the zygote cannot; :meth:`close` stops the zygote."""

    limits: Limits
    python: str  # the interpreter that runs the launcher
    source: str  # the ``-c`` program: the launcher's code, or a loader of it compiled
    zygote: Zygote | None = field(default=None, compare=False)
    also_read: tuple[Path, ...] = ()  # readable besides the job's tools

    @classmethod
    def find(cls, limits: Limits) -> LandlockLauncher:
        """The launcher for this machine; SandboxUnavailable where Landlock cannot exist.
        Whether the kernel has it is for the probe to find out, by starting a shell."""
        if sys.platform != "linux":
            raise SandboxUnavailable(f"Landlock is a Linux feature (this is {sys.platform})")
        source = _program(sys.executable)
        zygote = Zygote((sys.executable, "-I", "-S", "-c", source))
        return cls(limits, sys.executable, source, zygote=zygote)

    def close(self) -> None:
        """Stop the zygote, if any, and with it every shell it started."""
        if self.zygote is not None:
            self.zygote.close()

    def launch(self, cwd: Path, env: Mapping[str, str], shell: Sequence[str]) -> ShellLaunch:
        """The launcher around the shell, ``cwd`` (the content under review) read-only."""
        root = Path(cwd).resolve()
        user = unused_uid() if os.geteuid() == 0 else None
        home = private_home(user)

        def cleanup() -> None:
            if user is not None and (self.zygote is None or not self.zygote.kill_uid(user)):
                kill_everything_of(user)
            tempdirs.remove(home)

        try:
            system = _system_paths(user is not None)
            tools = [
                p
                for p in exposure(env, self.also_read).paths
                if user is None or _others_may_enter(p)
            ]
            readable = [*system, *content_paths(root), *tools]
            options = ["--read", *(str(p) for p in readable)]
            options += ["--write", home, *_DEVICES, "--limit"]
            uid = os.geteuid() if user is None else user
            for which, value in hard_limits(self.limits, uid, None if user is None else 0).values():
                options.append(f"{which}={value}")
            if user is not None:
                options += ["--uid", str(user)]
            options += ["--", *shell]
            shell_env = agent_environment(env, home)
            shell_env["PATH"] = reachable_path(shell_env["PATH"], (*system, *tools))
        except BaseException:
            cleanup()
            raise
        argv = (self.python, "-I", "-S", "-c", self.source, *options)
        spawn = None
        if self.zygote is not None:
            spawn = functools.partial(self.zygote.spawn, options, shell_env, root)
        return ShellLaunch(argv, shell_env, root, cleanup=cleanup, spawn=spawn)


@functools.lru_cache(maxsize=1)
def launcher_source() -> str:
    """The launcher's code, for any interpreter to run as ``python -I -S -c``."""
    return Path(landlock_exec.__file__).read_text(encoding="utf-8")


_compiled_lock = threading.Lock()
_compiled: dict[str, Path] = {}  # interpreter -> its compiled launcher, made once a process


def _program(python: str) -> str:
    """The ``-c`` program that runs the launcher: a loader of its code compiled once per
    process, which saves each shell the compiling of it (a few milliseconds, a quarter of
    a shell's start), or, where that file cannot be written, the source itself.

    The file is in a private directory of this process's (0700, removed at exit): the
    launcher reads it before it drops root or confines itself, so no one else may write it.
    Its format is this interpreter's, the one that runs the launcher."""
    with _compiled_lock:
        path = _compiled.get(python)
        if path is None or not path.is_file():
            try:
                path = tempdirs.make("launcher") / "landlock_exec.bin"
                code = compile(launcher_source(), landlock_exec.__file__, "exec")
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "wb") as out:
                    out.write(marshal.dumps(code))
            except OSError:
                return launcher_source()
            _compiled[python] = path
    return f"import marshal;exec(marshal.loads(open({str(path)!r},'rb').read()))"


@functools.lru_cache(maxsize=2)
def _system_paths(dropping_root: bool) -> tuple[Path, ...]:
    return tuple(system_paths(dropping_root))


def system_paths(dropping_root: bool) -> list[Path]:
    """What every shell may read and execute besides the content: programs, libraries,
    the interpreter's prefix, ``/etc`` without secrets, and ``/proc``."""
    paths = [Path(p) for p in (*_SYSTEM, *LANDLOCK_ETC, "/proc")]
    # Debian's Pythons read their sitecustomize.py from there.
    paths += sorted(Path("/etc").glob("python3*"))
    prefix = Path(sys.base_prefix).resolve()
    home = Path(os.path.expanduser("~")).resolve()
    # Never a directory holding a home (a prefix of "/" or "/home/me" would be all of it).
    holds_home = home.is_relative_to(prefix) or prefix == Path("/")
    if not holds_home and (not dropping_root or _others_may_enter(prefix)):
        paths.append(prefix)
    return paths


def _others_may_enter(path: Path) -> bool:
    """Whether a uid with no rights of its own can walk down to ``path``."""
    for directory in (path, *path.parents):
        try:
            if not directory.stat().st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def reachable_path(path: str, readable: Sequence[Path]) -> str:
    """``path`` without the directories the shell may not read: a command found in one
    would fail with "Permission denied" instead of being looked up further."""
    return _reachable_path(path, tuple(str(r) for r in readable))


@functools.lru_cache(maxsize=8)  # one PATH and the same system paths for every shell
def _reachable_path(path: str, roots: tuple[str, ...]) -> str:
    prefixes = tuple(r.rstrip("/") + "/" for r in roots)
    kept = []
    for entry in path.split(os.pathsep):
        real = os.path.realpath(entry)
        if real in roots or real.startswith(prefixes):
            kept.append(entry)
    return os.pathsep.join(kept) or DEFAULT_PATH


def content_paths(root: Path) -> list[Path]:
    """What of the content at ``root`` and the git directories it refers to a shell may read.

    Landlock cannot hide one file of a readable directory, so a git directory whose config
    holds more than ``[core]`` and ``[extensions]`` (a remote's URL with a token in it,
    ``http.extraheader``, credential helpers) is granted item by item, without its config.
    The snapshot's own private repository has nothing else in its config and is granted whole.
    """
    extra, _ = git_paths(root)
    dot = root / ".git"
    if dot.is_dir() and not dot.is_symlink():
        extra = [dot, *(e for e in extra if e.resolve() != dot.resolve())]
    unsafe = [d for d in extra if not _harmless_config(d)]
    paths: list[Path] = []
    # A rule follows a symbolic link to its target: the content's own links (to /etc, to a
    # home) must never become rules, only what is really inside.
    if dot in unsafe:
        paths += [p for p in root.iterdir() if p.name != ".git" and not p.is_symlink()]
    else:
        paths.append(root)
    for directory in extra:
        if directory in unsafe:
            paths += [
                p for p in directory.iterdir() if p.name not in _GIT_WITHHELD and not p.is_symlink()
            ]
        elif directory != dot:
            paths.append(directory)
    return paths


_GIT_CONFIGS = frozenset({"config", "config.worktree"})
# Left out of a git directory granted item by item: its configs, and its submodules' git
# directories, whose configs hold their remotes' URLs.
_GIT_WITHHELD = _GIT_CONFIGS | {"modules"}


def _harmless_config(git_dir: Path) -> bool:
    """Whether every setting in ``git_dir``'s config files is one bubblewrap would keep."""
    for name in _GIT_CONFIGS:
        try:
            text = (git_dir / name).read_text("utf-8", "replace")
        except FileNotFoundError:
            continue
        except OSError:
            return False
        settings = [
            line.strip()
            for line in text.splitlines()
            if line.strip() and not line.strip().startswith(("#", ";"))
        ]
        if [line.strip() for line in sanitized_git_config(text).splitlines()] != settings:
            return False
    return True
