"""How a review scales with the size of a change: agents, requests, wall time, estimated cost.

Usage: python -m bench.coverage_bench [--sizes 10 100 1000] [--huge] [--json FILE]

For each size N, a fresh repository whose branch adds N small files (one in a hundred holds a
planted defect) is reviewed by ``orch-review --base`` in a child process against the fake
Messages API served from this process, with no latency. Two scripted models:

* ``per-file``: the main agent asks for one subtask per changed file, once (200 run, the
  per-call cap; the rest are dropped) and never calls Workflow again: the engine's sweep
  covers the remainder in concerns grouped by directory;
* ``no-fanout``: the main agent calls no Workflow at all: the sweep covers everything.

Every run must end with every file covered and every planted defect reported; the bench says
so per row. ``--huge`` adds the 10,000-file change (a few minutes on a busy 2-core machine).
Cost is the engine's own estimate (its price table) for the fake API's token counts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from orch_review.wording import usd
from tests.fakes.messages_api import FakeMessagesAPI
from tests.files_model import MARKER, OneSubtaskPerFile

PER_DIRECTORY = 50
REVIEW = (sys.executable, "-m", "orch_review", "--no-journal", "--no-progress")


@dataclass(frozen=True)
class Row:
    """One review's figures."""

    model: str
    files: int
    agents: int
    concerns: int
    requests: int
    wall_seconds: float
    cost_usd: float
    covered: str
    bugs_found: str


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def make_change(root: Path, files: int) -> tuple[Path, str, list[str]]:
    """A repository with a branch adding ``files`` files; (repo, base sha, planted paths)."""
    repo = root / f"repo{files}"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# bench\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "checkout", "-q", "-b", "feature")
    planted = []
    for n in range(files):
        path = f"pkg/d{n // PER_DIRECTORY:03d}/f{n:05d}.py"
        bug = n % 100 == 99 or (files < 100 and n == files - 1)
        body = f"    return x / 0  # {MARKER}\n" if bug else "    return x + 1\n"
        full = repo / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(f"def f{n}(x: int) -> float:\n{body}")
        if bug:
            planted.append(path)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "change")
    return repo, base, planted


def review_once(repo: Path, base: str, planted: list[str], model: str, files: int) -> Row:
    """One ``orch-review --base`` run against a fresh fake API; its figures."""
    policy = OneSubtaskPerFile(base=base, workflow=model == "per-file")
    out = repo.parent / f"report-{model}-{files}.json"
    with FakeMessagesAPI(policy) as api:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
            "ANTHROPIC_BASE_URL": api.base_url,
            "ORCH_REVIEW_PROVE": "off",  # these figures are of reviews without proofs
            "ANTHROPIC_API_KEY": "bench",
            "ORCH_REVIEW_CRITIC": "false",
            "NO_COLOR": "1",
        }
        started = time.monotonic()
        done = subprocess.run(
            [*REVIEW, "--base", base, "--json", str(out)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        wall = time.monotonic() - started
        requests = len(api.message_requests)
        if api.policy_errors:
            raise SystemExit(f"the scripted model failed: {api.policy_errors[0]}")
    if done.returncode not in (0, 1):
        raise SystemExit(
            f"review of {files} files exited {done.returncode}:\n{done.stderr[-2000:]}"
        )
    data = json.loads(out.read_text())
    coverage = data["coverage"]["changed_files"]
    found = {f["path"] for f in data["findings"] if f["status"] == "confirmed"}
    return Row(
        model=model,
        files=files,
        agents=sum(data["usage"]["agents_started"].values()),
        concerns=len(data["concerns"]),
        requests=requests,
        wall_seconds=round(wall, 1),
        cost_usd=round(data["usage"]["total"]["cost_usd"], 6),
        covered=f"{coverage['covered']}/{coverage['total']}",
        bugs_found=f"{len(found & set(planted))}/{len(planted)}",
    )


def main(argv: list[str] | None = None) -> None:
    """Run the sizes asked for and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--huge", action="store_true", help="add the 10,000-file change")
    parser.add_argument("--models", nargs="+", default=["per-file", "no-fanout"])
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    sizes = [*args.sizes, *([10_000] if args.huge else [])]
    rows = []
    header = (
        f"{'model':<10} {'files':>6} {'concerns':>8} {'agents':>6} {'requests':>8} "
        f"{'wall s':>7} {'est. cost':>9} {'covered':>11} {'bugs':>7}"
    )
    print(header)
    with tempfile.TemporaryDirectory(prefix="orch-review-coverage-bench-") as tmp:
        for files in sizes:
            repo, base, planted = make_change(Path(tmp), files)
            for model in args.models:
                row = review_once(repo, base, planted, model, files)
                rows.append(row)
                print(
                    f"{row.model:<10} {row.files:>6} {row.concerns:>8} {row.agents:>6} "
                    f"{row.requests:>8} {row.wall_seconds:>7.1f} {usd(row.cost_usd):>9} "
                    f"{row.covered:>11} {row.bugs_found:>7}",
                    flush=True,
                )
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")


if __name__ == "__main__":
    main()
