"""Start-up time of the command line: ``orch-review --version`` and ``orch-review plan``.

Usage: python -m bench.startup_bench [--runs 10] [--json FILE]

Each command runs as a fresh process (the installed ``orch-review`` script next to this
interpreter), ``--runs`` times after one warm-up run; the median wall time is reported. For
context it also times ``import anthropic`` and ``import rich`` on their own and says whether
each command imported them (both should load only when a command needs them). ``plan`` is
measured with ``--all`` on a small repository when ``orch-review plan --help`` succeeds.
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
_PROBE = """\
import sys
from orch_review.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(",".join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)
"""


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


def loaded_modules(args: Sequence[str], cwd: Path) -> str:
    """Which of HEAVY_MODULES the command imports."""
    probe = _PROBE.format(heavy=HEAVY_MODULES)
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], cwd=cwd, capture_output=True, text=True
    )
    lines = done.stderr.strip().splitlines()
    return (lines[-1] if lines else "") or "none"


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
        version_s, _ = timed([*cmd, "--version"], repo, runs)
        version_mods = loaded_modules(["--version"], repo)
        figures.append(
            Figure(
                "startup",
                f"`orch-review --version`, median of {runs} (heavy modules imported: "
                f"{version_mods})",
                f"{version_s * 1000:.0f} ms",
                f"<= {VERSION_TARGET_S * 1000:.0f} ms",
                version_s <= VERSION_TARGET_S,
            )
        )
        has_plan = subprocess.run([*cmd, "plan", "--help"], cwd=repo, capture_output=True)
        if has_plan.returncode == 0:
            plan_s, code = timed([*cmd, "plan", "--all"], repo, max(3, runs // 2))
            plan_mods = loaded_modules(["plan", "--all"], repo)
            value = f"{plan_s * 1000:.0f} ms" + (f" (exit code {code})" if code else "")
            label = f"heavy modules imported: {plan_mods}"
        else:
            value, label = "not available", "`orch-review plan --help` failed"
        figures.append(
            Figure(
                "startup",
                f"`orch-review plan --all`, 20-file repository ({label})",
                value,
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
