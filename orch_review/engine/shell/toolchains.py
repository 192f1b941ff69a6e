"""The job's own tools, shown read-only to the sandboxed shells at the paths the job uses.

A review runs where the project's tests can run: a virtual environment with its test
dependencies, a ``node`` or ``go`` installed outside ``/usr`` (``/opt``, a version manager
under ``$HOME``), the project's ``node_modules``. Each shell sees the prefixes of the
``python``, ``pytest``, ``node`` and ``go`` its ``PATH`` finds (and of the active virtual
environment), read-only and at the same paths, so they resolve in the shell as in the job.

Never a home directory, nor a directory that holds one, nor one holding credentials
(``.ssh``, ``.netrc``, ``.config/gh``, ...) or a git repository (whose config may hold a
token): those are left out, and :attr:`Exposure.refused` says why.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The programs whose prefixes a shell is shown.
PROGRAMS = ("python", "python3", "pytest", "node", "go")
#: What no exposed directory may hold.
CREDENTIALS = (
    ".ssh",
    ".netrc",
    ".config/gh",
    ".aws",
    ".docker",
    ".git-credentials",
    ".gnupg",
    ".kube",
    ".pypirc",
    ".npmrc",
    ".git",
    "share/keyrings",  # a prefix of ~/.local (pip install --user)
    "share/python_keyring",
)
# Every shell sees these already.
_SYSTEM = tuple(Path(p) for p in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64"))


@dataclass(frozen=True)
class Exposure:
    """What the shells are shown beyond the system, and what was left out."""

    paths: tuple[Path, ...] = ()
    refused: tuple[str, ...] = ()  # one sentence per directory left out, saying why

    @property
    def note(self) -> str:
        """The refusals as one clause for a reason ("" when none)."""
        return "; ".join(self.refused)


def exposure(env: Mapping[str, str], also: Sequence[Path] = ()) -> Exposure:
    """The prefixes of the tools ``env``'s ``PATH`` finds, and ``also``, that a shell may
    be shown read-only."""
    home = env.get("HOME") or os.path.expanduser("~")
    return _exposure(env.get("PATH", ""), env.get("VIRTUAL_ENV", ""), home, tuple(also))


# Every shell of a review starts with the same environment; finding the tools takes a few
# milliseconds, a good part of a shell's start.
@functools.lru_cache(maxsize=16)
def _exposure(search_path: str, venv: str, home_dir: str, also: tuple[Path, ...]) -> Exposure:
    home = Path(home_dir)
    candidates: list[Path] = []
    if os.path.isabs(venv) and Path(venv, "pyvenv.cfg").is_file():
        candidates += _prefixes(Path(venv, "bin", "python"), Path(venv))
    search = os.pathsep.join(p for p in search_path.split(os.pathsep) if os.path.isabs(p))
    for program in PROGRAMS:
        found = shutil.which(program, path=search) if search else None
        if found is not None:
            candidates += _prefixes(Path(found), None)
    candidates += [Path(p) for p in also]
    kept: list[Path] = []
    refused: list[str] = []
    for path in dict.fromkeys(Path(os.path.normpath(p)) for p in candidates):
        if not path.is_absolute() or not path.is_dir() or _visible_anyway(path):
            continue
        why = _refusal(path, home)
        if why is not None:
            if why not in refused:
                refused.append(why)
            continue
        kept.append(path)
    # A directory inside another one shown adds nothing.
    outer = [p for p in kept if not any(p != q and p.is_relative_to(q) for q in kept)]
    return Exposure(tuple(outer), tuple(refused))


def _prefixes(program: Path, venv: Path | None) -> list[Path]:
    """The directories ``program`` needs: its virtual environment (the one given, or the one
    its ``bin`` is in) and the installation the environment's interpreter comes from; else
    the prefix (the parent of ``bin``) of the real file, when it is a compiled program.

    A script outside a virtual environment is a version manager's shim (pyenv, asdf) more
    often than not, which works only with the manager's own files and settings: shown
    alone, it would shadow the next program on the PATH with one that cannot start."""
    if venv is None and (program.parent.parent / "pyvenv.cfg").is_file():
        venv = program.parent.parent
    real = Path(os.path.realpath(program))
    prefix = real.parent.parent if real.parent.name == "bin" else real.parent
    if venv is not None:
        return [venv, prefix]
    return [prefix] if _compiled(real) else []


def _compiled(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(4) == b"\x7fELF"
    except OSError:
        return False


def _visible_anyway(path: Path) -> bool:
    real = Path(os.path.realpath(path))
    return any(real.is_relative_to(s) for s in _SYSTEM)


def _refusal(path: Path, home: Path) -> str | None:
    """Why ``path`` may not be shown, or None."""
    real = Path(os.path.realpath(path))
    real_home = Path(os.path.realpath(home))
    if real == Path("/") or real_home.is_relative_to(real):
        return f"{path} was not shown to the sandbox: it holds the home directory"
    for name in CREDENTIALS:
        if os.path.lexists(real / name):
            return f"{path} was not shown to the sandbox: it holds {name}"
    return None


def go_module_cache(env: Mapping[str, str]) -> Path | None:
    """The job's Go module cache (``GOMODCACHE``, else ``$GOPATH/pkg/mod``, else
    ``~/go/pkg/mod``), where ``go mod download`` put the module's dependencies; None when
    there is none."""
    gopath = env.get("GOPATH", "").split(os.pathsep)[0]
    home = env.get("HOME") or os.path.expanduser("~")
    for candidate in (
        env.get("GOMODCACHE", ""),
        os.path.join(gopath, "pkg", "mod") if gopath else "",
        os.path.join(home, "go", "pkg", "mod"),
    ):
        if os.path.isabs(candidate) and os.path.isdir(candidate):
            return Path(candidate)
    return None
