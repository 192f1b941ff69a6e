"""What a capped review buys: spend against the cap and the share that ended verified.

Usage: python -m bench.caps_bench [--files 100] [--fractions 0.3 0.5 0.8] [--slots 40]

A change of N small files (one in a hundred with a planted defect) is reviewed once without
a cap, then under ``--max-cost-usd`` set to each fraction of that review's cost, at
``--max-concurrent SLOTS``, against the fake Messages API (scripted model: one subtask per
file). Each row prints the cap, the spend, the overshoot in mean requests, the files covered
and the verified share (``docs/caps.md``). Figures are printed, not asserted.
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


def review(repo: Path, base: str, slots: int, *flags: str) -> dict[str, Any]:
    """One ``orch-review --base`` run against a fresh fake API; its JSON report."""
    out = repo.parent / "report.json"
    with FakeMessagesAPI(OneSubtaskPerFile(base=base)) as api:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
            "ANTHROPIC_BASE_URL": api.base_url,
            "ORCH_REVIEW_PROVE": "off",  # these figures are of reviews without proofs
            "ANTHROPIC_API_KEY": "bench",
            "ORCH_REVIEW_CRITIC": "false",
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.3, 0.5, 0.8])
    parser.add_argument("--slots", type=int, default=40)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as root:
        repo, base, _ = make_change(Path(root), args.files)
        full = review(repo, base, args.slots)
        total = full["usage"]["total"]
        mean = total["cost_usd"] / total["requests"]
        print(f"uncapped: ${total['cost_usd']:.4f} in {total['requests']} requests")
        print(f"{'cap':>9} {'spent':>9} {'over (requests)':>16} {'covered':>9} {'verified':>9}")
        for fraction in args.fractions:
            cap = round(total["cost_usd"] * fraction, 4)
            data = review(repo, base, args.slots, "--max-cost-usd", str(cap))
            spent = data["usage"]["total"]["cost_usd"]
            files = data["coverage"]["changed_files"]
            share = data["usage"]["verified_share"]
            over = max(0.0, spent - cap) / mean
            shown = "-" if share is None else f"{share:.0%}"
            print(
                f"${cap:>8.4f} ${spent:>8.4f} {over:>16.1f} "
                f"{files['covered']:>4}/{files['total']:<4} {shown:>9}"
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
