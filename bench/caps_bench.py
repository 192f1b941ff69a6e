"""What a capped review buys: spend against the cap and the share that ended verified.

Usage: python -m bench.caps_bench [--files 40] [--fractions 0.33 0.5 0.8] [--slots 40]

A change of N small files (one in a hundred with a planted defect) is reviewed once without
a cap, then under ``--max-cost-usd`` set to each fraction of that review's cost, at
``--max-concurrent SLOTS``, against the fake Messages API (scripted model: one subtask per
file). Each row prints the cap, the spend (and over the cap), the overshoot in mean
requests, the files covered, the verified share (``docs/caps.md``), the files covered by a
verified review per dollar, and that over the uncapped review's (goal: at least 0.8 at a
third of its cost); each cap twice: planned by the sweep (the default under a cap below the
estimate's high end) and by the main agent (``capped-sweep = false``). Figures are printed,
not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.coverage_bench import REVIEW, make_change
from tests.fakes.messages_api import FakeMessagesAPI
from tests.files_model import OneSubtaskPerFile


def review(repo: Path, base: str, slots: int, *flags: str, main: bool = False) -> dict[str, Any]:
    """One ``orch-review --base`` run against a fresh fake API; its JSON report. ``main``:
    the main agent plans it under any cap (``capped-sweep = false``)."""
    out = repo.parent / "report.json"
    with FakeMessagesAPI(OneSubtaskPerFile(base=base)) as api:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
            "ANTHROPIC_BASE_URL": api.base_url,
            "ORCH_REVIEW_PROVE": "off",  # these figures are of reviews without proofs
            "ANTHROPIC_API_KEY": "bench",
            "ORCH_REVIEW_CRITIC": "false",
            "ORCH_REVIEW_CAPPED_SWEEP": "false" if main else "true",
            "NO_COLOR": "1",
        }
        done = subprocess.run(
            [*REVIEW, "--base", base, "--max-concurrent", str(slots), "--json", str(out), *flags],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
    if done.returncode not in (0, 1, 3):
        raise SystemExit(f"the review exited {done.returncode}:\n{done.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def _verified_files(report: dict[str, Any]) -> int:
    """Files covered by a review whose every finding has a verdict."""
    files = report["coverage"]["files"]
    return sum(1 for f in files if f["status"] == "covered")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.33, 0.5, 0.8])
    parser.add_argument("--slots", type=int, default=40)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as root:
        repo, base, _ = make_change(Path(root), args.files)
        full = review(repo, base, args.slots)
        total = full["usage"]["total"]
        mean = total["cost_usd"] / total["requests"]
        per_dollar = _verified_files(full) / total["cost_usd"]
        print(
            f"uncapped: ${total['cost_usd']:.4f} in {total['requests']} requests, "
            f"{per_dollar:.0f} verified files per dollar"
        )
        print(
            f"{'cap':>9} {'spent':>9} {'/cap':>5} {'over (requests)':>16} {'covered':>9} "
            f"{'verified':>9} {'files/$':>8} {'/uncapped':>9} planned by"
        )
        rows = [(f, main) for f in args.fractions for main in (False, True)]
        for fraction, main in rows:
            cap = round(total["cost_usd"] * fraction, 4)
            data = review(repo, base, args.slots, "--max-cost-usd", str(cap), main=main)
            spent = data["usage"]["total"]["cost_usd"]
            files = data["coverage"]["changed_files"]
            share = data["usage"]["verified_share"]
            over = max(0.0, spent - cap) / mean
            shown = "-" if share is None else f"{share:.0%}"
            bought = _verified_files(data) / spent if spent else 0.0
            print(
                f"${cap:>8.4f} ${spent:>8.4f} {spent / cap:>5.2f} {over:>16.1f} "
                f"{files['covered']:>4}/{files['total']:<4} {shown:>9} {bought:>8.0f} "
                f"{bought / per_dollar:>9.2f} {'main agent' if main else 'sweep'}",
                flush=True,
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
