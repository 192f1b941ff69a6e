"""The bubblewrap command line that starts one agent shell.

Inside: ``/usr`` and a few ``/etc`` files read-only, the content under review read-only at
its own path (plus the git directories it refers to), a private ``/tmp`` that is also
``$HOME``, fresh ``/proc`` and ``/dev``, and new PID, network, IPC and UTS namespaces. No
home directory, no ``/run``, no ``/sys``, no network, no host process.

Two ways to get an unprivileged shell, because RLIMIT_NPROC (the fork-bomb guard) is never
enforced for uid 0, and that includes a user namespace that maps to uid 0:

* a regular user: a user namespace (``--unshare-user --uid 65534``, nested namespaces
  disabled when bwrap supports it);
* root: no user namespace (it would map to root); bwrap mounts as root, then ``setpriv``
  switches to an unused uid with no capabilities and ``no_new_privs``. Root-owned content
  must then be readable by others, as git checkouts are by default.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from orch_review import tempdirs
from orch_review.engine.shell.bash import ShellLaunch
from orch_review.engine.shell.confinement import (
    Limits,
    SandboxUnavailable,
    agent_environment,
    limit_stage,
    unused_uid,
)
from orch_review.engine.shell.toolchains import exposure
from orch_review.environment import without_secrets
from orch_review.scope.view import View

SANDBOX_HOME = "/tmp"
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs need from /etc to start and to name users; nothing with secrets.
ETC = (
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/os-release",
)
# The repository's own config is replaced by these sections of it: enough for git to read the
# repository, without remotes, credentials or `http.extraheader` (where actions/checkout
# keeps the GitHub token), nor settings that make git run programs.
_GIT_SECTIONS = frozenset({"core", "extensions"})
_GIT_DROPPED_KEYS = frozenset(
    {"fsmonitor", "sshcommand", "askpass", "pager", "editor", "hookspath", "gitproxy"}
)


# How each step of a view is written for bwrap.
_VIEW_OPTIONS = {
    "bind": "--ro-bind",
    "tmpfs": "--tmpfs",
    "dir": "--dir",
    "symlink": "--symlink",
    "readonly": "--remount-ro",
}


@dataclass(frozen=True)
class BubblewrapLauncher:
    """Starts shells under ``bwrap``; see :meth:`find`."""

    bwrap: str
    options: frozenset[str]  # the options this bwrap's --help lists
    limits: Limits
    setpriv: str | None = None  # set when orch-review runs as root
    view: View | None = None  # how to show the content at its root without a copy
    also_read: tuple[Path, ...] = ()  # shown read-only besides the job's tools

    @classmethod
    def find(
        cls, bwrap_path: Path | None, search_path: str, limits: Limits, view: View | None = None
    ) -> BubblewrapLauncher:
        """The bwrap at ``bwrap_path``, else on ``search_path``; SandboxUnavailable if none."""
        if bwrap_path is not None:
            if not (bwrap_path.is_file() and os.access(bwrap_path, os.X_OK)):
                raise SandboxUnavailable(f"bwrap-path {bwrap_path} is not an executable file")
            bwrap = str(bwrap_path)
        else:
            found = shutil.which("bwrap", path=search_path)
            if found is None:
                raise SandboxUnavailable("bwrap is not installed (not found on PATH)")
            bwrap = found
        try:
            shown = subprocess.run(
                [bwrap, "--help"],
                capture_output=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
                env=without_secrets(os.environ),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailable(f"{bwrap} could not be run ({exc})") from None
        text = (shown.stdout + shown.stderr).decode("utf-8", "replace")
        options = frozenset(re.findall(r"--[a-z][a-z0-9-]*", text))
        setpriv = None
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv", path=search_path)
            if setpriv is None:
                raise SandboxUnavailable(
                    "setpriv (from util-linux) was not found, and running as root the sandbox "
                    "needs it to drop root"
                )
        return cls(bwrap, options, limits, setpriv, view)

    def launch(self, cwd: Path, env: Mapping[str, str], shell: Sequence[str]) -> ShellLaunch:
        """bwrap around the shell, with ``cwd`` (the content under review) read-only."""
        root = Path(cwd).resolve()
        tools = exposure(env, self.also_read).paths
        if self.view is not None and self.view.root.resolve() == root:
            argv = self.argv(root, self.view.extra, (), shell, view=self.view, tools=tools)
            return ShellLaunch(argv, agent_environment(env, SANDBOX_HOME), root)
        extra, configs = git_paths(root)
        # Per shell, so each shell sees the config as it is when it starts.
        masks_dir = tempdirs.make("git-config") if configs else None

        def cleanup() -> None:
            if masks_dir is not None:
                tempdirs.remove(masks_dir)

        try:
            masks = []
            for index, config in enumerate(configs):
                masked = Path(str(masks_dir), f"config{index}")
                masked.write_text(sanitized_git_config(config.read_text("utf-8", "replace")))
                masked.chmod(0o644)  # read by the sandbox's uid, which may not be ours
                masks.append((masked, config))
            argv = self.argv(root, extra, masks, shell, tools=tools)
        except BaseException:
            cleanup()
            raise
        return ShellLaunch(argv, agent_environment(env, SANDBOX_HOME), root, cleanup=cleanup)

    def argv(
        self,
        root: Path,
        extra: Sequence[Path],
        masks: Sequence[tuple[Path, Path]],
        shell: Sequence[str],
        view: View | None = None,
        tools: Sequence[Path] = (),
    ) -> tuple[str, ...]:
        """The full command line (exposed for tests); with ``view``, the content at ``root``
        is the view's working tree with its mounts over it; ``tools`` are shown read-only at
        their own paths (see :mod:`.toolchains`)."""
        # --die-with-parent: bwrap's SIGKILL (the shell's timeout or close) ends the sandbox's
        # PID namespace, so every process in it. The kernel ties this to the *thread* that
        # started bwrap, which is why a BashSession stays on one thread.
        args = [self.bwrap, "--die-with-parent", "--new-session"]
        args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        args += ["--unshare-cgroup-try", "--hostname", "orch-review-sandbox"]
        if self.setpriv is None:
            args += ["--unshare-user", "--uid", "65534", "--gid", "65534"]
            if "--disable-userns" in self.options:
                args.append("--disable-userns")
        else:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        args += ["--ro-bind", "/usr", "/usr"]
        for link in _SYSTEM_LINKS:
            if os.path.islink(link):
                args += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                args += ["--ro-bind", link, link]
        for path in ETC:
            if os.path.exists(path):
                args += ["--ro-bind", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        if "--size" in self.options:
            args += ["--size", str(self.limits.tmp_size_mb << 20)]
        args += ["--tmpfs", SANDBOX_HOME]
        mounts = [root, *sorted(extra, key=lambda p: len(p.parts))]
        if view is not None:
            args += self._view_args(view)
            mounts = mounts[1:]
        for directory in mounts:
            args += ["--ro-bind", str(directory), str(directory)]
        if view is not None:
            mounts = [root, *mounts]
        for masked, config in masks:
            args += ["--ro-bind", str(masked), str(config)]
        for tool in tools:
            args += ["--ro-bind", str(tool), str(tool)]
        mounts = [*mounts, *tools]
        if "--chmod" in self.options:
            # bwrap may create the directories leading to a mount private (0700) to the
            # sandbox's root, where another uid could not walk through them.
            for parent in _created_parents(mounts):
                args += ["--chmod", "0755", str(parent)]
            args += ["--chmod", "1777", SANDBOX_HOME]
        args += ["--chdir", str(root), "--"]
        if self.setpriv is None:
            uid = os.geteuid()  # what RLIMIT_NPROC counts is our uid behind the namespace
        else:
            uid = unused_uid()
            args += [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
            args += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        fresh = self.setpriv is not None  # a new random uid runs nothing yet
        args += [*limit_stage(self.limits, uid, running=0 if fresh else None), *shell]
        return tuple(args)

    def _view_args(self, view: View) -> list[str]:
        """The options that mount ``view``'s steps; an overlay's layers bottom first."""
        args: list[str] = []
        for kind, *operands in view.steps:
            if kind == "overlay":
                if "--overlay-src" not in self.options:
                    raise SandboxUnavailable(f"{self.bwrap} cannot mount an overlay (bwrap < 0.11)")
                *layers, destination = operands
                for layer in layers:
                    args += ["--overlay-src", layer]
                args += ["--ro-overlay", destination]
            else:
                args += [_VIEW_OPTIONS[kind], *operands]
        return args


def _created_parents(mounts: Sequence[Path]) -> list[Path]:
    """Directories bwrap creates on its own root or ``/tmp`` to reach read-only mounts."""
    return list(_created_parents_of(tuple(mounts)))


@functools.lru_cache(maxsize=16)  # the same mounts for every shell of a review
def _created_parents_of(mounts: tuple[Path, ...]) -> tuple[Path, ...]:
    readonly = [Path(p) for p in ("/usr", "/proc", "/dev", *ETC)] + list(mounts)
    parents: set[Path] = set()
    for mount in readonly:
        for parent in mount.parents:
            if parent in (Path("/"), Path(SANDBOX_HOME)):
                continue
            if not any(parent.is_relative_to(m) for m in readonly):
                parents.add(parent)
    return tuple(sorted(parents, key=lambda p: (len(p.parts), str(p))))


def git_paths(root: Path) -> tuple[list[Path], list[Path]]:
    """Directories outside ``root`` that its git repository needs, and its config files.

    A worktree's ``.git`` is a file naming the real git directory, a snapshot borrows objects
    through ``objects/info/alternates``; both must be visible for ``git log`` to work.
    """
    dot = root / ".git"
    if dot.is_file():
        text = dot.read_text("utf-8", "replace").strip()
        if not text.startswith("gitdir:"):
            return [], []
        git_dir = (root / text.removeprefix("gitdir:").strip()).resolve()
    elif dot.is_dir():
        git_dir = dot.resolve()
    else:
        return [], []
    common = git_dir
    commondir = git_dir / "commondir"
    if commondir.is_file():
        common = (git_dir / commondir.read_text("utf-8", "replace").strip()).resolve()
    needed = [git_dir, common]
    alternates = common / "objects" / "info" / "alternates"
    if alternates.is_file():
        for line in alternates.read_text("utf-8", "replace").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                needed.append((common / "objects" / line).resolve())
    extra: list[Path] = []
    for path in needed:
        inside = path.is_relative_to(root) or any(path.is_relative_to(e) for e in extra)
        if path.is_dir() and not inside:
            extra = [e for e in extra if not e.is_relative_to(path)] + [path]
    configs = [p for p in (common / "config", git_dir / "config.worktree") if p.is_file()]
    return extra, configs


def sanitized_git_config(text: str) -> str:
    """The ``[core]`` and ``[extensions]`` sections of a git config, minus program settings."""
    out: list[str] = []
    keep_section = keep_value = continued = False
    for line in text.splitlines():
        stripped = line.strip()
        if continued:  # the previous value ended with a backslash: this line belongs to it
            continued = stripped.endswith("\\")
            if keep_value:
                out.append(line)
            continue
        if stripped.startswith("["):
            name = (stripped[1:].split("]", 1)[0].split() or [""])[0].split(".", 1)[0].lower()
            keep_section = name in _GIT_SECTIONS
            if keep_section:
                out.append(f"[{name}]")
            continue
        if not keep_section or not stripped or stripped[0] in "#;":
            continue
        key = stripped.split("=", 1)[0].strip().lower()
        keep_value = key not in _GIT_DROPPED_KEYS
        continued = stripped.endswith("\\")
        if keep_value:
            out.append(line)
    return "\n".join(out) + "\n"
