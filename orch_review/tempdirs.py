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
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "orch-review-"
_OWNER_RWX = stat.S_IRWXU
_NAME = re.compile(rf"^{PREFIX}[a-z-]+\.pid(\d+)\.")


class _Registry:
    """The directories this process made and has not removed yet, and the directories it
    made them in (recorded first: a signal between ``mkdtemp`` and the record of its name
    leaves a directory that only its name, with this PID in it, can find)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._bases: set[str] = set()
        self._hooked = False

    def add_base(self, base: str) -> None:
        with self._lock:
            self._bases.add(base)
            if not self._hooked:  # a last chance for exits that bypass the CLI's handler
                atexit.register(remove_all)
                self._hooked = True

    def add(self, path: str) -> None:
        with self._lock:
            self._paths.add(path)

    def discard(self, path: str) -> None:
        with self._lock:
            self._paths.discard(path)

    def held(self) -> list[str]:
        """What is registered, and every directory named for this process in the bases."""
        with self._lock:
            paths, bases = set(self._paths), sorted(self._bases)
        prefix = f".pid{os.getpid()}."
        for base in bases:
            with contextlib.suppress(OSError), os.scandir(base) as entries:
                paths.update(
                    e.path
                    for e in entries
                    if e.name.startswith(PREFIX) and prefix in e.name and owner_pid(e.name)
                )
        return sorted(paths)


_registry = _Registry()


def make(kind: str, base: str | None = None) -> Path:
    """A new private directory ``orch-review-<kind>.pid<PID>.<random>`` in ``base`` (default
    ``$TMPDIR``), registered for removal."""
    where = os.path.abspath(base or tempfile.gettempdir())
    _registry.add_base(where)
    path = tempfile.mkdtemp(prefix=f"{PREFIX}{kind}.pid{os.getpid()}.", dir=where)
    pause_point(f"made:{kind}")
    _registry.add(path)
    return Path(path)


def remove(path: Path | str) -> None:
    """Remove a directory made by :func:`make`, read-only parts included. It stays
    registered until it is gone: a signal in the middle leaves it to :func:`remove_all`."""
    pause_point(f"removing:{_kind(Path(path).name)}")
    remove_tree(Path(path))
    if not os.path.lexists(path):
        _registry.discard(str(path))


@contextmanager
def directory(kind: str, base: str | None = None) -> Iterator[Path]:
    """:func:`make`, removed when the block ends, however it ends."""
    path = make(kind, base)
    try:
        yield path
    finally:
        remove(path)


# How often remove_all looks again for what a child process still writing recreated.
_PASSES = 20
_PAUSE = 0.05


def remove_all() -> None:
    """Remove every directory this process made and still holds (on exit, on a signal),
    also one whose name was not recorded yet when a signal came. SIGTERM, SIGHUP and SIGINT
    are ignored meanwhile (on the main thread): the process is ending anyway, and a second
    signal must not leave half a tree behind. A git that was still writing into a directory
    when the signal came may make it again: it is removed again."""
    with _signals_held():
        for attempt in range(_PASSES):
            held = _registry.held()
            for path in held:
                remove_tree(Path(path))
                if not os.path.lexists(path):
                    _registry.discard(path)
            if not any(os.path.lexists(p) for p in held) or attempt == _PASSES - 1:
                break
            time.sleep(_PAUSE)


_HELD_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name)
)


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGINT ignored for the block, on the main thread (where Python
    runs signal handlers); elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for signum in _HELD_SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            previous[signum] = signal.signal(signum, signal.SIG_IGN)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, handler)


#: Where :func:`pause_point` waits, and the file it creates once it waits there.
PAUSE_VARIABLE = "ORCH_REVIEW_PAUSE_AT"
PAUSE_MARK_VARIABLE = "ORCH_REVIEW_PAUSE_MARK"
_PAUSE_LIMIT = 120.0


def pause_point(point: str) -> None:
    """A seam for testing what a signal does at one exact point (``made:snapshot``: a
    directory made but not recorded yet; ``removing:home``: about to be removed): when
    ``$ORCH_REVIEW_PAUSE_AT`` names ``point``, create the file ``$ORCH_REVIEW_PAUSE_MARK``
    and wait there (at most two minutes) for the signal. Nothing otherwise."""
    if os.environ.get(PAUSE_VARIABLE) != point:
        return
    Path(os.environ[PAUSE_MARK_VARIABLE]).touch()
    deadline = time.monotonic() + _PAUSE_LIMIT
    while time.monotonic() < deadline:
        time.sleep(_PAUSE)


def _kind(name: str) -> str:
    return name.removeprefix(PREFIX).split(".pid", 1)[0]


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
