"""Benchmark the SQLite journal against a reference-style JSON-file journal.

Usage: python bench/journal_bench.py [--entries N] [--dir DIR]

Prints markdown tables. Every figure is measured unless its row says "estimate".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orch_review.engine.memory.journal import Journal

VALUE_BYTES = 4096
JSON_BATCH = 20  # puts timed per size for the JSON baseline (each rewrites the whole file)
JSON_BUDGET_S = 10.0  # cap on the timed puts at one size; the batch shrinks (>= 3) to fit
JOURNAL_WINDOW = 200  # puts averaged for the Journal's per-size figure
WRITERS_PER_KIND = {"threads": 4, "processes": 2}
CONCURRENT_PER_WRITER = 200


class JsonFileJournal:
    """The reference's design: one dict in one JSON file, read on open, rewritten on every put."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {}
        if path.exists():
            with path.open(encoding="utf-8") as f:
                self.data = json.load(f)

    def get(self, key: str) -> dict[str, Any] | None:
        entry = self.data.get(key)
        return None if entry is None else entry["value"]

    def put(self, key: str, kind: str, value: dict[str, Any]) -> bool:
        self.data[key] = {"kind": kind, "value": value, "created_at": time.time()}
        with self.path.open("w", encoding="utf-8") as f:
            json.dump(self.data, f)
        return True


