"""The content under review as the agents see it: a directory and its reviewable files."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable
from pathlib import Path

# Path-like tokens; a path with spaces is not recognised (its concern uses the global key).
_PATH_TOKEN = re.compile(r"[^\s:]+")


class Workspace:
    """A directory whose reviewable files agents read and report findings on."""

    def __init__(self, root: Path, files: Iterable[str], global_key: str) -> None:
        self._root = root
        self._files = frozenset(files)
        self._global_key = global_key
        self._lines: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def root(self) -> Path:
        """Directory the agents' bash runs in."""
        return self._root

    @property
    def files(self) -> frozenset[str]:
        """Repository-relative paths of the reviewable files."""
        return self._files

    def line_count(self, path: str) -> int | None:
        """Lines of a reviewable file, or None when ``path`` is not one."""
        if path not in self._files:
            return None
        with self._lock:
            cached = self._lines.get(path)
        if cached is not None:
            return cached
        try:
            data = (self._root / path).read_bytes()
        except OSError:
            return None
        count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        with self._lock:
            self._lines[path] = count
        return count

    def mentioned_files(self, text: str) -> list[str]:
        """Reviewable paths that ``text`` names, sorted."""
        found = set()
        for token in _PATH_TOKEN.findall(text):
            candidate = token.lstrip("'\"`([{<").rstrip(".,;'\"`)]}>").removeprefix("./")
            if candidate in self._files:
                found.add(candidate)
        return sorted(found)

    def content_key(self, text: str) -> str:
        """A hash of the files ``text`` names, or of the whole content when it names none.

        A concern about two files keeps its journal entry when a third file changes.
        """
        named = self.mentioned_files(text)
        if not named:
            return self._global_key
        digest = hashlib.sha256()
        for path in named:
            digest.update(path.encode() + b"\0")
            try:
                digest.update(hashlib.sha256((self._root / path).read_bytes()).digest())
            except OSError:
                digest.update(b"missing")
        return digest.hexdigest()
