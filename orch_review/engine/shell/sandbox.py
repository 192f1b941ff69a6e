"""Where agents' shell commands run, and what a hijacked model can reach from there.

The commands come from a model reading content anyone may have written, so assume the model
is hostile. The policies, chosen by ``--sandbox`` / ``ORCH_REVIEW_SANDBOX``:

``bubblewrap``
    The content bind-mounted read-only, a private ``/tmp`` (also ``$HOME``), no network, own
    PID/IPC/UTS namespaces, a minimal ``/etc``, no user files; see :mod:`.bwrap`.
``landlock``
    Where user namespaces are missing: Landlock lets the shell read only the system's
    programs, the content and a few ``/etc`` files and write only its private home, seccomp
    refuses network sockets, and ptrace scoping keeps every outside process's
    ``/proc/PID/environ`` out of reach; see :mod:`.landlock`.
``tools``
    No shell at all: agents read the snapshot with read-only tools inside orch-review.
``none`` (``off``, only when asked for in so many words)
    The scrubbed environment and a private home, nothing else.

``auto`` takes the first of bubblewrap, Landlock and tools whose start-up self-test passes
(a test shell started exactly as agents' shells will be); it never means an unsandboxed
shell. ``on`` is a sandboxed shell or exit 2.

Every shell gets only :func:`.confinement.agent_environment` and, but under ``none``,
:class:`.confinement.Limits` as hard rlimits, so a fork bomb, a memory bomb or a huge file
fails inside the sandbox instead of taking the machine down.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from orch_review import tempdirs
from orch_review.config.choices import SandboxMode
from orch_review.engine.shell.bash import ShellLaunch, ShellLauncher
from orch_review.engine.shell.bwrap import BubblewrapLauncher
from orch_review.engine.shell.confinement import (
    DEFAULT_PATH,
    Limits,
    SandboxUnavailable,
    agent_environment,
    private_home,
)
from orch_review.engine.shell.landlock import LandlockLauncher
from orch_review.scope.view import View

APPARMOR_USERNS_SYSCTL = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`) where user "
    "namespaces are allowed, or allow the landlock_* syscalls (Linux 5.13 or later; docker's "
    "default seccomp profile does) where they are not"
)
OFF_WARNING = (
    "WARNING: --sandbox off: agents' commands run in an unsandboxed shell, as you, with the "
    "network and your files within reach."
)
_PR_SET_DUMPABLE = 4
_UNREADABLE = 4
_PROBE_SECONDS = 30
_PROBE = (
    'test -w "$HOME" || { echo "the sandbox cannot write its private HOME"; exit 3; }; '
    f"test -r . -a -x . || exit {_UNREADABLE}"
)

# The file the overlay's test puts in its top layer.
_OVERLAY_MARK = "orch-review-overlay-test"

Kind = Literal["bubblewrap", "landlock", "tools", "none"]
# The shell sandboxes, strongest first, each with what an explicit mode of that name asks for.
_SHELL_KINDS: tuple[Literal["bubblewrap", "landlock"], ...] = ("bubblewrap", "landlock")


class ContentUnreadable(SandboxUnavailable):
    """The sandbox's unprivileged user cannot read the content (no fallback would either)."""


