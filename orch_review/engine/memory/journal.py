"""Content-addressed journal of agent results: an interrupted review resumes without paying twice.

Each result is stored under the SHA-256 of everything that changed it, as soon as it exists,
in its own committed transaction. A journal that cannot be written never loses a result: the
write is logged and skipped, and the review goes on.

A journal file can come from anyone (a repository's ``.git``, a CI cache), so every entry is
signed with a key only this user's credential gives (see :mod:`orch_review.trust`); an entry
whose signature does not hold is ignored, and counted, as if it were not there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Self

from orch_review.environment import user_cache_home
from orch_review.errors import OrchReviewError
from orch_review.trust import Signer

# 2: entries are signed; entries of version 1 are dropped unread (they cannot be trusted).
JOURNAL_SCHEMA_VERSION = 2
logger = logging.getLogger("orch_review.journal")

_CREATE = """CREATE TABLE journal (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at REAL NOT NULL,
    bytes INTEGER NOT NULL,
    mac TEXT NOT NULL
)"""


class JournalError(OrchReviewError):
    """The journal file is corrupt, from an incompatible version, or cannot be opened."""


class JournalUnwritable(JournalError):
    """The journal's folder or file cannot be written (a read-only checkout)."""


class JournalDamaged(JournalError):
    """The journal file is not a readable SQLite database any more."""


@dataclass(frozen=True)
class JournalStats:
    """What a journal holds; ``oldest``/``newest`` are Unix times, None when empty."""

    path: Path | None
    entries: int
    total_bytes: int
    by_kind: dict[str, int]
    oldest: float | None
    newest: float | None


class JournalLike(Protocol):
    """What the engine needs from a journal; :class:`Journal` and :class:`NullJournal` both fit."""

    def get(self, key: str) -> dict[str, Any] | None: ...
    def put(self, key: str, kind: str, value: dict[str, Any]) -> bool: ...
    def stats(self) -> JournalStats: ...
    def trust_notes(self) -> list[str]: ...
    def clear(self) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc_info: object) -> None: ...


