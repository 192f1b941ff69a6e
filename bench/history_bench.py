"""The cost estimate against real history: ranges of public repositories, reviewed on the fake API.

Usage: python -m bench.history_bench [--mirrors DIR] [--pick] [--only NAME...] [--json FILE]

The repositories (psf/requests, pallets/flask, expressjs/express, BurntSushi/ripgrep,
python/mypy, ansible/ansible, tldr-pages/tldr) are read from local mirrors
(``DIR/<owner>+<name>/repo``, a git directory such as ``git clone --mirror`` makes; default
``bench/out/mirrors``) and never copied into this repository; without them the bench says
so and stops. The ranges it reviews are
in :data:`RANGES_FILE` (``--pick`` chooses them again from each mirror's first-parent
history: the latest commit that changes 2 files, and the shortest ``HEAD~k..HEAD`` that
changes about 50 and about 1,000 files). For each range, ``plan --json`` gives the estimate,
then the review runs against the fake Messages API with the strategies a model may take
(:class:`bench.estimate_bench.ReadingModel`): one subtask per file, packed (``per-file``) and
not (``unpacked``: ``pack-subtasks = false``, for the estimate too), and everything left to
the sweep (``sweep``). Printed per review: the
estimate, the actual cost, actual over the geometric midpoint, and whether it is at most the
high end; then the share at most the high end (goal: 90%) and the worst factor off the
midpoint (goal: within 2x). The figures are written to :data:`FIGURES_FILE`. Proofs are
off (``bench/proof_bench.py`` measures what they add).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.coverage_bench import REVIEW
from bench.estimate_bench import EFFORT, PLAN, ReadingModel
from bench.figures import Figure, write_figures
from orch_review.wording import usd
from tests.fakes.messages_api import FakeMessagesAPI

REPOSITORIES = (
    "psf/requests",
    "pallets/flask",
    "expressjs/express",
    "BurntSushi/ripgrep",
    "python/mypy",
    "ansible/ansible",
    "tldr-pages/tldr",
)
SIZES = (2, 50, 1000)
HERE = Path(__file__).resolve().parent
RANGES_FILE = HERE / "history_ranges.json"
FIGURES_FILE = HERE / "history_figures.json"
# The strategies reviewed per range size: packing matters only with more files than slots.
STRATEGIES = {2: ("per-file", "sweep"), 50: ("per-file", "unpacked", "sweep")}
LARGE_STRATEGIES = ("per-file", "sweep")
HIGH_GOAL = 0.9
MID_GOAL = 2.0


@dataclass(frozen=True)
class Range:
    repository: str
    base: str
    head: str
    files: int


@dataclass(frozen=True)
class Result:
    repository: str
    files: int
    strategy: str
    low_usd: float
    high_usd: float
    actual_usd: float


def _git(git_dir: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    )
    return done.stdout


def mirror(root: Path, repository: str) -> Path:
    return root / repository.replace("/", "+") / "repo"


def _changed(git_dir: Path, base: str, head: str) -> int:
    return len(_git(git_dir, "diff", "--name-only", "--no-renames", base, head).splitlines())


def pick(git_dir: Path, repository: str) -> list[Range]:
    """The ranges of one repository: 2 files, about 50, about 1,000 (when it has them)."""
    commits = _git(git_dir, "rev-list", "--first-parent", "--max-count=3000", "HEAD").split()
    head = commits[0]
    ranges = []
    for commit, parent in itertools.pairwise(commits):
        if _changed(git_dir, parent, commit) == 2:
            ranges.append(Range(repository, parent, commit, 2))
            break
    for target in SIZES[1:]:
        low, high = 1, len(commits) - 1
        if _changed(git_dir, commits[high], head) < target:
            continue
        while low < high:  # the shortest HEAD~k..HEAD changing at least ``target`` files
            middle = (low + high) // 2
            if _changed(git_dir, commits[middle], head) >= target:
                high = middle
            else:
                low = middle + 1
        files = _changed(git_dir, commits[low], head)
        if files <= 2 * target:
            ranges.append(Range(repository, commits[low], head, files))
    return ranges


def _env(base_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCH_"))}
    # Proofs are off on both sides (bench/proof_bench.py measures them): the scripted model
    # writes no tests, and the estimate then has no provers' role.
    env.update(NO_COLOR="1", ORCH_REVIEW_PROVE="off", **EFFORT)
    if base_url is not None:
        env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="bench")
    return env


def _settings(strategy: str) -> dict[str, str]:
    return {"ORCH_REVIEW_PACK_SUBTASKS": "false"} if strategy == "unpacked" else {}


def estimate(repo: Path, span: Range, strategy: str) -> dict[str, Any]:
    """``plan --json``'s estimate for ``span`` with the settings of ``strategy``."""
    done = subprocess.run(
        [*PLAN, "--base", span.base, "--head", span.head, "--json"],
        cwd=repo,
        env={**_env(), **_settings(strategy)},
        capture_output=True,
        text=True,
        check=True,
    )
    cost: dict[str, Any] = json.loads(done.stdout)["cost"]
    return cost


