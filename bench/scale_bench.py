"""Does a review cost O(change)? The same small change in a small and a huge repository.

Usage: python -m bench.scale_bench [--small 100] [--large 100000] [--runs 3]
    [--layouts nested flat] [--change 1500 --change-small 5000] [--bwrap PATH] [--json FILE]

Synthetic repositories of two layouts (:mod:`bench.layouts`: the plan bench's nested
packages, and every file in one directory; built once under ``bench/out`` and reused),
``--small`` and ``--large`` tracked files. In each, against the fake Messages API served
from this process with no latency:

* **review**: ``orch-review`` (the default scope) on a 2-file working-tree change;
* **hook**: ``orch-review hook FILE`` on one staged file, as pre-commit runs it;
* **large change**: ``orch-review --base --head`` on a committed change of ``--change``
  files (scripted model: one subtask per file, the rest swept), in a repository of
  ``--change-small`` files and in the large one: the CPU seconds of the review and every
  process it started. Twice: as a later review, whose agents' tree of links was kept by the
  one before (the warm-up's) and is brought up to date; and as a repository's first review
  (a fresh CI checkout), the kept tree removed before each run;
* **plan in a pipe**: ``plan --all --limit 0`` piped, next to ``plan --all --json``, on the
  large nested repository.

``--bwrap`` names the bubblewrap the large change's reviews use (``--bwrap-path``): one of
0.11 or later shows the change as overlays over the working tree (``scope/view.py``), where
an older one needs the tree of links.

Fresh processes, medians of ``--runs`` after a warm-up, no journal. Targets: large / small
<= 1.5x for the review's wall time, the hook's and the large change's CPU; piped plan <= 2x
the JSON plan.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.figures import Figure, write_figures
from bench.layouts import LAYOUTS, build, path_of, with_change
from bench.plan_bench import GIT_ENV
from bench.startup_bench import command
from orch_review.scope.kept_tree import kept_place
from orch_review.tempdirs import remove_tree
from tests.fakes.messages_api import FakeMessagesAPI
from tests.files_model import OneSubtaskPerFile
from tests.scripted import Concern, ReviewScript

SCALE_TARGET = 1.5
PIPE_TARGET = 2.0


def changed(layout: str) -> tuple[str, str]:
    """The two files the small change edits, in every repository of ``layout``."""
    return path_of(layout, 0), path_of(layout, 1)


def script(paths: Sequence[str]) -> ReviewScript:
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
            for n, path in enumerate(paths)
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


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def interleaved(
    runs_of: Sequence[tuple[list[str], Path]],
    env: dict[str, str],
    runs: int,
    ok: set[int],
    *,
    cpu: bool = False,
) -> list[float]:
    """Median wall seconds (with ``cpu``: CPU seconds of the process and all it waited for)
    of each (argv, directory), their runs interleaved so that a change in the machine's load
    hits them alike, after a warm-up of each."""
    times: list[list[float]] = [[] for _ in runs_of]
    for i in range(runs + 1):
        for n, (argv, cwd) in enumerate(runs_of):
            start, used = time.perf_counter(), _child_cpu()
            done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
            if done.returncode not in ok:
                raise SystemExit(f"{argv} exited {done.returncode}:\n{done.stderr[-2000:]}")
            if i:
                times[n].append(_child_cpu() - used if cpu else time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def _bench_env(api: FakeMessagesAPI) -> dict[str, str]:
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
    return env


def time_large_change(
    layout: str,
    sizes: Sequence[int],
    files: int,
    runs: int,
    *,
    first: bool = False,
    bwrap: Path | None = None,
) -> list[float]:
    """Per repository size, median CPU seconds of a review of the same committed
    ``files``-file change, the runs interleaved, after a warm-up of each. ``first``: each
    run is the repository's first review, with no tree of links kept from an earlier one
    (``scope/kept_tree.py``); otherwise the warm-up's tree is brought up to date."""
    repos = [build(layout, size) for size in sizes]
    changes = [with_change(repo, layout, files) for repo in repos]
    cpu: list[list[float]] = [[] for _ in repos]
    for i in range(runs + 1):
        for n, (repo, (base, head)) in enumerate(zip(repos, changes, strict=True)):
            if first:
                remove_tree(kept_place(repo / ".git"))
            with FakeMessagesAPI(OneSubtaskPerFile(base=base)) as api:
                argv = [*command(), "--base", base, "--head", head, "--no-progress"]
                argv += ["--bwrap-path", str(bwrap)] if bwrap is not None else []
                used = _child_cpu()
                done = subprocess.run(argv, cwd=repo, env=_bench_env(api), capture_output=True)
                if done.returncode not in (0, 1):
                    raise SystemExit(f"{argv} exited {done.returncode}: {done.stderr[-2000:]!r}")
                if i:
                    cpu[n].append(_child_cpu() - used)
    return [statistics.median(c) for c in cpu]


