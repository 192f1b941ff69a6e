"""Pathspecs given on the command line, made relative to the repository's top.

orch-review runs git from the top of the work tree, while users name paths relative to
where they are. Plain paths are joined to the current directory; git's magic pathspecs keep
their magic: ``:!tests`` or ``:(exclude)tests`` typed in ``src/`` excludes ``src/tests``,
``:/docs`` (``top``) already names a path from the top and is left as it is.
"""

from __future__ import annotations

import os
from pathlib import Path

from orch_review.errors import GitError

_SHORT_MAGIC = {"/": "top", "!": "exclude", "^": "exclude"}


def _magic(spec: str) -> tuple[list[str], str] | None:
    """A magic pathspec's words and pattern; None for a plain path."""
    if not spec.startswith(":"):
        return None
    if spec.startswith(":("):
        listed, closed, pattern = spec[2:].partition(")")
        if not closed:
            raise GitError(f"pathspec `{spec}` has no `)` closing its magic: close it.")
        return [w for w in listed.split(",") if w], pattern
    words: list[str] = []
    rest = spec[1:]
    while rest and rest[0] in _SHORT_MAGIC:
        words.append(_SHORT_MAGIC[rest[0]])
        rest = rest[1:]
    if rest.startswith(":"):  # an optional colon ends the short magic
        rest = rest[1:]
    return words, rest


def shown(spec: str) -> str:
    """``spec`` as a person reads it: a path that git is told to take from the top, or
    literally, is shown as the path alone; other magic stays (it changes the meaning)."""
    try:
        magic = _magic(spec)
    except GitError:
        return spec
    if magic is None:
        return spec.removeprefix("./") if spec.startswith("./:") else spec
    words, pattern = magic
    return pattern if set(words) <= {"top", "literal"} else spec


def shown_list(specs: tuple[str, ...], most: int = 3) -> str:
    """``specs`` for a header: the first ``most`` shown, then how many more."""
    names = [shown(s) for s in specs]
    more = len(names) - most
    return " ".join(names[:most]) + (f" and {more} more" if more > 0 else "")


def _inside(raw: str, path: str, cwd: Path, top: Path) -> str:
    """``path`` (relative to ``cwd``, or absolute) relative to ``top``, lexically: a
    pathspec naming a symlink means the link itself, not where it points."""
    full = Path(os.path.normpath(cwd / path)) if path else cwd
    try:
        return full.relative_to(top).as_posix()
    except ValueError:
        raise GitError(f"`{raw}` is outside the repository {top}: name paths inside it.") from None


def from_cwd(specs: tuple[str, ...], cwd: Path, top: Path) -> tuple[str, ...]:
    """``specs`` as typed in ``cwd``, rewritten for git commands run at ``top``."""
    cwd, top = cwd.resolve(), top.resolve()
    out = []
    for spec in specs:
        magic = _magic(spec)
        if magic is None:
            path = _inside(spec, spec, cwd, top)
            # A file whose name starts with ":" is not magic: "./" keeps it a plain path.
            out.append(f"./{path}" if path.startswith(":") else path)
            continue
        words, pattern = magic
        if "top" in words:
            out.append(spec)
            continue
        path = _inside(spec, pattern, cwd, top)
        out.append(f":({','.join(['top', *words])}){'' if path == '.' else path}")
    return tuple(out)
