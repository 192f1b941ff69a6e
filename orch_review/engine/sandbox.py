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

Every policy hands the shell only :func:`.confinement.agent_environment` and applies
:class:`.confinement.Limits` (but ``none``) as hard rlimits, so a fork bomb, a memory bomb or
a huge file fails inside the sandbox instead of taking the machine down.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orch_review import tempdirs
from orch_review.config.choices import SandboxMode
from orch_review.engine.bash import ShellLaunch, ShellLauncher
from orch_review.engine.bwrap import BubblewrapLauncher
from orch_review.engine.confinement import (
    DEFAULT_PATH,
    Limits,
    SandboxUnavailable,
    agent_environment,
    kill_everything_of,
    limit_stage,
    private_home,
    unused_uid,
)
from orch_review.scope.view import View

APPARMOR_USERNS_SYSCTL = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`)"
_PR_SET_DUMPABLE = 4
_UNREADABLE = 4
_PROBE = (
    'test -w "$HOME" || { echo "the sandbox cannot write its private HOME"; exit 3; }; '
    f"test -r . -a -x . || exit {_UNREADABLE}"
)

Kind = Literal["bubblewrap", "landlock", "tools", "none"]


class ContentUnreadable(SandboxUnavailable):
    """The sandbox's unprivileged user cannot read the content (no fallback would either)."""


@dataclass(frozen=True)
class Sandbox:
    """The policy agents' shells run under; pass it to ``BashSession(sandbox=...)``."""

    kind: Kind
    launcher: ShellLauncher | None  # None for "tools": agents get no shell at all
    notice: str | None = None  # for the user, once per review: why it is weaker than asked

    @property
    def has_shell(self) -> bool:
        """Whether agents get a shell; without one they get read-only tools (:mod:`.readonly`)."""
        return self.launcher is not None

    def launch(self, cwd: Path, env: Mapping[str, str], shell: Sequence[str]) -> ShellLaunch:
        """How to start one shell (see :class:`ShellLauncher`); only with :attr:`has_shell`."""
        if self.launcher is None:
            raise SandboxUnavailable("no shell may run here: agents read through read-only tools")
        return self.launcher.launch(cwd, env, shell)

    @property
    def description(self) -> str:
        """One line for headers and logs."""
        return {
            "bubblewrap": "bubblewrap (read-only content, no network, private /tmp)",
            "restricted": "restricted subprocess (no bubblewrap: network and, unless run as "
            "root, the working tree are NOT protected)",
            "tools": "no shell: agents read the snapshot through read-only tools",
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
    if mode == "tools":
        return Sandbox("tools", None)
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
    return Sandbox("restricted", RestrictedLauncher(limits), notice=notice)  # type: ignore[arg-type]


def probe(launcher: ShellLauncher, root: Path) -> None:
    """Start a shell exactly as agents will and check it works; SandboxUnavailable if not."""
    env = agent_environment({"PATH": DEFAULT_PATH}, "/")
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
            cleanup=lambda: tempdirs.remove(home),
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
                kill_everything_of(user)
            tempdirs.remove(home)

        return ShellLaunch(
            (*stage, *shell),
            agent_environment(env, home),
            cwd,  # entered before the uid changes, so a private parent directory is fine
            user=user,
            cleanup=cleanup,
        )