def journal_key(*parts: object) -> str:
    """SHA-256 hex of the canonical JSON of ``parts``; dict key order does not matter."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # surrogatepass: diffs decoded with surrogateescape must still hash, not crash.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def default_journal_path(git_dir: Path) -> Path:
    """The per-repository journal, inside ``.git`` so it is never committed."""
    return git_dir / "orch-review" / "journal.sqlite3"


def cache_journal_path(git_dir: Path, env: Mapping[str, str]) -> Path | None:
    """The journal of a repository whose git directory cannot be written: in the user's cache
    directory (``$XDG_CACHE_HOME`` or ``~/.cache``), one per repository; None without either."""
    cache = user_cache_home(env)
    if cache is None:
        return None
    name = hashlib.sha256(os.fsencode(git_dir.resolve())).hexdigest()[:24]
    return Path(cache) / "orch-review" / "journals" / name / "journal.sqlite3"


def delete_journal_files(path: Path) -> bool:
    """Delete a journal and its WAL side files, even a corrupt one; True if the journal existed."""
    existed = path.exists()
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        path.with_name(name).unlink(missing_ok=True)
    return existed


def check_own_path(path: Path, checkout: Path) -> None:
    """JournalUnwritable when a part of ``path`` inside ``checkout`` (the directories below
    it, the file, SQLite's ``-wal`` and ``-shm`` beside it) is a symbolic link or belongs to
    another user. A change can commit a symbolic link where the journal goes, and SQLite
    would create and write its files wherever the link points."""
    path, checkout = Path(os.path.abspath(path)), Path(os.path.abspath(checkout))
    if not path.is_relative_to(checkout):
        return  # outside the checkout: a place the user chose, not the repository
    parts = path.relative_to(checkout).parts
    places = [checkout.joinpath(*parts[: n + 1]) for n in range(len(parts))]
    places += [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    for place in places:
        try:
            info = os.lstat(place)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise JournalUnwritable(f"Cannot open the journal {path} ({exc}).") from exc
        if stat.S_ISLNK(info.st_mode):
            raise JournalUnwritable(
                f"Not opening the journal {path}: {place} is a symbolic link inside the "
                "repository, which a change can commit to make orch-review write elsewhere; "
                "keep the journal outside the checkout (ORCH_REVIEW_JOURNAL_PATH) or use "
                "--no-journal."
            )
        if info.st_uid != os.geteuid():
            raise JournalUnwritable(
                f"Not opening the journal {path}: {place} belongs to another user; keep the "
                "journal outside the checkout (ORCH_REVIEW_JOURNAL_PATH) or use --no-journal."
            )


def set_aside(path: Path) -> Path | None:
    """Rename a damaged journal (and its WAL side files) to ``NAME.damaged-TIME``; the new
    name, or None when it could not be renamed (then it is deleted)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    try:
        os.replace(path, aside)
    except OSError:
        delete_journal_files(path)
        return None
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.replace(path.with_name(path.name + suffix), aside.with_name(aside.name + suffix))
    return aside


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


class Journal:
    """Agent results in SQLite (WAL mode), safe for many threads and several processes at once."""

    def __init__(
        self,
        path: Path,
        *,
        signer: Signer | None,
        busy_timeout: float = 10.0,
        quiet: bool = False,
        checkout: Path | None = None,
        set_aside_damaged: bool = False,
    ) -> None:
        """``signer`` signs what is stored and checks what is read; without one nothing is
        stored and nothing read is trusted (``journal stats`` and ``clear`` need none).
        ``quiet``: failed lookups and stores are logged at debug level only (a second
        opening in the same run, whose user was told already). ``checkout``: the working
        tree under review; see :func:`check_own_path`. ``set_aside_damaged``: a file that is
        not a readable database is renamed (:func:`set_aside`) and a new journal started, with
        a warning; otherwise it is a :class:`JournalDamaged`."""
        self.path = Path(path)
        self._signer = signer
        self._ignored: set[str] = set()
        self.discarded = 0  # entries of an earlier schema version, dropped on opening
        # One connection shared under a lock rather than one per thread: SQLite admits a single
        # writer anyway, key lookups take microseconds next to the agent calls they save, and
        # close() can close a shared connection, whereas per-thread connections can only be
        # closed by their own threads (pooled workers would leak them). Other processes are
        # kept in order by WAL and the busy timeout.
        self._lock = threading.Lock()
        self._warned = threading.Event()
        if quiet:
            self._warned.set()
        if checkout is not None:
            check_own_path(self.path, checkout)
        self._checkout = checkout
        existed = self.path.exists()
        self._conn = self._connect(busy_timeout)
        try:
            self._prepare(time.monotonic() + busy_timeout)
        except JournalDamaged as exc:
            self._conn.close()
            if not set_aside_damaged:
                raise
            # Every later run would stop on it: keep it for a look, start a new one.
            aside = set_aside(self.path)
            logger.warning(
                "Journal %s is damaged (%s): set aside as %s, and a new journal is started; "
                "this review pays in full for what the old one held.",
                self.path, exc.__cause__, aside.name if aside else "nothing",
            )  # fmt: skip
            self._conn = self._connect(busy_timeout)
            try:
                self._prepare(time.monotonic() + busy_timeout)
            except BaseException:
                self._conn.close()
                raise
        except BaseException:
            self._conn.close()
            if not existed and _empty(self.path):
                delete_journal_files(self.path)  # a full disk: no 0-byte journal left behind
            raise

    def _connect(self, busy_timeout: float) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._checkout is not None:  # created here, never through a link made meanwhile
                os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))
            return sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise JournalUnwritable(
                f"Cannot open the journal {self.path} ({exc}); fix the path or use --no-journal."
            ) from exc

    def _prepare(self, deadline: float) -> None:
        conn = self._conn
        while True:
            try:
                # Header read first: a corrupt file fails here, before anything is written.
                if conn.execute("PRAGMA user_version").fetchone()[0] != JOURNAL_SCHEMA_VERSION:
                    self._create_schema()
                conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a killed process loses nothing committed; a power cut may
                # lose the last few entries (a re-run pays for them) but never corrupts the file.
                conn.execute("PRAGMA synchronous=NORMAL")
                return
            except sqlite3.OperationalError as exc:
                # While another process switches the file to WAL, or its last connection tidies
                # the WAL up, SQLite answers BUSY at once without waiting: retry until deadline.
                busy = exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY
                if busy and time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
                readonly = exc.sqlite_errorcode & 0xFF in (
                    sqlite3.SQLITE_READONLY,
                    sqlite3.SQLITE_CANTOPEN,
                )
                error = JournalUnwritable if readonly else JournalError
                raise error(
                    f"Cannot open the journal {self.path} ({exc}); retry, or use --no-journal."
                ) from exc
            except sqlite3.DatabaseError as exc:
                raise JournalDamaged(
                    f"The journal {self.path} is corrupt ({exc}); run `orch-review journal "
                    "clear` or delete the file."
                ) from exc

    def _create_schema(self) -> None:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")  # another process may be creating it right now
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise self._unusable("is not an orch-review journal")
            if version == 1:  # unsigned entries: nothing in them can be trusted
                self.discarded = conn.execute("SELECT count(*) FROM journal").fetchone()[0]
                conn.execute("DROP TABLE journal")
            if version in (0, 1):
                conn.execute(_CREATE)
                conn.execute(f"PRAGMA user_version = {JOURNAL_SCHEMA_VERSION}")
            elif version != JOURNAL_SCHEMA_VERSION:
                raise self._unusable(
                    f"has schema version {version}, expected {JOURNAL_SCHEMA_VERSION}"
                )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _unusable(self, why: str) -> JournalError:
        return JournalError(
            f"The journal {self.path} {why}; run `orch-review journal clear` or delete the file."
        )

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored result for ``key``, or None; a failed lookup is logged and is a miss, and
        an entry orch-review did not sign with this key is ignored (and counted)."""
        sql = "SELECT kind, value, mac FROM journal WHERE key = ?"
        try:
            with self._lock:
                row = self._conn.execute(sql, (key,)).fetchone()
        except sqlite3.Error as exc:
            self._warn(f"lookup failed ({exc})")
            return None
        if row is None:
            return None
        kind, text, mac = row
        if self._signer is None or not self._signer.valid(mac, key, kind, text):
            with self._lock:
                self._ignored.add(key)
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            self._warn(f"lookup failed ({exc})")
            return None
        return value if isinstance(value, dict) else None

    @property
    def ignored(self) -> int:
        """How many entries were looked up and ignored: not signed by orch-review with the
        key of this review's credential (forged, or written with another credential)."""
        with self._lock:
            return len(self._ignored)

    def trust_notes(self) -> list[str]:
        """What the report says about entries that were not used (empty when all were)."""
        notes = []
        if self.discarded:
            notes.append(
                f"The journal {self.path} was written by an earlier version of orch-review: "
                f"its {self.discarded} entries were not reused."
            )
        if self.ignored:
            notes.append(
                f"{self.ignored} journal entr{'y was' if self.ignored == 1 else 'ies were'} "
                "ignored: not signed by orch-review with this review's credential (written "
                "with another credential, or forged); their work was done again."
            )
        return notes

    def put(self, key: str, kind: str, value: dict[str, Any]) -> bool:
        """Store ``value`` atomically; on a database failure log a warning and return False."""
        if not isinstance(value, dict):
            raise TypeError(f"journal values are dicts, not {type(value).__name__}")
        # ASCII JSON: lone surrogates survive the round trip, and len() is the size in bytes.
        # A value json cannot encode raises TypeError here: a caller's bug, not a journal failure.
        text = json.dumps(value, separators=(",", ":"))
        if self._signer is None:
            return False  # nothing could trust it
        mac = self._signer.sign(key, kind, text)
        try:
            with self._lock:
                self._conn.execute(
                    "INSERT OR REPLACE INTO journal VALUES (?, ?, ?, ?, ?, ?)",
                    (key, kind, text, time.time(), len(text), mac),
                )
        except sqlite3.Error as exc:
            self._warn(f"could not store a {kind} result ({exc})")
            return False
        return True

    def _warn(self, what: str) -> None:
        """One warning per journal, with the way out: a damaged file fails every lookup and
        store alike, and twenty copies of the same message help no one."""
        if self._warned.is_set():
            logger.debug("Journal %s: %s.", self.path, what)
            return
        self._warned.set()
        logger.warning(
            "Journal %s: %s; the review goes on, paying again for what it cannot reuse "
            "(further journal errors are not shown). If this persists, run "
            "`orch-review journal clear`.",
            self.path,
            what,
        )

    def stats(self) -> JournalStats:
        """Entries, bytes and age of the journal, per kind."""
        sql = "SELECT kind, count(*), sum(bytes), min(created_at), max(created_at) FROM journal"
        try:
            with self._lock:
                rows = self._conn.execute(sql + " GROUP BY kind").fetchall()
        except sqlite3.Error as exc:
            raise self._unusable(f"cannot be read ({exc})") from exc
        return JournalStats(
            path=self.path,
            entries=sum(r[1] for r in rows),
            total_bytes=sum(r[2] for r in rows),
            by_kind={r[0]: r[1] for r in rows},
            oldest=min((r[3] for r in rows), default=None),
            newest=max((r[4] for r in rows), default=None),
        )

    def clear(self) -> int:
        """Remove every entry and give the space back; returns how many entries were removed."""
        with self._lock:
            try:
                removed: int = self._conn.execute("DELETE FROM journal").rowcount
            except sqlite3.Error as exc:
                raise JournalError(f"Cannot clear the journal {self.path} ({exc}).") from exc
            try:
                self._conn.execute("VACUUM")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:  # entries are gone; only the space is not reclaimed yet
                logger.warning("Journal %s: cleared, but not compacted (%s).", self.path, exc)
        return removed

    def close(self) -> None:
        """Close the database; later calls to put() return False."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class NullJournal:
    """A journal that stores nothing (``--no-journal``): every lookup misses."""

    def get(self, key: str) -> dict[str, Any] | None:
        return None

    def put(self, key: str, kind: str, value: dict[str, Any]) -> bool:
        return False

    def stats(self) -> JournalStats:
        return JournalStats(None, 0, 0, {}, None, None)

    def trust_notes(self) -> list[str]:
        return []

    def clear(self) -> int:
        return 0

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass
