"""Whether a cap that is never reached slows a review: side by side at a fixed latency.

Usage: python -m bench.reserve_bench [--files 40] [--latency 2] [--times 3] [--slots 10]

A change of N small files is reviewed against the fake Messages API (scripted model: one
subtask per file; every request answered after ``--latency`` seconds), alternately without
a cap and with ``--max-cost-usd`` at ``--times`` the uncapped review's cost, the pairs
repeated ``--runs`` times. Printed per run: the wall time, the most requests in flight at
once, the spend; then the medians and the capped/uncapped ratio of wall time and of peak
concurrency (goal: within 10%, ``docs/caps.md``). Figures are printed, not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench.coverage_bench import REVIEW, make_change
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest
from tests.files_model import OneSubtaskPerFile


@dataclass(frozen=True)
class Run:
    wall: float
    peak: int
    cost: float
    covered: str


class _InFlight:
    """Counts requests that have arrived and not been answered (each takes ``latency`` s)."""

    def __init__(self, latency: float) -> None:
        self._latency = latency
        self._lock = threading.Lock()
        self._starts: list[float] = []

    def __call__(self, request: ModelRequest) -> float:
        with self._lock:
            self._starts.append(time.monotonic())
        return self._latency

    def peak(self) -> int:
        """The most requests whose waits overlapped."""
        starts = sorted(self._starts)
        best, first = 0, 0  # a sliding window of one latency
        for last, start in enumerate(starts):
            while first < last and starts[first] <= start - self._latency:
                first += 1
            best = max(best, last - first + 1)
        return best


def review(repo: Path, base: str, args: argparse.Namespace, *flags: str) -> Run:
    out = repo.parent / "report.json"
    counter = _InFlight(args.latency)
    with FakeMessagesAPI(OneSubtaskPerFile(base=base)) as api:
        api.latency = counter
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_API_KEY": "bench",
            "ORCH_REVIEW_CRITIC": "false",
            "NO_COLOR": "1",
        }
        started = time.monotonic()
        done = subprocess.run(
            [
                *REVIEW,
                "--base",
                base,
                "--max-concurrent",
                str(args.slots),
                "--json",
                str(out),
                *flags,
            ],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        wall = time.monotonic() - started
    if done.returncode not in (0, 1, 3):
        raise SystemExit(f"the review exited {done.returncode}:\n{done.stderr[-2000:]}")
    data = json.loads(out.read_text())
    files = data["coverage"]["changed_files"]
    spent = data["usage"]["total"]["cost_usd"]
    if data["summary"].startswith("Planned without the main agent"):
        print("note: the capped review was planned by the sweep (the cap is below the estimate)")
    return Run(wall, counter.peak(), spent, f"{files['covered']}/{files['total']}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--times", type=float, default=3.0, help="the cap over the cost")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--slots", type=int, default=10)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="orch-review-reserve-bench-") as root:
        repo, base, _ = make_change(Path(root), args.files)
        free: list[Run] = []
        capped: list[Run] = []
        print(f"{'run':<8} {'cap':>9} {'wall s':>7} {'peak':>5} {'spent':>9} {'covered':>9}")
        for _ in range(args.runs):
            free.append(review(repo, base, args))
            cap = round(free[-1].cost * args.times, 4)
            capped.append(review(repo, base, args, "--max-cost-usd", str(cap)))
            pair = (("uncapped", free[-1], "-"), ("capped", capped[-1], f"${cap}"))
            for name, run, shown in pair:
                print(
                    f"{name:<8} {shown:>9} {run.wall:>7.1f} {run.peak:>5} "
                    f"${run.cost:>8.4f} {run.covered:>9}",
                    flush=True,
                )
        wall = statistics.median(r.wall for r in capped) / statistics.median(r.wall for r in free)
        peak = statistics.median(r.peak for r in capped) / statistics.median(r.peak for r in free)
        print(
            f"median wall time capped/uncapped: {wall:.2f}; "
            f"median peak requests in flight capped/uncapped: {peak:.2f} "
            f"(cap {args.times:g}x the cost, {args.latency:g} s a request; goal within 10%)"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