def make_value(i: int) -> dict[str, Any]:
    """About VALUE_BYTES of JSON, incompressible so neither store gets a free ride."""
    body = random.Random(i).randbytes((VALUE_BYTES - 100) // 2).hex()
    return {"role": "subagent", "index": i, "findings": [], "transcript": body}


def key_of(i: int, prefix: str = "k") -> str:
    return f"{prefix}{i:08d}"


def rate(ops: int, seconds: float) -> float:
    return ops / seconds if seconds > 0 else float("inf")


def bench_journal(folder: Path, entries: int, sizes: list[int]) -> dict[str, Any]:
    path = folder / "journal.sqlite3"
    values = [make_value(i) for i in range(entries)]
    put_times: list[float] = []
    with Journal(path) as journal:
        start = time.perf_counter()
        for i, value in enumerate(values):
            t = time.perf_counter()
            ok = journal.put(key_of(i), "subagent", value)
            put_times.append(time.perf_counter() - t)
            assert ok
        fill = time.perf_counter() - start
    start = time.perf_counter()
    journal = Journal(path)
    open_s = time.perf_counter() - start
    keys = [key_of(i) for i in range(entries)]
    random.Random(0).shuffle(keys)
    start = time.perf_counter()
    found = sum(journal.get(k) is not None for k in keys)
    get_s = time.perf_counter() - start
    journal.close()
    assert found == entries, (found, entries)
    per_size = {}
    for size in sizes:
        window = put_times[max(0, size - JOURNAL_WINDOW) : size]
        per_size[size] = (statistics.fmean(window), len(window))
    return {
        "fill_s": fill,
        "open_s": open_s,
        "get_s": get_s,
        "per_size": per_size,
        "file_mb": sum(p.stat().st_size for p in folder.iterdir()) / 1e6,
    }


def bench_json(folder: Path, entries: int, sizes: list[int]) -> dict[str, Any]:
    path = folder / "journal.json"
    data: dict[str, Any] = {}
    per_size: dict[int, tuple[float, int]] = {}
    open_s = get_s = 0.0
    for size in sizes:
        # Untimed setup: grow the file to `size` entries minus the batch about to be timed.
        while len(data) < size - JSON_BATCH:
            i = len(data)
            data[key_of(i)] = {"kind": "subagent", "value": make_value(i), "created_at": 0.0}
        with path.open("w", encoding="utf-8") as f:
            json.dump(data, f)
        start = time.perf_counter()
        store = JsonFileJournal(path)
        open_s = time.perf_counter() - start
        times: list[float] = []
        batch = JSON_BATCH
        while len(times) < batch:
            i = len(data) + len(times)
            value = make_value(i)
            t = time.perf_counter()
            store.put(key_of(i), "subagent", value)
            times.append(time.perf_counter() - t)
            batch = min(JSON_BATCH, max(3, int(JSON_BUDGET_S / times[0])))
        per_size[size] = (statistics.fmean(times), len(times))
        data = store.data
    keys = [key_of(i) for i in range(len(data))]
    random.Random(0).shuffle(keys)
    start = time.perf_counter()
    found = sum(store.get(k) is not None for k in keys)
    get_s = time.perf_counter() - start
    assert found == len(keys)
    return {
        "open_s": open_s,
        "get_s": get_s,
        "get_n": len(keys),
        "per_size": per_size,
        "file_mb": path.stat().st_size / 1e6,
    }


def open_store(impl: str, path: Path) -> Journal | JsonFileJournal:
    return Journal(path) if impl == "journal" else JsonFileJournal(path)


def child_writer(impl: str, path: Path, prefix: str, count: int) -> None:
    """Run in a subprocess: wait for "go" on stdin, then write `count` entries."""
    sys.stdin.readline()
    store = open_store(impl, path)
    for i in range(count):
        store.put(key_of(i, prefix), "subagent", make_value(i))
    if isinstance(store, Journal):
        store.close()


def count_found(impl: str, path: Path) -> tuple[int, str]:
    """Entries readable afterwards, and the file's health, from a fresh connection."""
    if impl == "journal":
        conn = sqlite3.connect(path)
        found = conn.execute("SELECT count(*) FROM journal").fetchone()[0]
        health = conn.execute("PRAGMA integrity_check").fetchone()[0]
        conn.close()
        return found, "integrity ok" if health == "ok" else health
    try:
        return len(JsonFileJournal(path).data), "valid JSON"
    except ValueError as exc:
        return 0, f"corrupt file ({exc.__class__.__name__})"


def concurrent_threads(impl: str, path: Path, writers: int, per: int) -> tuple[int, float, int]:
    store = open_store(impl, path)
    start_line = threading.Barrier(writers)
    errors: list[BaseException] = []

    def write(w: int) -> None:
        start_line.wait()
        for i in range(per):
            try:
                store.put(key_of(i, f"t{w}-"), "subagent", make_value(i))
            except Exception as exc:  # the reference is not thread-safe: count, keep going
                errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    if isinstance(store, Journal):
        store.close()
    return writers * per, elapsed, len(errors)


def concurrent_processes(impl: str, path: Path, writers: int, per: int) -> tuple[int, float, int]:
    cmd = [sys.executable, __file__, "--child", impl, str(path)]
    procs = [
        # A crashing writer is counted through its exit code; its traceback would only be noise.
        subprocess.Popen(
            [*cmd, f"p{w}-", str(per)],
            stdin=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for w in range(writers)
    ]
    start = time.perf_counter()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.close()
    codes = [p.wait(timeout=120) for p in procs]
    return writers * per, time.perf_counter() - start, sum(c != 0 for c in codes)


def fmt_rate(ops_per_s: float) -> str:
    return f"{ops_per_s:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark the journal against a JSON file.")
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--dir", type=Path, help="where to write (default: a temporary folder)")
    parser.add_argument(
        "--child", nargs=4, metavar=("IMPL", "PATH", "PREFIX", "N"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        impl, path, prefix, count = args.child
        child_writer(impl, Path(path), prefix, int(count))
        return

    entries: int = args.entries
    if entries < 1_000:
        parser.error("--entries must be at least 1000")
    sizes = sorted({s for s in (1_000, 5_000, entries) if s <= entries and s >= JSON_BATCH})
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        wall = time.perf_counter()
        (root / "j").mkdir()
        (root / "js").mkdir()
        jr = bench_journal(root / "j", entries, sizes)
        js = bench_json(root / "js", entries, sizes)
        conc: list[tuple[str, str, int, int, int, float, int, str]] = []
        runners: dict[str, Callable[[str, Path, int, int], tuple[int, float, int]]] = {
            "threads": concurrent_threads,
            "processes": concurrent_processes,
        }
        for impl in ("journal", "json"):
            for kind, writers in WRITERS_PER_KIND.items():
                path = (
                    root / f"conc-{impl}-{kind}" / ("j.sqlite3" if impl == "journal" else "j.json")
                )
                path.parent.mkdir()
                expected, elapsed, errors = runners[kind](
                    impl, path, writers, CONCURRENT_PER_WRITER
                )
                found, health = count_found(impl, path)
                conc.append((impl, kind, writers, expected, found, elapsed, errors, health))
        wall = time.perf_counter() - wall

    print(f"# Journal benchmark: {entries:,} entries of ~{VALUE_BYTES // 1024} KB\n")
    print(
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.machine()}; "
        f"bench wall time {wall:.1f} s.\n"
    )
    print("## Stores and lookups (all measured)\n")
    print("| operation | Journal (SQLite WAL) ops/s | JSON file ops/s | Journal / JSON |")
    print("|---|---:|---:|---:|")
    print(
        f"| put, {entries:,} entries from empty | {fmt_rate(rate(entries, jr['fill_s']))} "
        f"| not measured (see estimate below) | |"
    )
    for size in sizes:
        j_s, j_n = jr["per_size"][size]
        b_s, b_n = js["per_size"][size]
        print(
            f"| put with ~{size:,} entries present (Journal: mean of {j_n} puts, "
            f"JSON: mean of {b_n}) | {fmt_rate(1 / j_s)} ({j_s * 1e3:.3f} ms) "
            f"| {fmt_rate(1 / b_s)} ({b_s * 1e3:.1f} ms) | {b_s / j_s:,.0f}x |"
        )
    print(
        f"| get, {entries:,} keys in random order (JSON: in-memory dict of "
        f"{js['get_n']:,}) | {fmt_rate(rate(entries, jr['get_s']))} "
        f"| {fmt_rate(rate(js['get_n'], js['get_s']))} "
        f"| {rate(entries, jr['get_s']) / rate(js['get_n'], js['get_s']):.2f}x |"
    )
    print(
        f"| open a store of ~{sizes[-1]:,} entries (ms, lower is better) | "
        f"{jr['open_s'] * 1e3:.1f} ms | {js['open_s'] * 1e3:.1f} ms "
        f"| {js['open_s'] / jr['open_s']:,.0f}x faster |"
    )
    print(f"\nFiles on disk: Journal {jr['file_mb']:.1f} MB, JSON {js['file_mb']:.1f} MB.\n")

    # Per-put cost of the JSON file grows linearly with its size; integrate the measured line.
    xs = [0.0, *map(float, sizes)]
    ys = [0.0, *(js["per_size"][s][0] for s in sizes)]
    slope = sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs)
    estimate = slope * entries * entries / 2
    print(
        f"ESTIMATE, not measured: filling the JSON file from empty to {entries:,} entries would "
        f"take about {estimate:,.0f} s ({entries / estimate:,.1f} puts/s), from a line through "
        f"the origin fitted to the measured per-put times above; the Journal measured "
        f"{jr['fill_s']:.1f} s.\n"
    )

    print(f"## Concurrent writers ({CONCURRENT_PER_WRITER} entries each, one shared file)\n")
    print(
        "errors: exceptions raised by put() (threads) or writer processes that crashed "
        "(processes); found: entries a fresh reader sees afterwards.\n"
    )
    print("| store | writers | expected | found | errors | health | seconds |")
    print("|---|---|---:|---:|---:|---|---:|")
    for impl, kind, writers, expected, found, elapsed, errors, health in conc:
        name = "Journal (SQLite WAL)" if impl == "journal" else "JSON file"
        shared = "one shared object" if kind == "threads" else "one store each"
        print(
            f"| {name} | {writers} {kind} ({shared}) | {expected:,} | {found:,} | {errors} "
            f"| {health} | {elapsed:.2f} |"
        )


if __name__ == "__main__":
    main()
