"""Run every benchmark, print each one's figures, and write ``bench/out/results.md``.

Usage: bench/run_all  (or: python -m bench.run_all [--quick])

The results file starts with the machine it ran on and one table (bench, figure, value,
target, met?), followed by each bench's own output. ``--quick`` runs smaller workloads, for
checking the scripts, not for quoting.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.figures import Figure, markdown_table, read_figures

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"


@dataclass(frozen=True)
class Bench:
    """One bench script, the arguments run_all gives it, and where it saves its figures."""

    name: str
    argv: list[str]
    figures: Path | None = None  # passed as --json; None: read from its printed tables

    @property
    def command(self) -> list[str]:
        extra = ["--json", str(self.figures)] if self.figures is not None else []
        return [sys.executable, *self.argv, *extra]


def machine() -> str:
    """CPU model, cores, memory, OS and Python, in one line."""
    model = "unknown CPU"
    memory = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f", {int(line.split()[1]) / 1024 / 1024:.0f} GB RAM"
                break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} cores{memory}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def journal_figures(output: str) -> list[Figure]:
    """The headline rows of bench/journal_bench.py's markdown output."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in output.splitlines()
        if line.startswith("|")
    ]
    figures = []
    puts = [r for r in rows if r[0].startswith("put with ~")]
    if puts:
        size = re.search(r"~([\d,]+)", puts[-1][0])
        journal_ms = re.search(r"\(([\d.]+) ms\)", puts[-1][1])
        json_ms = re.search(r"\(([\d.]+) ms\)", puts[-1][2])
        if size and journal_ms and json_ms:
            figures.append(
                Figure(
                    "journal",
                    f"one put with {size.group(1)} entries stored: SQLite journal vs the "
                    "reference's rewritten JSON file",
                    f"{journal_ms.group(1)} ms vs {json_ms.group(1)} ms ({puts[-1][3]})",
                    "no per-write full rewrite",
                    float(journal_ms.group(1)) < float(json_ms.group(1)),
                )
            )
    for row in rows:
        if len(row) >= 5 and "processes" in row[1] and row[2].replace(",", "").isdigit():
            figures.append(
                Figure(
                    "journal",
                    f"{row[0]}, {row[1]}: entries found / written",
                    f"{row[3]} / {row[2]}",
                )
            )
    return figures or [Figure("journal", "journal bench", "see its section below")]


def run(bench: Bench) -> tuple[str, float]:
    """Run one bench, echoing its output; returns the output and the seconds it took."""
    print(f"\n## {bench.name}\n", flush=True)
    start = time.perf_counter()
    done = subprocess.run(bench.command, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    seconds = time.perf_counter() - start
    print(done.stdout, flush=True)
    if done.returncode != 0:
        raise SystemExit(f"{bench.name} failed with exit code {done.returncode}")
    return done.stdout, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small workloads (not for quoting)")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    requests = OUT / "fanout-requests.json"
    fanout = ["-m", "bench.fanout_bench", "--requests-out", str(requests)]
    if args.quick:
        fanout += ["--concerns", "12", "--seeds", "0", "--memory-concerns", "20"]
    critic = ["-m", "bench.critic_bench"]
    if args.quick:
        critic += ["--concerns", "12", "--critic-concerns", "2", "--seeds", "0"]
    quick_journal = ["--entries", "1000"] if args.quick else []
    quick_runs = ["--runs", "3"] if args.quick else []
    quick_plan = ["--files", "10000", "--runs", "1"] if args.quick else []
    quick_scale = ["--large", "10000", "--runs", "1", "--change", "300", "--change-small", "2000"]
    quick_scale = quick_scale if args.quick else []
    quick_sandbox = ["--shells", "30"] if args.quick else []
    quick_estimate = ["--sizes", "10", "--lines", "2"] if args.quick else []
    benches = [
        Bench("fan-out", fanout, OUT / "fanout.json"),
        Bench("critic", critic, OUT / "critic.json"),
        Bench(
            "tokens", ["-m", "bench.token_bench", "--requests", str(requests)], OUT / "tokens.json"
        ),
        Bench("journal", ["bench/journal_bench.py", *quick_journal]),
        Bench("startup", ["-m", "bench.startup_bench", *quick_runs], OUT / "startup.json"),
        Bench("layout", ["-m", "bench.layout_bench"], OUT / "layout.json"),
        Bench("hook", ["-m", "bench.hook_bench", *quick_runs], OUT / "hook.json"),
        Bench("plan", ["-m", "bench.plan_bench", *quick_plan], OUT / "plan.json"),
        Bench("scale", ["-m", "bench.scale_bench", *quick_scale], OUT / "scale.json"),
        Bench("sandbox", ["-m", "bench.sandbox_bench", *quick_sandbox], OUT / "sandbox.json"),
        Bench("estimate", ["-m", "bench.estimate_bench", *quick_estimate], OUT / "estimate.json"),
        Bench("question", ["-m", "bench.question_bench"], OUT / "question.json"),
        Bench("re-review", ["-m", "bench.rereview_bench"], OUT / "rereview.json"),
    ]
    load_before = os.getloadavg()[0]  # other work on the machine skews every figure
    started = time.perf_counter()
    figures: list[Figure] = []
    sections = []
    for bench in benches:
        output, seconds = run(bench)
        sections.append(f"## {bench.name} ({seconds:.0f} s)\n\n{output.strip()}\n")
        figures += read_figures(bench.figures) if bench.figures else journal_figures(output)
    total = time.perf_counter() - started
    load_after = os.getloadavg()[0]
    header = (
        f"# orch-review benchmarks\n\n"
        f"{datetime.date.today().isoformat()} on {machine()}; all benches {total:.0f} s; "
        f"load average {load_before:.2f} before, {load_after:.2f} after"
        f"{' (--quick: not for quoting)' if args.quick else ''}.\n"
    )
    table = markdown_table(figures)
    (OUT / "results.md").write_text(
        f"{header}\n{table}\n\n" + "\n".join(sections), encoding="utf-8"
    )
    print(f"\n{header}\n{table}\n\nwritten to {OUT / 'results.md'}")


if __name__ == "__main__":
    main()
