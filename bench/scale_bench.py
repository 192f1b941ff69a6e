"""Does a review cost O(change)? The same small change in a small and a huge repository.

Usage: python -m bench.scale_bench [--small 100] [--large 100000] [--runs 3] [--json FILE]

Two synthetic repositories of the plan bench's shape (``bench/out/plan-repo-N``, built once
and reused: nested packages, ignored build trees), ``--small`` and ``--large`` tracked files.
In each, against the fake Messages API served from this process with no latency:

* **review**: ``orch-review`` (the default scope) on a 2-file working-tree change;
* **hook**: ``orch-review hook FILE`` on one staged file, as pre-commit runs it;
* **plan in a pipe**: ``plan --all --limit 0`` piped, next to ``plan --all --json``, on the
  large repository.

Fresh processes, medians of ``--runs`` after a warm-up, no journal. Targets: large / small
<= 1.5x for the review and the hook, piped plan <= 2x the JSON plan.
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
from bench.plan_bench import GIT_ENV, build_repo
from bench.startup_bench import command
from tests.fakes.messages_api import FakeMessagesAPI
from tests.scripted import Concern, ReviewScript

SCALE_TARGET = 1.5
PIPE_TARGET = 2.0
# Files of every plan-bench repository, whatever its size (n % 100 picks the package).
CHANGED = ("pkg00/mod00/file0.py", "pkg01/mod00/file1.py")


def script() -> ReviewScript:
    """One concern per changed file: the subagent greps it, the verifier confirms."""
    return ReviewScript(
        [
            Concern(
                f"file{n}",
                f"Check {path}: is the value added to x checked?",
                f"grep -n 'return' {path}",
                path=path,
                severity="low",
                claim="the value is added unchecked",
            )
            for n, path in enumerate(CHANGED)
        ],
        scout="git log --stat -1",
    )


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _edit(repo: Path, paths: Sequence[str]) -> None:
    for path in paths:
        with (repo / path).open("a", encoding="utf-8") as stream:
            stream.write("# edited for the scale bench\n")


def interleaved(
    runs_of: Sequence[tuple[list[str], Path]], env: dict[str, str], runs: int, ok: set[int]
) -> list[float]:
    """Median wall seconds of each (argv, directory), their runs interleaved so that a change
    in the machine's load hits them alike, after a warm-up of each."""
    times: list[list[float]] = [[] for _ in runs_of]
    for i in range(runs + 1):
        for n, (argv, cwd) in enumerate(runs_of):
            start = time.perf_counter()
            done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
            if done.returncode not in ok:
                raise SystemExit(f"{argv} exited {done.returncode}:\n{done.stderr[-2000:]}")
            if i:
                times[n].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def time_repos(repos: Sequence[Path], api: FakeMessagesAPI, runs: int) -> list[list[float]]:
    """Per repository, seconds of a review of a 2-file change and of the hook on one staged
    file."""
    home = Path(tempfile.mkdtemp(prefix="orch-review-scale-home-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCH_"))}
    env.update(
        ANTHROPIC_BASE_URL=api.base_url,
        ANTHROPIC_API_KEY="bench-key",
        HOME=str(home),
        ORCH_REVIEW_CRITIC="false",
        ORCH_REVIEW_PROVE="off",
        ORCH_REVIEW_JOURNAL="false",  # every run pays for its agents: nothing is reused
        NO_COLOR="1",
    )
    try:
        for repo in repos:
            _edit(repo, CHANGED)
        review = interleaved([(command(), r) for r in repos], env, runs, {0, 1})
        for repo in repos:
            _git(repo, "checkout", "--", *CHANGED)
            _edit(repo, CHANGED[:1])
            _git(repo, "add", CHANGED[0])
        hook = interleaved(
            [([*command(), "hook", CHANGED[0]], r) for r in repos], env, runs, {0, 1}
        )
    finally:
        for repo in repos:
            _git(repo, "reset", "-q", "--", *CHANGED)
            _git(repo, "checkout", "--", *CHANGED)
    return [[review[n], hook[n]] for n in range(len(repos))]


def main(argv: list[str] | None = None) -> list[Figure]:
    """Build or reuse both repositories, time everything, print and return the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    small, large = build_repo(args.small), build_repo(args.large)
    print(f"repositories ready in {time.perf_counter() - started:.1f}s")
    figures: list[Figure] = []
    with FakeMessagesAPI(script()) as api:
        low_high = time_repos([small, large], api, args.runs)
    timed = {args.small: low_high[0], args.large: low_high[1]}
    for index, label in ((0, "review, 2-file working-tree change"), (1, "hook, 1 staged file")):
        low, high = timed[args.small][index], timed[args.large][index]
        ratio = high / low
        print(f"{label}: {low:.2f}s small, {high:.2f}s large, {ratio:.2f}x")
        figures += [
            Figure("scale", f"{label}, {args.small:,} files", f"{low:.2f}s"),
            Figure("scale", f"{label}, {args.large:,} files", f"{high:.2f}s"),
            Figure(
                "scale",
                f"{label}: {args.large:,} / {args.small:,} files",
                f"{ratio:.2f}x",
                f"<= {SCALE_TARGET}x",
                ratio <= SCALE_TARGET,
            ),
        ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCH_"))}
    plans = [[*command(), "plan", "--all", "--json"], [*command(), "plan", "--all", "--limit", "0"]]
    as_json, piped = interleaved([(argv, large) for argv in plans], env, args.runs, {0})
    ratio = piped / as_json
    print(f"plan --all, large: piped {piped:.2f}s, --json {as_json:.2f}s, {ratio:.2f}x")
    figures += [
        Figure("scale", f"plan --all --limit 0 piped, {args.large:,} files", f"{piped:.2f}s"),
        Figure("scale", f"plan --all --json, {args.large:,} files", f"{as_json:.2f}s"),
        Figure(
            "scale",
            "plan piped / plan --json",
            f"{ratio:.2f}x",
            f"<= {PIPE_TARGET}x",
            ratio <= PIPE_TARGET,
        ),
    ]
    write_figures(args.json, figures)
    return figures


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
