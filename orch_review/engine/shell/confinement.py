"""What every agent shell gets, whatever the sandbox around it.

Only :func:`agent_environment` (no keys, tokens or hook variables), hard rlimits set by
:func:`limit_stage`, a private home, and, when orch-review runs as root, an unused uid whose
processes all belong to one shell. The launchers of :mod:`.sandbox`, :mod:`.bwrap` and
:mod:`.landlock` build on these; this module depends on none of them.
"""

from __future__ import annotations

import os
import pwd
import secrets
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from orch_review import tempdirs
from orch_review.errors import ExitCode, OrchReviewError

# Only these variables reach an agent's shell: nothing secret, nothing from a git hook.
_PASSED_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# Shells run as root get a random uid from here, unknown to the system and unique per shell,
# so the process limit of one sandbox is not shared with any other process.
_UID_BASE, _UID_SPAN = 0x6F000000, 0x00FFFFFF


class SandboxUnavailable(OrchReviewError):
    """A sandboxed shell was asked for (``--sandbox on``, ``bubblewrap`` or ``landlock``) and
    cannot run here."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class Limits:
    """Hard resource limits of every process in a sandbox (rlimits, per process)."""

    cpu_seconds: int = 600
    address_space_mb: int = 4096
    processes: int = 256  # on top of what the sandbox's uid already runs (see limit_stage)
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
        "PATH": os.pathsep.join(dict.fromkeys(entries)) or DEFAULT_PATH,
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


def hard_limits(limits: Limits, uid: int, running: int | None = None) -> dict[str, tuple[int, int]]:
    """The rlimits to set for a shell run by ``uid``: ``ulimit`` flag -> (resource, value in
    the kernel's units), never more than this process may grant.

    RLIMIT_NPROC counts every process of a uid (per user namespace on Linux 5.14+, globally
    before), so the cap is what ``uid`` runs already plus ``limits.processes``. It is not
    enforced for uid 0 at all: that is why root's shells run under another uid.
    """
    if running is None:  # a fresh uid runs nothing: no need to scan /proc
        running = tasks_of(uid)
    import resource

    mb = 1 << 20
    wanted = {
        "-t": (resource.RLIMIT_CPU, limits.cpu_seconds),
        "-v": (resource.RLIMIT_AS, limits.address_space_mb * mb),
        "-u": (resource.RLIMIT_NPROC, running + limits.processes),
        "-f": (resource.RLIMIT_FSIZE, limits.file_size_mb * mb),
        "-c": (resource.RLIMIT_CORE, 0),
    }
    granted = {}
    for flag, (which, value) in wanted.items():
        hard = resource.getrlimit(which)[1]
        granted[flag] = (which, value if hard == resource.RLIM_INFINITY else min(value, hard))
    return granted


def limit_stage(limits: Limits, uid: int, running: int | None = None) -> tuple[str, ...]:
    """argv that sets :func:`hard_limits` as hard and soft rlimits, then execs the rest of
    the command line."""
    flags = []
    for flag, (_, value) in hard_limits(limits, uid, running).items():
        unit = 1 if flag in ("-t", "-u") else 1024  # bash counts bytes in KiB
        flags += [flag, str(value // unit)]
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


def is_throwaway_uid(uid: int) -> bool:
    """True for a uid :func:`unused_uid` hands out: a leftover home owned by one is ours."""
    return _UID_BASE <= uid < _UID_BASE + _UID_SPAN


def private_home(owner: int | None) -> str:
    """A fresh 0700 directory for one shell's $HOME, owned by ``owner`` when given."""
    home = str(tempdirs.make("agent-home"))
    if owner is not None:
        os.chown(home, owner, owner)
    return home


def kill_everything_of(uid: int) -> None:
    """SIGKILL every process of ``uid``, which belongs to one shell only.

    Killing the shell's process group misses processes that left it (``setsid``); the uid
    catches them. ``kill -1`` from a process of that uid reaches exactly that uid's processes.
    """
    if uid < _UID_BASE:  # never a real account, let alone root: kill -1 would hit all of it
        raise ValueError(f"refusing to kill every process of uid {uid}")
    subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", "kill -KILL -1"],
        env={"PATH": DEFAULT_PATH},
        cwd="/",
        user=uid,
        group=uid,
        extra_groups=[],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
