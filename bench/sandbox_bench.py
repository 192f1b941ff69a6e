"""What the sandbox costs a review's agents: each mode's start-up per shell, and, under
bubblewrap, on a large shard: mounts, one shared tree, a copy.

Usage: python -m bench.sandbox_bench [--files 2000] [--changed 365] [--shells 171]
                                     [--at-once 10] [--starts 60] [--json FILE]
(--shells 0: the start-up figures only)

Start-up per shell: ``--starts`` rounds, each starting one shell of every mode in turn and
running ``true`` in it, in the review's snapshot (written out whole), under each shell mode
that runs here (bubblewrap, Landlock + seccomp, and ``off`` for the bare cost of a shell);
``tools`` starts no shell at all. Landlock's shells are forked by the review's zygote,
started by the sandbox's probe: the cost a review pays per shell after its first;
``landlock-alone`` is the same sandbox with a launcher started for each shell (where the
zygote cannot start). Stopping a shell (and, run as root, killing every process of its
uid) is timed apart. Target: Landlock's start no slower than bubblewrap's.

A synthetic repository (``bench/out/sandbox-repo-N``, built once) whose last commit changes
``--changed`` files, reviewed as ``--base HEAD~1 --head HEAD``. For each way of showing the
content to bubblewrap, the snapshot is prepared as a review prepares it, then ``--shells``
agent shells (the 365-file shard started 171) start and run ``git status`` under
bubblewrap, ``--at-once`` at a time as a review's slots start them:

* **mounts**: the working tree with a mount per file under review (the view of
  ``orch_review.scope.view``, forced whatever its size);
* **tree**: one tree of hard links made once, bound into every shell (``.farm``, forced);
* **copy**: the snapshot written out whole, no view;
* **chosen**: what orch-review picks by itself.

Target: chosen <= 1.2x the best of mounts and copy. Needs bubblewrap.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from bench.figures import Figure, write_figures
from bench.plan_bench import GIT_ENV, OUT

if TYPE_CHECKING:
    from orch_review.engine.shell.confinement import Limits

TARGET = 1.2


def build_repo(files: int, changed: int) -> Path:
    """``files`` tracked files in 20 packages, the last commit editing the first ``changed``."""
    repo = OUT / f"sandbox-repo-{files}-{changed}"
    if (repo / ".git").exists():
        return repo
    repo.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **GIT_ENV}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    paths = [f"pkg{n % 20:02d}/mod{n % 7}/file{n}.py" for n in range(files)]
    for n, path in enumerate(paths):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(f"def f{n}(x):\n    return x + {n}\n")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    for path in paths[:changed]:
        with (repo / path).open("a", encoding="utf-8") as stream:
            stream.write("# the change under review\n")
    git("commit", "-q", "-am", "change")
    return repo


def one_way(repo: Path, way: str, shells: int, at_once: int) -> tuple[float, float, int]:
    """Seconds to prepare the content and seconds for the shells, and the mounts per shell."""
    from orch_review.engine.shell.bash import BashSession
    from orch_review.engine.shell.sandbox import resolve_sandbox
    from orch_review.scope import farm
    from orch_review.scope import git as gitops
    from orch_review.scope import snapshot as snap
    from orch_review.scope.resolve import ScopeRequest, resolve_scope

    forced = {
        "mounts": {"WORTH_LISTING": math.inf, "MAX_MOUNTS": 10**6},
        "tree": {"WORTH_LISTING": 0.0, "LINK_SECONDS": 0.0},
    }.get(way, {})
    saved = {name: getattr(farm if hasattr(farm, name) else snap, name) for name in forced}
    for name, value in forced.items():
        setattr(farm if hasattr(farm, name) else snap, name, value)
    try:
        started = time.perf_counter()
        opened = gitops.open_repo(repo)
        request = ScopeRequest("base", base="HEAD~1", head="HEAD")
        scope = resolve_scope(opened, request, env=dict(os.environ))
        with ExitStack() as stack:
            content = stack.enter_context(snap.snapshot(opened, scope, os.environ))
            view = None if way == "copy" else content.view
            sandbox = resolve_sandbox(
                "bubblewrap", content.root, search_path=os.environ["PATH"], view=view
            )
            content.use(mounted=view is not None)
            content.wait()
            prepared = time.perf_counter() - started
            mounts = len(view.steps) if view is not None else 1
            env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"}

            def shell(_: int) -> None:
                with BashSession(content.root, env=env, timeout=60, sandbox=sandbox) as bash:
                    done = bash.run("git status --porcelain | wc -l")
                    if done.output.strip() != "0":
                        raise SystemExit(f"{way}: the content is not the commit: {done.output}")

            started = time.perf_counter()
            with ThreadPoolExecutor(at_once) as pool:
                list(pool.map(shell, range(shells)))
            return prepared, time.perf_counter() - started, mounts
    finally:
        for name, value in saved.items():
            setattr(farm if hasattr(farm, name) else snap, name, value)


def startup(repo: Path, starts: int) -> dict[str, float]:
    """Milliseconds per shell, start to first command done, of each shell mode that runs:
    the median over ``starts`` rounds, each round starting one shell of every mode in turn,
    so that a machine whose speed drifts weighs on every mode alike. The key
    ``landlock/bubblewrap`` holds the median of the rounds' ratios."""
    from orch_review.engine.shell.bash import BashSession
    from orch_review.engine.shell.confinement import SandboxUnavailable
    from orch_review.engine.shell.landlock import LandlockLauncher
    from orch_review.engine.shell.sandbox import Sandbox, resolve_sandbox
    from orch_review.scope import git as gitops
    from orch_review.scope import snapshot as snap
    from orch_review.scope.resolve import ScopeRequest, resolve_scope

    opened = gitops.open_repo(repo)
    request = ScopeRequest("base", base="HEAD~1", head="HEAD")
    scope = resolve_scope(opened, request, env=dict(os.environ))
    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
    with snap.snapshot(opened, scope, os.environ) as content:
        content.use(mounted=False)
        content.wait()
        sandboxes: dict[str, Sandbox] = {}
        for mode in ("bubblewrap", "landlock", "off"):
            try:
                sandboxes[mode] = resolve_sandbox(
                    mode,  # type: ignore[arg-type]
                    content.root,
                    search_path=os.environ["PATH"],
                )
            except SandboxUnavailable as exc:
                print(f"{mode:>14}: cannot run here ({exc})")
        forked = sandboxes["landlock"].launcher if "landlock" in sandboxes else None
        if isinstance(forked, LandlockLauncher):
            alone = dataclasses.replace(forked, zygote=None)
            sandboxes["landlock-alone"] = Sandbox("landlock", alone)
        starts_ms: dict[str, list[float]] = {mode: [] for mode in sandboxes}
        stops_ms: dict[str, list[float]] = {mode: [] for mode in sandboxes}
        try:
            for _ in range(starts):
                for mode, sandbox in sandboxes.items():
                    began = time.perf_counter()
                    bash = BashSession(content.root, env=env, timeout=60, sandbox=sandbox)
                    if bash.run("true").exit_code != 0:
                        raise SystemExit(f"{mode}: a shell failed to run `true`")
                    ran = time.perf_counter()
                    bash.close()
                    starts_ms[mode].append((ran - began) * 1000)
                    stops_ms[mode].append((time.perf_counter() - ran) * 1000)
            if isinstance(forked, LandlockLauncher):
                first = statistics.median(
                    _first_shell(content.root, env, forked.limits) for _ in range(5)
                )
                print(f"landlock: {first:.1f} ms for a review's first shell, the zygote's start")
        finally:
            for sandbox in sandboxes.values():
                sandbox.close()
    costs = {mode: statistics.median(times) for mode, times in starts_ms.items()}
    for mode, cost in costs.items():
        print(
            f"{mode:>14}: {cost:5.1f} ms per shell to start and run `true` (median), "
            f"{statistics.median(stops_ms[mode]):5.1f} ms to stop and clean up"
        )
    if "landlock" in costs and "bubblewrap" in costs:
        pairs = zip(starts_ms["landlock"], starts_ms["bubblewrap"], strict=True)
        costs["landlock/bubblewrap"] = statistics.median(a / b for a, b in pairs)
        quartiles = statistics.quantiles(
            (a / b for a, b in zip(starts_ms["landlock"], starts_ms["bubblewrap"], strict=True)),
            n=4,
        )
        print(
            f"landlock / bubblewrap per round: quartiles {quartiles[0]:.2f}x, {quartiles[2]:.2f}x"
        )
    print("         tools: no shell to start")
    return costs