def review(repo: Path, span: Range, strategy: str) -> float:
    """The actual cost of one review of ``span`` with ``strategy``."""
    out = repo.parent / f"report-{strategy}.json"
    policy = ReadingModel(base=span.base, workflow=strategy != "sweep")
    env = _settings(strategy)
    with FakeMessagesAPI(policy) as api:
        done = subprocess.run(
            [*REVIEW, "--base", span.base, "--head", span.head, "--json", str(out)],
            cwd=repo,
            env={**_env(api.base_url), **env},
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if api.policy_errors:
            raise SystemExit(f"the scripted model failed: {api.policy_errors[0]}")
    if done.returncode not in (0, 1, 3):
        raise SystemExit(f"review exited {done.returncode}:\n{done.stderr[-2000:]}")
    return float(json.loads(out.read_text())["usage"]["total"]["cost_usd"])


def main(argv: list[str] | None = None) -> list[Figure]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=HERE / "out" / "mirrors")
    parser.add_argument("--pick", action="store_true", help="choose the ranges again")
    parser.add_argument("--only", nargs="+", help="repositories to review (owner/name)")
    parser.add_argument("--json", type=Path, help="write the figures here for run_all")
    args = parser.parse_args(argv)
    present = [r for r in REPOSITORIES if mirror(args.mirrors, r).is_dir()]
    if not present:
        print(f"skipped: no repository mirrors under {args.mirrors} (this bench needs them)")
        return []
    if args.pick:
        spans = [s for r in present for s in pick(mirror(args.mirrors, r), r)]
        RANGES_FILE.write_text(json.dumps([asdict(s) for s in spans], indent=1) + "\n")
    spans = [Range(**s) for s in json.loads(RANGES_FILE.read_text())]
    spans = [s for s in spans if s.repository in present]
    if args.only:
        spans = [s for s in spans if s.repository in args.only]
    results: list[Result] = []
    print("| range | files | strategy | estimate | actual | actual / midpoint | <= high |")
    print("|---|---:|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="orch-review-history-bench-") as tmp:
        for span in spans:
            repo = Path(tmp) / span.repository.replace("/", "+") / "repo"
            if not repo.exists():
                source = mirror(args.mirrors, span.repository)
                subprocess.run(
                    ["git", "clone", "-q", "--shared", "--no-checkout", str(source), str(repo)],
                    check=True,
                )
            subprocess.run(["git", "checkout", "-q", "--detach", span.head], cwd=repo, check=True)
            size = min(SIZES, key=lambda s: abs(math.log(max(span.files, 1) / s)))
            for strategy in STRATEGIES.get(size, LARGE_STRATEGIES):
                cost = estimate(repo, span, strategy)
                low, high = cost["low_usd"], cost["high_usd"]
                actual = review(repo, span, strategy)
                results.append(Result(span.repository, span.files, strategy, low, high, actual))
                ratio = actual / math.sqrt(low * high)
                print(
                    f"| {span.repository} {span.base[:8]}..{span.head[:8]} | {span.files} | "
                    f"{strategy} | {usd(low)}-{usd(high)} | {usd(actual)} | {ratio:.2f} | "
                    f"{'yes' if actual <= high else 'no'} |",
                    flush=True,
                )
    FIGURES_FILE.write_text(json.dumps([asdict(r) for r in results], indent=1) + "\n")
    return summarise(results, args.json)


def summarise(results: list[Result], out: Path | None) -> list[Figure]:
    """Print and return the share at most the high end and the worst factor off the middle."""
    if not results:
        return []
    held = sum(r.actual_usd <= r.high_usd for r in results)
    factors = [r.actual_usd / math.sqrt(r.low_usd * r.high_usd) for r in results]
    worst = max(max(factors), 1 / min(factors))
    share = held / len(results)
    print(
        f"\n{held}/{len(results)} reviews ({share:.0%}) at most the high end (goal "
        f"{HIGH_GOAL:.0%}); worst factor off the midpoint {worst:.2f} (goal within {MID_GOAL:g}x)"
    )
    figures = [
        Figure(
            "estimate",
            f"real-history reviews at most the estimate's high end ({len(results)} reviews)",
            f"{share:.0%}",
            f">= {HIGH_GOAL:.0%}",
            share >= HIGH_GOAL,
        ),
        Figure(
            "estimate",
            "real-history reviews, worst factor off the estimate's midpoint",
            f"{worst:.2f}x",
            f"within {MID_GOAL:g}x",
            worst <= MID_GOAL,
        ),
    ]
    write_figures(out, figures)
    return figures


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    main()
