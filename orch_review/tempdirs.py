"""Temporary directories: made in one place, removed on every way out, swept after a kill.

Each directory's name carries the owning process's PID (``orch-review-home.pid123.x8k2``),
so a later run can tell a leftover of a killed run (its owner dead) from one in use. The
names made by this process are kept in one registry, the only process-wide state here: a
signal unwinds the main thread, while agents' threads are abandoned mid-work, so only a
record kept outside them can remove what they made.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "orch-review-"
_OWNER_RWX = stat.S_IRWXU
_NAME = re.compile(rf"^{PREFIX}[a-z-]+\.pid(\d+)\.")


class _Registry:
    """The directories this process made and has not removed yet."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._hooked = False

    def add(self, path: str) -> None:
        with self._lock:
            self._paths.add(path)
            if not self._hooked:  # a last chance for exits that bypass the CLI's handler
                atexit.register(remove_all)
                self._hooked = True

    def discard(self, path: str) -> None:
        with self._lock:
            self._paths.discard(path)

    def take_all(self) -> list[str]:
        with self._lock:
            paths, self._paths = sorted(self._paths), set()
        return paths


_registry = _Registry()


def make(kind: str, base: str | None = None) -> Path:
    """A new private directory ``orch-review-<kind>.pid<PID>.<random>`` in ``base`` (default
    ``$TMPDIR``), registered for removal."""
    path = tempfile.mkdtemp(prefix=f"{PREFIX}{kind}.pid{os.getpid()}.", dir=base)
    _registry.add(path)
    return Path(path)


def remove(path: Path | str) -> None:
    """Remove a directory made by :func:`make`, read-only parts included."""
    _registry.discard(str(path))
    remove_tree(Path(path))


@contextmanager
def directory(kind: str, base: str | None = None) -> Iterator[Path]:
    """:func:`make`, removed when the block ends, however it ends."""
    path = make(kind, base)
    try:
        yield path
    finally:
        remove(path)


def remove_all() -> None:
    """Remove every directory this process made and still holds (on exit, on a signal)."""
    for path in _registry.take_all():
        remove_tree(Path(path))


def remove_tree(path: Path) -> None:
    """``rm -rf``, also of a tree whose directories were made read-only (a snapshot)."""
    if not path.is_dir() or path.is_symlink():
        with contextlib.suppress(OSError):
            path.unlink()
        return
    # Writable directories first: removing an entry needs write permission on its parent.
    for current, dirs, _ in os.walk(path):
        with contextlib.suppress(OSError):
            mode = os.lstat(current).st_mode
            if mode & _OWNER_RWX != _OWNER_RWX:
                os.chmod(current, mode | _OWNER_RWX)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(current, d))]
    shutil.rmtree(path, ignore_errors=True)


def owner_pid(name: str) -> int | None:
    """The PID in a directory name made by :func:`make`, or None for any other name."""
    match = _NAME.match(name)
    return int(match.group(1)) if match else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def sweep_stale(
    base: str | None = None, *, also_ours: Callable[[int], bool] = lambda uid: False
) -> list[Path]:
    """Remove directories left in ``base`` (default ``$TMPDIR``) by runs of this user that
    were killed: named by :func:`make`, owned by us (or, for root, by a uid ``also_ours``
    claims, such as the throwaway uid a shell's home was handed to), their PID not running."""
    root = Path(base or tempfile.gettempdir())
    removed: list[Path] = []
    uid = os.geteuid()
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        pid = owner_pid(entry.name)
        if pid is None or pid == os.getpid():
            continue
        try:
            owner = entry.stat(follow_symlinks=False).st_uid
            if not entry.is_dir(follow_symlinks=False) or (
                owner != uid and not (uid == 0 and also_ours(owner))
            ):
                continue
        except OSError:
            continue
        if not _alive(pid):
            remove_tree(Path(entry.path))
            removed.append(Path(entry.path))
    return removed
