"""Start-up time of the command line: ``--version``, ``plan --help``, the hook with nothing
staged, and ``plan --all``.

Usage: python -m bench.startup_bench [--runs 10] [--json FILE]

Each command runs as a fresh process (the installed ``orch-review`` script next to this
interpreter), ``--runs`` times after one warm-up run; the median wall time is reported, with
which heavy modules the command imported, read from Python's own import report
(``PYTHONPROFILEIMPORTTIME``). None of the first three needs the anthropic SDK
(tests/cli/test_startup.py holds them to that). For context it also times ``import
anthropic`` and ``import rich`` on their own.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.figures import Figure, write_figures
from bench.workload import make_repo

VERSION_TARGET_S = 0.3
HEAVY_MODULES = ("anthropic", "rich", "git")


def command() -> list[str]:
    """How to start orch-review: the console script of this environment, else ``-m``."""
    script = Path(sys.executable).with_name("orch-review")
    return [str(script)] if script.exists() else [sys.executable, "-m", "orch_review"]


def timed(argv: Sequence[str], cwd: Path, runs: int) -> tuple[float, int]:
    """Median wall seconds of ``runs`` runs (after a warm-up) and the last exit code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCH_"))}
    code = 0
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        code = subprocess.run(argv, cwd=cwd, env=env, capture_output=True).returncode
        if i:
            times.append(time.perf_counter() - start)
    return statistics.median(times), code


def loaded_modules(argv: Sequence[str], cwd: Path) -> str:
    """Which of HEAVY_MODULES the command ``argv`` imports, as Python reports it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCH_"))}
    env["PYTHONPROFILEIMPORTTIME"] = "1"
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return ",".join(m for m in HEAVY_MODULES if m in names) or "none"


def import_time(module: str, runs: int) -> float:
    """Median seconds of ``python -c 'import module'`` minus a bare interpreter start."""
    bare, _ = timed([sys.executable, "-c", "pass"], Path.cwd(), runs)
    full, _ = timed([sys.executable, "-c", f"import {module}"], Path.cwd(), runs)
    return full - bare


def main() -> None:
    parser = argparse.ArgumentParser(description="Start-up time of the command line.")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", type=Path, help="write the figures here for run_all")
    args = parser.parse_args()
    runs: int = args.runs
    cmd = command()
    figures: list[Figure] = []

    with tempfile.TemporaryDirectory(prefix="orch-review-startup-") as tmp:
        repo = make_repo(Path(tmp) / "repo", 20, os.environ)
        fresh = [("--version", VERSION_TARGET_S), ("plan --help", None), ("hook", None)]
        for words, target in fresh:
            argv = [*cmd, *words.split()]
            seconds, code = timed(argv, repo, runs)
            label = "hook, nothing staged" if words == "hook" else words
            figures.append(
                Figure(
                    "startup",
                    f"`orch-review {label}`, median of {runs} (heavy modules imported: "
                    f"{loaded_modules(argv, repo)})",
                    f"{seconds * 1000:.0f} ms" + (f" (exit code {code})" if code else ""),
                    f"<= {target * 1000:.0f} ms" if target else "",
                    None if target is None else seconds <= target,
                )
            )
        plan = [*cmd, "plan", "--all"]
        plan_s, code = timed(plan, repo, max(3, runs // 2))
        figures.append(
            Figure(
                "startup",
                "`orch-review plan --all`, 20-file repository (heavy modules imported: "
                f"{loaded_modules(plan, repo)})",
                f"{plan_s * 1000:.0f} ms" + (f" (exit code {code})" if code else ""),
            )
        )
    for module in ("anthropic", "rich.console"):
        seconds = import_time(module, max(3, runs // 2))
        figures.append(
            Figure("startup", f"`import {module}` alone (for context)", f"{seconds * 1000:.0f} ms")
        )

    print("# Start-up\n")
    for f in figures:
        print(f"- {f.figure}: **{f.value}**" + (f" (target {f.target})" if f.target else ""))
    write_figures(args.json, figures)


if __name__ == "__main__":
    main()
