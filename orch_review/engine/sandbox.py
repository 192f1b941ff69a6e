"""Where agents' shell commands run, and what a hijacked model can reach from there.

The commands come from a model reading content anyone may have written, so assume the model
is hostile. Three policies, chosen by ``--sandbox`` / ``ORCH_REVIEW_SANDBOX``:

``bubblewrap``
    The content bind-mounted read-only, a private ``/tmp`` (also ``$HOME``), no network, own
    PID/IPC/UTS namespaces, a minimal ``/etc``, no user files; see :mod:`.bwrap`.
``restricted`` (the fallback of ``auto``)
    A plain subprocess with a scrubbed environment, a private home and resource limits. Run as
    root, it also drops to an unused uid (one per shell, all of whose processes die with the
    shell), which keeps root-only files and root-owned content out of reach. It never isolates
    the network; run as a regular user, the shell can read and write what that user can.
``none`` (``off``)
    The scrubbed environment and a private home, nothing else.

Every policy hands the shell only :func:`agent_environment` and applies :class:`Limits` (but
``none``) as hard rlimits, so a fork bomb, a memory bomb or a huge file fails inside the
sandbox instead of taking the machine down.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orch_review.config.choices import SandboxMode
from orch_review.engine.bash import ShellLaunch, ShellLauncher
from orch_review.errors import ExitCode, OrchReviewError
from orch_review.scope.view import View

APPARMOR_USERNS_SYSCTL = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`)"
# Only these variables reach an agent's shell: nothing secret, nothing from a git hook.
_PASSED_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# Shells run as root get a random uid from here, unknown to the system and unique per shell,
# so the process limit of one sandbox is not shared with any other process.
_UID_BASE, _UID_SPAN = 0x6F000000, 0x00FFFFFF
_PR_SET_DUMPABLE = 4
_UNREADABLE = 4
_PROBE = (
    'test -w "$HOME" || { echo "the sandbox cannot write its private HOME"; exit 3; }; '
    f"test -r . -a -x . || exit {_UNREADABLE}"
)

Kind = Literal["bubblewrap", "restricted", "none"]


class SandboxUnavailable(OrchReviewError):
    """``--sandbox on`` was asked for and bubblewrap cannot run here."""

    exit_code = ExitCode.USAGE


class ContentUnreadable(SandboxUnavailable):
    """The sandbox's unprivileged user cannot read the content (no fallback would either)."""


@dataclass(frozen=True)
class Limits:
    """Hard resource limits of every process in a sandbox (rlimits, per process)."""

    cpu_seconds: int = 600
    address_space_mb: int = 4096
    processes: int = 256  # on top of what the sandbox's uid already runs (see _limit_stage)
    file_size_mb: int = 1024
    tmp_size_mb: int = 1024  # the size of bubblewrap's private /tmp (a tmpfs, so in memory)


def agent_environment(env: Mapping[str, str], home: str) -> dict[str, str]:
    """The whole environment of an agent's shell: no keys, tokens or hook variables.

    ``PATH`` keeps only absolute entries (a relative one would run the content's own scripts
    in place of system tools); ``HOME`` and ``TMPDIR`` are ``home``.
    """
    passed = {k: env[k] for k in _PASSED_ENV if k in env}
    passed.setdefault("LANG", "C.UTF-8")
    entries = [p for p in env.get("PATH", "").split(os.pathsep) if os.path.isabs(p)]
    return {
        "PATH": os.pathsep.join(dict.fromkeys(entries)) or _DEFAULT_PATH,
        **passed,
        "HOME": home,
        "TMPDIR": home,
        "TERM": "dumb",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "GIT_CONFIG_NOSYSTEM": "1",
        # The shell may run under another uid than the content's owner; git must still read it.
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "safe.directory",
        "GIT_CONFIG_VALUE_0": "*",
    }


@dataclass(frozen=True)
class Sandbox:
    """The policy agents' shells run under; pass it to ``BashSession(sandbox=...)``."""

    kind: Kind
    launcher: ShellLauncher
    notice: str | None = None  # for the user, once per review: why it is weaker than asked

    def launch(self, cwd: Path, env: Mapping[str, str], shell: Sequence[str]) -> ShellLaunch:
        """How to start one shell (see :class:`ShellLauncher`)."""
        return self.launcher.launch(cwd, env, shell)

    @property
    def description(self) -> str:
        """One line for headers and logs."""
        return {
            "bubblewrap": "bubblewrap (read-only content, no network, private /tmp)",
            "restricted": "restricted subprocess (no bubblewrap: network and, unless run as "
            "root, the working tree are NOT protected)",
            "none": "none (--sandbox off)",
        }[self.kind]