def _first_shell(root: Path, env: dict[str, str], limits: Limits) -> float:
    """Milliseconds to start and run ``true`` in the first shell of a fresh zygote."""
    from orch_review.engine.shell.bash import BashSession
    from orch_review.engine.shell.landlock import LandlockLauncher

    launcher = LandlockLauncher.find(limits)
    try:
        began = time.perf_counter()
        with BashSession(root, env=env, timeout=60, sandbox=launcher) as bash:
            bash.run("true")
            return (time.perf_counter() - began) * 1000
    finally:
        launcher.close()


def main(argv: list[str] | None = None) -> list[Figure]:
    """Time every way, print and return the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--changed", type=int, default=365)
    parser.add_argument("--shells", type=int, default=171)
    parser.add_argument("--at-once", type=int, default=10)
    parser.add_argument("--starts", type=int, default=60)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    repo = build_repo(args.files, args.changed)
    totals: dict[str, float] = {}
    figures: list[Figure] = []
    costs = startup(repo, args.starts)
    ratio = costs.pop("landlock/bubblewrap", None)
    for mode, cost in costs.items():
        figures.append(Figure("sandbox", f"start-up per shell, {mode}", f"{cost:.1f} ms"))
    if ratio is not None:
        print(f"landlock / bubblewrap start-up, paired rounds: {ratio:.2f}x (target <= 1.0x)")
        figures.append(
            Figure(
                "sandbox",
                "start-up per shell: landlock / bubblewrap",
                f"{ratio:.2f}x",
                "<= 1.0x",
                ratio <= 1.0,
            )
        )
    timer: Callable[[str], tuple[float, float, int]] = lambda way: one_way(  # noqa: E731
        repo, way, args.shells, args.at_once
    )
    if args.shells <= 0:  # start-up figures only
        write_figures(args.json, figures)
        return figures
    for way in ("mounts", "tree", "copy", "chosen"):
        prepared, started, mounts = timer(way)
        totals[way] = prepared + started
        print(
            f"{way:>6}: {mounts:4d} mounts/shell, prepare {prepared:6.2f}s, "
            f"{args.shells} shells {started:6.2f}s ({started / args.shells * 1000:.0f} ms each), "
            f"total {totals[way]:6.2f}s"
        )
        figures.append(
            Figure("sandbox", f"{args.changed}-file shard, {way}", f"{totals[way]:.2f}s")
        )
    best = min(totals["mounts"], totals["copy"])
    ratio = totals["chosen"] / best
    print(f"chosen / best of mounts and copy: {ratio:.2f}x (target <= {TARGET}x)")
    figures.append(
        Figure(
            "sandbox",
            f"{args.changed}-file shard: chosen / best of mounts and copy",
            f"{ratio:.2f}x",
            f"<= {TARGET}x",
            ratio <= TARGET,
        )
    )
    write_figures(args.json, figures)
    return figures


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
