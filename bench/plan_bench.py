"""``orch-review plan --all --json`` on a 100,000-file repository, next to ``git ls-files``.

Usage: python -m bench.plan_bench [--files 100000] [--runs 3] [--json FILE]

The synthetic repository (built once and reused from bench/out/plan-repo-N) has ``--files``
tracked files spread over nested directories, a ``.gitignore`` in every top-level directory
and at the root, and ignored build trees full of untracked files. Both commands run as fresh
processes, ``--runs`` times after a warm-up; medians are compared. Target: at most 2x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.figures import Figure, write_figures
from bench.startup_bench import command

OUT = Path(__file__).resolve().parent / "out"
# What any Python program producing the plan must at least do, for context: start, list the
# files with git, and write one JSON record per file; then the same with one lstat per file
# for its size. No ignore rules, no skip reasons, no pre-scout.
_LIST = (
    "import json, subprocess, sys\n"
    "out = subprocess.run(['git', 'ls-files', '-z'], capture_output=True, check=True).stdout\n"
    "paths = out.decode('utf-8', 'surrogateescape').split('\\0')[:-1]\n"
)
FLOOR_LIST_JSON = _LIST + "sys.stdout.write(json.dumps([{'path': p} for p in paths]))\n"
FLOOR_STAT_JSON = (
    _LIST + "import os\n"
    "sys.stdout.write(json.dumps([{'path': p, 'size': os.lstat(p).st_size} for p in paths]))\n"
)
TARGET_RATIO = 2.0
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def build_repo(files: int) -> Path:
    """The synthetic repository, reused when it already exists."""
    repo = OUT / f"plan-repo-{files}"
    if (repo / ".git").exists():
        return repo
    repo.mkdir(parents=True, exist_ok=True)
    (repo / ".gitignore").write_text("*.log\n/dist/\n")
    made: set[Path] = set()
    for n in range(files):
        top, mid = n % 100, (n // 100) % 20
        directory = repo / f"pkg{top:02d}" / f"mod{mid:02d}"
        if directory not in made:
            directory.mkdir(parents=True, exist_ok=True)
            made.add(directory)
        (directory / f"file{n}.py").write_text(f"def f{n}(x):\n    return x + {n}\n")
    for top in range(100):
        pkg = repo / f"pkg{top:02d}"
        (pkg / ".gitignore").write_text("build/\n!keep.py\n__pycache__/\n")
        for b in range(20):  # ignored, untracked build trees
            build = pkg / "build" / f"b{b}"
            build.mkdir(parents=True, exist_ok=True)
            (build / "out.o").write_bytes(b"\0" * 64)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "synthetic"], cwd=repo, check=True, env=env)
    return repo


def median_seconds(argv: list[str], cwd: Path, runs: int) -> float:
    """Median wall time of ``runs`` runs after one warm-up."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCH_"))}
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
        if result.returncode != 0:
            raise SystemExit(f"{argv} failed: {result.stderr.decode()[-500:]}")
        if i:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> list[Figure]:
    """Build or reuse the repository, time both commands, print and return the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    repo = build_repo(args.files)
    print(
        f"repository: {repo} ({args.files:,} tracked files; ready in "
        f"{time.perf_counter() - started:.1f}s)"
    )
    git_s = median_seconds(["git", "ls-files"], repo, args.runs)
    plan_s = median_seconds([*command(), "plan", "--all", "--json"], repo, args.runs)
    list_s = median_seconds([sys.executable, "-c", FLOOR_LIST_JSON], repo, args.runs)
    stat_s = median_seconds([sys.executable, "-c", FLOOR_STAT_JSON], repo, args.runs)
    ratio = plan_s / git_s
    print(f"git ls-files:              {git_s:.3f}s")
    print(f"orch-review plan --all --json: {plan_s:.3f}s")
    print(f"ratio: {ratio:.1f}x (target <= {TARGET_RATIO:.0f}x)")
    print(f"python, git ls-files + JSON:         {list_s:.3f}s ({list_s / git_s:.1f}x)")
    print(f"python, git ls-files + lstat + JSON: {stat_s:.3f}s ({stat_s / git_s:.1f}x)")
    figures = [
        Figure("plan", f"git ls-files, {args.files:,} files", f"{git_s:.3f}s"),
        Figure("plan", f"plan --all --json, {args.files:,} files", f"{plan_s:.3f}s"),
        Figure(
            "plan",
            "plan / git ls-files",
            f"{ratio:.1f}x",
            f"<= {TARGET_RATIO:.0f}x",
            ratio <= TARGET_RATIO,
        ),
        Figure(
            "plan",
            "for context: a Python script that only lists the files with git and writes them "
            "as JSON; the same with an lstat per file",
            f"{list_s:.3f}s ({list_s / git_s:.1f}x); {stat_s:.3f}s ({stat_s / git_s:.1f}x)",
        ),
    ]
    write_figures(args.json, figures)
    return figures


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