def time_repos(
    repos: Sequence[Path], api: FakeMessagesAPI, runs: int, paths: Sequence[str]
) -> list[list[float]]:
    """Per repository, seconds of a review of a 2-file change and of the hook on one staged
    file."""
    env = _bench_env(api)
    try:
        for repo in repos:
            _edit(repo, paths)
        review = interleaved([(command(), r) for r in repos], env, runs, {0, 1})
        for repo in repos:
            _git(repo, "checkout", "--", *paths)
            _edit(repo, paths[:1])
            _git(repo, "add", paths[0])
        hook = interleaved([([*command(), "hook", paths[0]], r) for r in repos], env, runs, {0, 1})
    finally:
        for repo in repos:
            _git(repo, "reset", "-q", "--", *paths)
            _git(repo, "checkout", "--", *paths)
    return [[review[n], hook[n]] for n in range(len(repos))]


def _ratio_figures(
    label: str, small: int, large: int, low: float, high: float, unit: str
) -> list[Figure]:
    ratio = high / low
    print(f"{label}: {low:.2f}{unit} small, {high:.2f}{unit} large, {ratio:.2f}x", flush=True)
    return [
        Figure("scale", f"{label}, {small:,} files", f"{low:.2f}{unit}"),
        Figure("scale", f"{label}, {large:,} files", f"{high:.2f}{unit}"),
        Figure(
            "scale",
            f"{label}: {large:,} / {small:,} files",
            f"{ratio:.2f}x",
            f"<= {SCALE_TARGET}x",
            ratio <= SCALE_TARGET,
        ),
    ]


def main(argv: list[str] | None = None) -> list[Figure]:
    """Build or reuse the repositories, time everything, print and return the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--layouts", nargs="+", choices=LAYOUTS, default=list(LAYOUTS))
    parser.add_argument("--change", type=int, default=1500, help="files of the large change")
    parser.add_argument("--change-small", type=int, default=5000)
    parser.add_argument("--bwrap", type=Path, help="bubblewrap for the large change")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    figures: list[Figure] = []
    # The machine's load says how far the wall times can be trusted: print it as it goes.
    loads = [os.getloadavg()[0]]
    for layout in args.layouts:
        started = time.perf_counter()
        small, large = build(layout, args.small), build(layout, args.large)
        print(f"{layout} repositories ready in {time.perf_counter() - started:.1f}s", flush=True)
        paths = changed(layout)
        with FakeMessagesAPI(script(paths)) as api:
            low_high = time_repos([small, large], api, args.runs, paths)
        for index, what in ((0, "review, 2-file working-tree change"), (1, "hook, 1 staged file")):
            low, high = low_high[0][index], low_high[1][index]
            figures += _ratio_figures(f"{layout}: {what}", args.small, args.large, low, high, "s")
        if args.change:
            sizes = (args.change_small, args.large)
            for first, which in ((False, "a later review"), (True, "the first review")):
                low, high = time_large_change(
                    layout, sizes, args.change, args.runs, first=first, bwrap=args.bwrap
                )
                label = f"{layout}: {which} of a {args.change:,}-file change, CPU"
                figures += _ratio_figures(label, *sizes, low, high, "s")
        loads.append(os.getloadavg()[0])
        print(f"load average (1 min) so far: {min(loads):.1f} to {max(loads):.1f}", flush=True)
    large = build("nested", args.large)
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
    loads.append(os.getloadavg()[0])
    spread = f"{min(loads):.1f} to {max(loads):.1f}"
    print(f"load average (1 min) during the run: {spread}")
    figures.append(Figure("scale", "load average (1 min) during the run", spread))
    write_figures(args.json, figures)
    return figures


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
