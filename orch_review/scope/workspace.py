"""The content under review as the agents see it: a snapshot and its reviewable files."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from orch_review.quoting import quote_path, unquote_path
from orch_review.scope.view import View

if TYPE_CHECKING:
    import git

# Path-like tokens; a path with spaces is not recognised (its concern uses the global key).
_PATH_TOKEN = re.compile(r"[^\s:]+")
# A name in git's quoted form, which may hold a space ("my file\377.py").
_QUOTED_NAME = re.compile(r'"(?:[^"\\\n]|\\.)+"')


class Content(Protocol):
    """The content under review read through git (a :class:`~.snapshot.Snapshot`)."""

    @property
    def view(self) -> View | None: ...
    @property
    def repo(self) -> git.Repo: ...
    @property
    def commit(self) -> str: ...
    def use(self, mounted: bool) -> None: ...
    def settle(self) -> None: ...
    def read(self, path: str) -> bytes | None: ...
    def blob_ids(self, paths: Collection[str]) -> dict[str, str]: ...


class Workspace:
    """A directory whose files agents read and report findings on."""

    def __init__(
        self,
        root: Path,
        files: Iterable[str],
        global_key: str,
        skipped: Mapping[str, str] | None = None,
        ready: Callable[[], None] | None = None,
        content: Content | None = None,
        base: str | None = None,
    ) -> None:
        """``files`` are the paths under review; ``skipped`` maps excluded paths to why;
        ``ready`` returns once the files under ``root`` are in place (they may still be being
        written when the review starts). With ``content``, files are read through it (from
        git, exact) rather than from ``root``, which agents may see through mounts only;
        ``base`` is the commit it is compared with, if any."""
        self._root = root
        self._base = base
        self._content = content
        self._ready = ready
        self._files = frozenset(files)
        self._global_key = global_key
        self._skipped = dict(skipped or {})
        self._lines: dict[str, int | None] = {}
        self._lock = threading.Lock()

    @property
    def root(self) -> Path:
        """Directory the agents' bash runs in."""
        return self._root

    @property
    def view(self) -> View | None:
        """How a mount namespace shows the content at :attr:`root` without a copy, if it can."""
        return self._content.view if self._content is not None else None

    def use(self, mounted: bool) -> None:
        """Agents' shells apply :attr:`view` (``mounted``), or need the files at :attr:`root`."""
        if self._content is not None:
            self._content.use(mounted)

    def revisions(self) -> tuple[git.Repo, str, str | None] | None:
        """The repository and commit the content is read from, and the base it is compared
        with; None when it is read from :attr:`root` alone."""
        if self._content is None:
            return None
        return self._content.repo, self._content.commit, self._base

    def settle(self) -> None:
        """Nobody reads the content at :attr:`root`: write nothing there."""
        if self._content is not None:
            self._content.settle()

    def wait(self) -> None:
        """Return once the content is in place."""
        if self._ready is not None:
            self._ready()

    @property
    def files(self) -> frozenset[str]:
        """Repository-relative paths under review."""
        return self._files

    def canonical_path(self, path: str) -> str:
        """The path under review or skipped that ``path`` names, also when written as git
        and the prompts show a name that is not UTF-8 (``"caf\\351.py"``, quotes optional);
        ``path`` itself otherwise."""
        if path in self._files or path in self._skipped or "\\" not in path:
            return path
        quoted = path if len(path) >= 2 and path[0] == path[-1] == '"' else f'"{path}"'
        try:
            raw = unquote_path(quoted)
        except ValueError:
            return path
        return raw if raw in self._files or raw in self._skipped else path

    def read(self, path: str) -> bytes | None:
        """The content of the file ``path`` under review, or None when it is none."""
        if self._content is not None:
            return self._content.read(path)
        self.wait()
        try:
            return (self._root / path).read_bytes()
        except OSError:
            return None

    def _readable(self, path: str) -> bool:
        if path in self._files:
            return True
        if path in self._skipped or path.startswith(".git/") or path == ".git":
            return False
        if self._content is not None:
            return True  # read() says whether it is a file under review
        self.wait()
        full = (self._root / path).resolve()
        try:
            full.relative_to(self._root.resolve())
        except ValueError:
            return False
        return full.is_file()

    def line_count(self, path: str) -> int | None:
        """Lines of a file findings may point at (under review, or context in the
        snapshot), or None when ``path`` is not one."""
        with self._lock:
            if path in self._lines:
                return self._lines[path]
        count: int | None = None
        if self._readable(path):
            data = self.read(path)
            if data is not None:
                count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        with self._lock:
            self._lines[path] = count
        return count

    def mentioned_files(self, text: str) -> list[str]:
        """Paths under review that ``text`` names, sorted."""
        return sorted({p for p in self._names(text) if p in self._files})

    def refusal(self, text: str) -> str | None:
        """Why a concern may not be reviewed (it names a skipped file), or None."""
        named = sorted({p for p in self._names(text) if p in self._skipped})
        if not named:
            return None
        return "; ".join(
            f"`{quote_path(p)}` is out of scope ({quote_path(self._skipped[p])})" for p in named
        )

    def _names(self, text: str) -> set[str]:
        """The words of ``text`` that may be paths, as paths (a quoted name unquoted)."""
        tokens = {
            token.lstrip("'\"`([{<").rstrip(".,;'\"`)]}>").removeprefix("./")
            for token in _PATH_TOKEN.findall(text)
        }
        tokens.update(_QUOTED_NAME.findall(text))
        return {self.canonical_path(token) for token in tokens}

    def content_key(self, text: str) -> str:
        """A hash of the files ``text`` names, or of the whole content when it names none.

        A concern about two files keeps its journal entry when a third file changes.
        """
        named = self.mentioned_files(text)
        if not named:
            return self._global_key
        digest = hashlib.sha256()
        if self._content is not None:  # git's blob ids: exact, whatever happens on disk
            ids = self._content.blob_ids(named)
            for path in named:
                digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
                digest.update(ids.get(path, "missing").encode())
            return digest.hexdigest()
        self.wait()
        for path in named:
            digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
            try:
                digest.update(hashlib.sha256((self._root / path).read_bytes()).digest())
            except OSError:
                digest.update(b"missing")
        return digest.hexdigest()