@dataclass(frozen=True)
class Sandbox:
    """The policy agents work under; pass :attr:`launcher` to ``BashSession(sandbox=...)``."""

    kind: Kind
    launcher: ShellLauncher | None  # None for "tools": agents get no shell at all
    notice: str | None = None  # for the user, once per review: why this mode and not a stronger

    @property
    def has_shell(self) -> bool:
        """Whether agents get a shell (else read-only tools)."""
        return self.launcher is not None

    def close(self) -> None:
        """Stop what the sandbox keeps running for its shells (Landlock's zygote, and with
        it every shell it started); call it once the review is over."""
        if isinstance(self.launcher, LandlockLauncher):
            self.launcher.close()

    def launch(self, cwd: Path, env: Mapping[str, str], shell: Sequence[str]) -> ShellLaunch:
        """How to start one shell (see :class:`ShellLauncher`)."""
        if self.launcher is None:
            raise SandboxUnavailable("this sandbox gives agents no shell")
        return self.launcher.launch(cwd, env, shell)

    @property
    def description(self) -> str:
        """One line for headers and logs."""
        return {
            "bubblewrap": "bubblewrap (read-only content, no network, private /tmp)",
            "landlock": "Landlock and seccomp (read-only content, no network, no access to "
            "your files or other processes' environment)",
            "tools": "no shell (agents read the snapshot with read-only tools)",
            "none": "none (--sandbox off: an unsandboxed shell)",
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
    """The sandbox for a review of ``root``: the strongest that ``mode`` allows and that
    starts a working test shell here.

    ``search_path`` is where to look for ``bwrap`` unless ``bwrap_path`` names it; ``view``
    says how bubblewrap shows the content at ``root`` (else ``root`` holds it). Raises
    :class:`SandboxUnavailable` when ``mode`` asks for a shell sandbox none of which runs.
    """
    if mode == "tools":
        return Sandbox("tools", None)
    if mode == "off":
        _protect_this_process()
        return Sandbox("none", PlainLauncher(), notice=OFF_WARNING)
    limits = limits or Limits()
    failures: list[str] = []
    for kind in _SHELL_KINDS:
        if mode not in ("auto", "on", kind):
            continue
        launcher = None
        try:
            launcher = _launcher(kind, bwrap_path, search_path, limits, view)
            probe(launcher, root)
        except BaseException as exc:
            if isinstance(launcher, LandlockLauncher):
                launcher.close()
            if not isinstance(exc, SandboxUnavailable) or isinstance(exc, ContentUnreadable):
                raise
            reason = str(exc)
            if kind == "bubblewrap":
                hint = apparmor_hint(apparmor_sysctl, os.geteuid())
                reason = reason if hint is None else f"{reason}; {hint}"
            failures.append(f"{kind}: {reason}")
            continue
        if kind != "bubblewrap":  # bubblewrap's PID namespace hides this process already
            _protect_this_process()
        notice = None
        if failures:
            notice = (
                f"{'; '.join(failures)}. Agents' shells run under {kind} instead: "
                f"{Sandbox(kind, launcher).description}."
            )
        return Sandbox(kind, launcher, notice=notice)
    why = "; ".join(failures)
    if mode != "auto":
        wanted = "a sandboxed shell" if mode == "on" else f"a {mode} sandbox"
        raise SandboxUnavailable(
            f"--sandbox {mode} needs {wanted}, but none can run here ({why}); {INSTALL_HINT}, "
            "or use --sandbox tools (or auto) to review without a shell."
        )
    return Sandbox(
        "tools",
        None,
        notice=f"No sandboxed shell can run here ({why}), so agents get no shell: they read the "
        f"snapshot with read-only tools. For a shell, {INSTALL_HINT}.",
    )


def overlay_works(
    mode: SandboxMode, work: Path, *, search_path: str, bwrap_path: Path | None = None
) -> bool:
    """Whether bubblewrap, should it be the sandbox, can show the content as a read-only
    overlay over the working tree ``work`` (:func:`~orch_review.scope.view.build_view`): its
    ``bwrap`` has ``--overlay-src`` (0.11 and later) and such an overlay mounts here (a user
    who is not root needs Linux 5.11; some filesystems cannot be a layer). One test shell."""
    if mode not in ("auto", "on", "bubblewrap"):
        return False
    try:
        launcher = BubblewrapLauncher.find(bwrap_path, search_path, Limits())
    except SandboxUnavailable:
        return False
    if "--overlay-src" not in launcher.options:
        return False
    with tempdirs.directory("overlay-test") as top:
        layer, root = top / "layer", top / "root"
        for directory in (layer, root):
            directory.mkdir()
        for directory in (top, layer, root):
            directory.chmod(0o755)
        (layer / _OVERLAY_MARK).write_bytes(b"")
        view = View(root, (("overlay", str(work), str(layer), str(root)),), ())
        env = agent_environment({"PATH": DEFAULT_PATH}, "/")
        test = f"test -f {_OVERLAY_MARK} -a -e .git"
        try:
            launch = replace(launcher, view=view).launch(
                root, env, ("bash", "--noprofile", "--norc", "-c", test)
            )
            returncode, _ = _run(launch)
        except (OSError, subprocess.TimeoutExpired, SandboxUnavailable):
            return False
        return returncode == 0


def _launcher(
    kind: str, bwrap_path: Path | None, search_path: str, limits: Limits, view: View | None
) -> ShellLauncher:
    if kind == "bubblewrap":
        return BubblewrapLauncher.find(bwrap_path, search_path, limits, view)
    return LandlockLauncher.find(limits)


def probe(launcher: ShellLauncher, root: Path) -> None:
    """Start a shell exactly as agents will and check it works; SandboxUnavailable if not."""
    env = agent_environment({"PATH": DEFAULT_PATH}, "/")
    launch = launcher.launch(root, env, ("bash", "--noprofile", "--norc", "-c", _PROBE))
    try:
        returncode, said = _run(launch)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"its test shell could not be started ({exc})") from None
    finally:
        if launch.cleanup is not None:
            launch.cleanup()
    if returncode == _UNREADABLE:
        raise ContentUnreadable(
            f"agents' shells run as an unprivileged user, who cannot read {root}: make it "
            "readable by others (`chmod -R o+rX`) or run orch-review as a regular user."
        )
    if returncode != 0:
        text = said.decode("utf-8", "replace").strip()
        last = text.splitlines()[-1] if text else f"exit status {returncode}"
        raise SandboxUnavailable(f"its test shell failed here: {last}")


def _run(launch: ShellLaunch) -> tuple[int, bytes]:
    """Run the probe's shell to its end (within the probe's time): its exit status and
    output."""
    proc = launch.start()
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    output = bytearray()
    deadline = time.monotonic() + _PROBE_SECONDS
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise subprocess.TimeoutExpired("the test shell", _PROBE_SECONDS)
                if selector.select(remaining):
                    chunk = os.read(proc.stdout.fileno(), 65536)
                    if not chunk:
                        break
                    output += chunk
        return proc.wait(max(deadline - time.monotonic(), 0.001)), bytes(output)
    except BaseException:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        proc.stdout.close()


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
    which holds the API key; a non-dumpable process's /proc files belong to root. (Under
    Landlock its ptrace scoping refuses that already; this protects nothing else, such as
    the environment of the shell that started orch-review.)
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
