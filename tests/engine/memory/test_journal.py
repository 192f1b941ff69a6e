from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from orch_review.engine.memory.journal import (
    JOURNAL_SCHEMA_VERSION,
    Journal,
    JournalError,
    JournalLike,
    NullJournal,
    default_journal_path,
    delete_journal_files,
    journal_key,
)
from orch_review.errors import OrchReviewError
from orch_review.trust import Signer

SIGNER = Signer(b"k" * 32, "credential")

REPO_ROOT = Path(__file__).resolve().parents[3]
BASE_PARTS: tuple[object, ...] = (
    "subagent",
    "claude-model",
    "high",
    3,
    {"system": "You review code.", "user": "Check a.py"},
    "0123abcd",
)


def _child_env() -> dict[str, str]:
    # The child must import this checkout's package even without an editable install.
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _count(path: Path) -> tuple[int, str]:
    with sqlite3.connect(path) as conn:
        count = conn.execute("SELECT count(*) FROM journal").fetchone()[0]
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    conn.close()
    return count, integrity


def test_round_trip_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "not" / "yet" / "journal.sqlite3"
    value = {
        "findings": [{"file": "a.py", "line": 3, "message": "héllo ✓"}],
        "cost": 0.25,
        "diff": "undecodable \udcff byte",
        "none": None,
    }
    with Journal(path, signer=SIGNER) as journal:
        assert journal.get("k") is None
        assert journal.put("k", "subagent", value) is True
        assert journal.get("k") == value
    with Journal(path, signer=SIGNER) as journal:
        assert journal.get("k") == value