def resolve_sandbox(
    mode: SandboxMode,
    root: Path,
    *,
    search_path: str,
    bwrap_path: Path | None = None,
    limits: Limits | None = None,
    apparmor_sysctl: Path = APPARMOR_USERNS_SYSCTL,
    view: View | None = None,
) -> Sandbox:
    """The sandbox for a review of ``root``: bubblewrap if it works there, as ``mode`` allows.

    ``search_path`` is where to look for ``bwrap`` unless ``bwrap_path`` names it; ``view``
    says how bubblewrap shows the content at ``root`` (else ``root`` holds it). Raises
    :class:`SandboxUnavailable` for ``on`` when bubblewrap cannot run.
    """
    from orch_review.engine.bwrap import BubblewrapLauncher  # it builds on this module

    limits = limits or Limits()
    if mode == "off":
        return Sandbox("none", PlainLauncher())
    try:
        launcher = BubblewrapLauncher.find(bwrap_path, search_path, limits, view)
        probe(launcher, root)
        return Sandbox("bubblewrap", launcher)
    except ContentUnreadable:
        raise
    except SandboxUnavailable as exc:
        reason = str(exc)
    hint = apparmor_hint(apparmor_sysctl, os.geteuid())
    if hint is not None:
        reason = f"{reason}; {hint}"
    if mode == "on":
        raise SandboxUnavailable(
            f"--sandbox on needs a working bubblewrap sandbox, but {reason}; {INSTALL_HINT}, "
            "or use --sandbox auto to fall back to a weaker restricted subprocess."
        )
    unprotected = (
        "network access"
        if os.geteuid() == 0
        else "network access, nor reading or writing your files (it runs as you)"
    )
    notice = (
        f"WARNING: no bubblewrap sandbox ({reason}). Agents' commands run in a restricted "
        f"subprocess instead, which does NOT block {unprotected}; {INSTALL_HINT}, or pass "
        "--sandbox off to accept this silently."
    )
    if os.geteuid() != 0:
        _protect_this_process()
    return Sandbox("restricted", RestrictedLauncher(limits), notice=notice)


def probe(launcher: ShellLauncher, root: Path) -> None:
    """Start a shell exactly as agents will and check it works; SandboxUnavailable if not."""
    env = agent_environment({"PATH": _DEFAULT_PATH}, "/")
    launch = launcher.launch(root, env, ("bash", "--noprofile", "--norc", "-c", _PROBE))
    try:
        result = subprocess.run(
            launch.argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            **launch.process_options(),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bwrap could not be started ({exc})") from None
    finally:
        if launch.cleanup is not None:
            launch.cleanup()
    if result.returncode == _UNREADABLE:
        raise ContentUnreadable(
            f"agents' shells run as an unprivileged user, who cannot read {root}: make it "
            "readable by others (`chmod -R o+rX`) or run orch-review as a regular user."
        )
    if result.returncode != 0:
        said = (result.stderr or result.stdout).decode("utf-8", "replace").strip()
        last = said.splitlines()[-1] if said else f"exit status {result.returncode}"
        raise SandboxUnavailable(f"bwrap failed here: {last}")


def apparmor_hint(sysctl: Path, euid: int) -> str | None:
    """Why bubblewrap fails on Ubuntu 24.04 and later, when that is the likely cause.

    Ubuntu's AppArmor denies unprivileged user namespaces to programs without a profile
    allowing them; root keeps CAP_SYS_ADMIN and is not affected.
    """
    try:
        restricted = sysctl.read_text().strip() == "1"
    except OSError:
        return None
    if not restricted or euid == 0:
        return None
    return (
        "AppArmor restricts unprivileged user namespaces here "
        "(kernel.apparmor_restrict_unprivileged_userns=1): allow them with `sudo sysctl -w "
        "kernel.apparmor_restrict_unprivileged_userns=0`, or load an AppArmor profile that "
        "grants bwrap `userns` (Ubuntu ships one in /etc/apparmor.d/bwrap-userns-restrict)"
    )


def _protect_this_process() -> None:
    """Keep same-uid shells from reading this process's environment or memory via /proc.

    Without a PID namespace a shell of the same user could read ``/proc/<our pid>/environ``,
    which holds the API key; a non-dumpable process's /proc files belong to root.
    """
    with contextlib.suppress(OSError, AttributeError):  # not Linux: nothing better to do
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def limit_stage(limits: Limits, uid: int, running: int | None = None) -> tuple[str, ...]:
    """argv that sets ``limits`` as hard rlimits, then execs the rest of the command line.

    RLIMIT_NPROC counts every process of a uid (per user namespace on Linux 5.14+, globally
    before), so the cap is what ``uid`` runs already plus ``limits.processes``. It is not
    enforced for uid 0 at all: that is why root's shells run under another uid.
    """
    if running is None:  # a fresh uid runs nothing: no need to scan /proc
        running = tasks_of(uid)
    import resource

    wanted = {
        "-t": (resource.RLIMIT_CPU, limits.cpu_seconds, 1),
        "-v": (resource.RLIMIT_AS, limits.address_space_mb * 1024, 1024),
        "-u": (resource.RLIMIT_NPROC, running + limits.processes, 1),
        "-f": (resource.RLIMIT_FSIZE, limits.file_size_mb * 1024, 1024),  # bash: 1 KiB blocks
        "-c": (resource.RLIMIT_CORE, 0, 1024),
    }
    flags = []
    for flag, (which, value, unit) in wanted.items():
        hard = resource.getrlimit(which)[1]  # never ask for more than we have: ulimit would fail
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard // unit)
        flags += [flag, str(value)]
    script = f'ulimit -HS {" ".join(flags)} || exit 125; exec "$@"'
    return ("bash", "--noprofile", "--norc", "-c", script, "orch-review-limits")


def tasks_of(uid: int) -> int:
    """How many tasks (threads included, as RLIMIT_NPROC counts them) ``uid`` runs now."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue  # exited meanwhile
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            count += int(fields.get("Threads", "1").strip() or 1)
    return count


def unused_uid() -> int:
    """A uid no account has, for one sandboxed shell started by root."""
    while True:
        uid = _UID_BASE + secrets.randbelow(_UID_SPAN)
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid


def private_home(owner: int | None) -> str:
    """A fresh 0700 directory for one shell's $HOME, owned by ``owner`` when given."""
    home = tempfile.mkdtemp(prefix="orch-review-agent-home-")
    if owner is not None:
        os.chown(home, owner, owner)
    return home


@dataclass(frozen=True)
class PlainLauncher:
    """``--sandbox off``: the shell as this user, with a scrubbed environment only."""

    def launch(self, cwd: Path, env: Mapping[str, str], shell: Sequence[str]) -> ShellLaunch:
        """The shell itself, in a private home."""
        home = private_home(None)
        return ShellLaunch(
            tuple(shell),
            agent_environment(env, home),
            cwd,
            cleanup=lambda: shutil.rmtree(home, ignore_errors=True),
        )


@dataclass(frozen=True)
class RestrictedLauncher:
    """The fallback without bubblewrap: limits, a scrubbed environment, another uid as root."""

    limits: Limits

    def launch(self, cwd: Path, env: Mapping[str, str], shell: Sequence[str]) -> ShellLaunch:
        """The shell under rlimits, in a private home; as root, as an unused uid."""
        user = unused_uid() if os.geteuid() == 0 else None
        home = private_home(user)
        stage = limit_stage(
            self.limits, os.geteuid() if user is None else user, None if user is None else 0
        )

        def cleanup() -> None:
            if user is not None:
                _kill_everything_of(user)
            shutil.rmtree(home, ignore_errors=True)

        return ShellLaunch(
            (*stage, *shell),
            agent_environment(env, home),
            cwd,  # entered before the uid changes, so a private parent directory is fine
            user=user,
            cleanup=cleanup,
        )


def _kill_everything_of(uid: int) -> None:
    """SIGKILL every process of ``uid``, which belongs to one shell only.

    Killing the shell's process group misses processes that left it (``setsid``); the uid
    catches them. ``kill -1`` from a process of that uid reaches exactly that uid's processes.
    """
    if uid < _UID_BASE:  # never a real account, let alone root: kill -1 would hit all of it
        raise ValueError(f"refusing to kill every process of uid {uid}")
    subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", "kill -KILL -1"],
        env={"PATH": _DEFAULT_PATH},
        cwd="/",
        user=uid,
        group=uid,
        extra_groups=[],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