def test_key_is_deterministic_and_ignores_dict_order() -> None:
    reordered = (*BASE_PARTS[:4], {"user": "Check a.py", "system": "You review code."}, "0123abcd")
    key = journal_key(*BASE_PARTS)
    assert key == journal_key(*reordered)
    canonical = json.dumps(
        list(BASE_PARTS), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert key == hashlib.sha256(canonical.encode()).hexdigest()
    assert journal_key("diff with \udcff") == journal_key("diff with \udcff")


@pytest.mark.parametrize("index", range(len(BASE_PARTS)))
def test_key_changes_when_any_part_changes(index: int) -> None:
    changed = list(BASE_PARTS)
    part = changed[index]
    changed[index] = {**part, "user": "Check b.py"} if isinstance(part, dict) else f"{part}!"
    assert journal_key(*changed) != journal_key(*BASE_PARTS)


def test_key_distinguishes_types_splits_and_order() -> None:
    assert journal_key(1) != journal_key("1")
    assert journal_key("a", "b") != journal_key("ab")
    assert journal_key("a", "b") != journal_key("b", "a")
    assert journal_key("a") != journal_key("a", None)


def test_overwrite_keeps_the_latest_value(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite3", signer=SIGNER) as journal:
        assert journal.put("k", "subagent", {"n": 1})
        assert journal.put("k", "verifier", {"n": 2})
        assert journal.get("k") == {"n": 2}
        stats = journal.stats()
    assert (stats.entries, stats.by_kind) == (1, {"verifier": 1})


def test_stats_and_clear(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    values = {f"s{i}": {"text": "x" * 5000, "i": i} for i in range(3)}
    with Journal(path, signer=SIGNER) as journal:
        assert journal.stats().entries == 0
        assert journal.stats().oldest is None
        for key, value in values.items():
            journal.put(key, "subagent", value)
        journal.put("v", "verifier", {"ok": True})
        stats = journal.stats()
        assert stats.path == path
        assert stats.entries == 4
        assert stats.by_kind == {"subagent": 3, "verifier": 1}
        assert stats.total_bytes > 15_000
        assert stats.oldest is not None and stats.newest is not None
        assert stats.oldest <= stats.newest
        size_before = path.stat().st_size + Path(f"{path}-wal").stat().st_size

        assert journal.clear() == 4
        assert journal.get("s0") is None
        assert journal.stats().entries == 0
        assert journal.stats().newest is None
        assert path.stat().st_size + Path(f"{path}-wal").stat().st_size < size_before
        assert journal.clear() == 0


def test_eight_threads_share_one_journal(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3", signer=SIGNER)
    start = threading.Barrier(8)
    results: list[bool] = []

    def write(thread: int) -> None:
        start.wait()
        results.extend(journal.put(f"{thread}-{i}", "subagent", {"i": i}) for i in range(200))

    threads = [threading.Thread(target=write, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert results == [True] * 1600
        assert journal.stats().entries == 1600
        assert all(journal.get(f"{t}-{i}") == {"i": i} for t in range(8) for i in range(200))
    finally:
        journal.close()


WRITER = """
import sys
from pathlib import Path
from orch_review.engine.memory.journal import Journal
from orch_review.trust import Signer
sys.stdin.readline()  # start both writers together
with Journal(Path(sys.argv[1]), signer=Signer(b'k' * 32, 'credential')) as journal:
    for i in range(500):
        assert journal.put(f"{sys.argv[2]}-{i}", "subagent", {"i": i, "pad": "x" * 500})
"""


@pytest.mark.slow
def test_two_processes_write_the_same_fresh_file(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name],
            stdin=subprocess.PIPE,
            env=_child_env(),
            text=True,
        )
        for name in ("a", "b")
    ]
    try:
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.close()
        assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    finally:
        for writer in writers:
            writer.kill()
    assert _count(path) == (1000, "ok")
    with Journal(path, signer=SIGNER) as journal:
        assert journal.get("a-499") == {"i": 499, "pad": "x" * 500}
        assert journal.get("b-0") == {"i": 0, "pad": "x" * 500}


def test_put_when_locked_logs_and_returns_false(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal(path, busy_timeout=0.05, signer=SIGNER) as journal:
        assert journal.put("before", "subagent", {"n": 1})
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN EXCLUSIVE")
        try:
            with caplog.at_level(logging.WARNING, logger="orch_review.journal"):
                assert journal.put("k", "subagent", {"n": 2}) is False
            assert journal.get("before") == {"n": 1}  # WAL: readers are not blocked
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert "could not store a subagent result" in caplog.text
        assert str(path) in caplog.text
        assert journal.put("k", "subagent", {"n": 2}) is True


def test_closed_journal_misses_and_refuses_writes_without_raising(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(tmp_path / "j.sqlite3", signer=SIGNER)
    journal.put("k", "main", {"n": 1})
    journal.close()
    with caplog.at_level(logging.WARNING, logger="orch_review.journal"):
        assert journal.put("k2", "main", {"n": 2}) is False
        assert journal.get("k") is None
    assert len(caplog.records) == 1  # one warning, with the way out
    assert "journal clear" in caplog.text


def _damage_pages(path: Path) -> None:
    """Overwrite everything after the first two pages: the header still reads fine."""
    data = path.read_bytes()
    path.write_bytes(data[:8192] + random.Random(0).randbytes(len(data) - 8192))


def test_damaged_pages_give_one_warning_with_the_hint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal(path, signer=SIGNER) as journal:
        for i in range(200):
            journal.put(f"k{i}", "subagent", {"pad": "x" * 500})
    _damage_pages(path)

    with (
        Journal(path, signer=SIGNER) as journal,
        caplog.at_level(logging.DEBUG, logger="orch_review.journal"),
    ):
        for i in range(10):
            assert journal.get(f"k{i}") is None
            assert journal.put(f"new{i}", "verifier", {}) is False
        with pytest.raises(JournalError, match="journal clear"):
            journal.stats()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "malformed" in warnings[0].getMessage()
    assert "`orch-review journal clear`" in warnings[0].getMessage()


def test_corrupt_file_raises_journal_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    path.write_bytes(random.Random(0).randbytes(8192))
    with pytest.raises(JournalError, match="journal clear") as caught:
        Journal(path, signer=SIGNER)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, OrchReviewError)
    assert path.read_bytes() == random.Random(0).randbytes(8192)  # left as it was

    assert delete_journal_files(path) is True
    with Journal(path, signer=SIGNER) as journal:
        assert journal.put("k", "main", {})


def test_foreign_or_newer_database_is_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.sqlite3"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    with pytest.raises(JournalError, match="not an orch-review journal"):
        Journal(foreign, signer=SIGNER)

    newer = tmp_path / "newer.sqlite3"
    Journal(newer, signer=SIGNER).close()
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {JOURNAL_SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(JournalError, match=f"schema version {JOURNAL_SCHEMA_VERSION + 1}"):
        Journal(newer, signer=SIGNER)


def test_unusable_path_raises_journal_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(JournalError, match="--no-journal"):
        Journal(tmp_path / "file" / "j.sqlite3", signer=SIGNER)


CRASHER = """
import sys, time
from pathlib import Path
from orch_review.engine.memory.journal import Journal
from orch_review.trust import Signer
journal = Journal(Path(sys.argv[1]), signer=Signer(b'k' * 32, 'credential'))
for i in range(50):
    assert journal.put(f"k{i}", "subagent", {"i": i})
print("done", flush=True)
time.sleep(120)
"""


@pytest.mark.slow
def test_entries_survive_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    child = subprocess.Popen(
        [sys.executable, "-c", CRASHER, str(path)],
        stdout=subprocess.PIPE,
        env=_child_env(),
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "done\n"
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        child.kill()
        if child.stdout is not None:
            child.stdout.close()
    with Journal(path, signer=SIGNER) as journal:
        assert journal.stats().entries == 50
        assert all(journal.get(f"k{i}") == {"i": i} for i in range(50))
    assert _count(path) == (50, "ok")


def test_null_journal_stores_nothing(tmp_path: Path) -> None:
    journals: list[JournalLike] = [NullJournal(), Journal(tmp_path / "j.sqlite3", signer=SIGNER)]
    with journals[0] as null:
        assert null.put("k", "main", {"n": 1}) is False
        assert null.get("k") is None
        stats = null.stats()
        assert (stats.path, stats.entries, stats.by_kind, stats.oldest) == (None, 0, {}, None)
        assert null.clear() == 0
    journals[1].close()


def test_default_path_is_inside_git_dir(tmp_path: Path) -> None:
    assert default_journal_path(tmp_path / ".git") == (
        tmp_path / ".git" / "orch-review" / "journal.sqlite3"
    )


def test_an_entry_signed_with_another_key_is_ignored_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal(path, signer=Signer(b"f" * 32, "credential")) as forged:
        forged.put("a", "file", {"findings": []})
        forged.put("b", "file", {"findings": []})
    with Journal(path, signer=SIGNER) as journal:
        assert journal.get("a") is None and journal.get("a") is None
        assert journal.ignored == 1 and "1 journal entry was ignored" in journal.trust_notes()[0]
        journal.put("b", "file", {"findings": ["mine"]})
        assert journal.get("b") == {"findings": ["mine"]}
        assert journal.ignored == 1
    with Journal(path, signer=None) as unsigned:  # no key: nothing stored, nothing trusted
        assert not unsigned.put("c", "file", {})
        assert unsigned.get("b") is None


def test_a_forged_value_under_a_valid_signature_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal(path, signer=SIGNER) as journal:
        journal.put("a", "file", {"findings": ["real"]})
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE journal SET value = ? WHERE key = 'a'", ('{"findings":[]}',))
    with Journal(path, signer=SIGNER) as journal:
        assert journal.get("a") is None and journal.ignored == 1


def test_a_journal_of_schema_1_is_emptied_and_said_so(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE journal (key TEXT PRIMARY KEY, kind TEXT NOT NULL, value TEXT NOT "
            "NULL, created_at REAL NOT NULL, bytes INTEGER NOT NULL)"
        )
        conn.execute("INSERT INTO journal VALUES ('a', 'file', '{}', 0, 2)")
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    with Journal(path, signer=SIGNER) as journal:
        assert journal.get("a") is None and journal.stats().entries == 0
        assert journal.discarded == 1
        assert "earlier version of orch-review" in journal.trust_notes()[0]
        assert journal.put("a", "file", {"x": 1}) and journal.get("a") == {"x": 1}
    assert JOURNAL_SCHEMA_VERSION == 2
