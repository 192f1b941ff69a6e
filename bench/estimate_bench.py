"""The cost estimate (``plan``) against what the review then cost, on the coverage bench's changes.

Usage: python -m bench.estimate_bench [--sizes 10 100] [--lines 2 30] [--fit] [--json FILE]

For each change (``bench.coverage_bench.make_change``: N added files; with ``--lines`` above
2, each file holds that many changed lines), ``orch-review plan --json`` gives the estimate
and ``orch-review --base`` runs the review against the fake Messages API with two scripted
models: ``per-file`` (one subtask per file) and ``no-fanout`` (the sweep covers everything);
their subagents read the files their task does not show before grepping them. The ratio is
the actual cost over the estimate's geometric midpoint; goal: within a factor of 2 either
way, and inside the range. Both run at effort ``low``: the fake API does not think, and at
``low`` the estimate adds no thinking allowance (``THINKING`` in the estimate), which is a
documented allowance, not something a fake can measure.
``--fit`` prints, per role, the input and output tokens per agent and the share read from
the cache: the figures ``orch_review/cost.py`` CALIBRATION holds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.coverage_bench import REVIEW, make_change
from bench.figures import Figure, write_figures
from orch_review.wording import usd
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.files_model import MARKER, OneSubtaskPerFile
from tests.scripted import GREP_LINE, is_sweep, shown_files, subtask_text, sweep_files

PLAN = (sys.executable, "-m", "orch_review", "plan")
GOAL = 2.0
EFFORT = {"ORCH_REVIEW_EFFORT": "low"}


class ReadingModel(OneSubtaskPerFile):
    """:class:`OneSubtaskPerFile` whose subagents read (cat) the files their task does not
    show, then grep those, and report the marked lines of what they read and were shown;
    whose critic lists the files and finds nothing missing."""

    def __call__(self, request: ModelRequest) -> Reply:
        if request.has_tool("report_concerns"):
            if request.assistant_turns == 0:
                return Reply.tool_use("bash", {"command": "git ls-files"})
            return Reply.tool_use("report_concerns", {"concerns": []})
        return super().__call__(request)

    def _subagent(self, request: ModelRequest) -> Reply:
        task = request.first_user_text
        files = (
            sweep_files(task)
            if is_sweep(task)
            else [name for name in subtask_text(task).split("`")[1::2] if "." in name]
        )
        shown = shown_files(task)
        listed = " ".join(f for f in files if f not in shown)
        turn = request.assistant_turns
        if listed and turn == 0:
            return Reply.tool_use("bash", {"command": f"cat -- {listed} /dev/null"})
        if listed and turn == 1:
            command = f"grep -n {MARKER} -- {listed} /dev/null || true"
            return Reply.tool_use("bash", {"command": command})
        seen = "".join(
            f"{path}:{n}:{line}\n"
            for path, lines in shown.items()
            for n, line in enumerate(lines, 1)
            if MARKER in line
        )
        grepped = request.tool_result_texts()[-1] if listed else ""
        findings = [
            {
                "path": m.group("path"),
                "start_line": int(m.group("line")),
                "end_line": int(m.group("line")),
                "severity": "high",
                "category": "correctness",
                "claim": "a planted defect",
                "evidence": m.group(0),
            }
            for m in GREP_LINE.finditer(seen + grepped)
            if m.group("path")
        ]
        return Reply.tool_use("report_findings", {"summary": "read", "findings": findings})


def lengthen(repo: Path, lines: int) -> None:
    """Give every added file of the change ``lines`` changed lines (amending its commit)."""
    for path in sorted((repo / "pkg").rglob("*.py")):
        head, body = path.read_text().split("\n", 1)
        extra = "".join(f"    y{n} = x * {n}\n" for n in range(max(0, lines - 2)))
        path.write_text(f"{head}\n{extra}{body}")
    subprocess.run(["git", "commit", "-qa", "--amend", "--no-edit"], cwd=repo, check=True)


def _env(base_url: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
        "ANTHROPIC_BASE_URL": base_url,
        "ORCH_REVIEW_PROVE": "off",  # these figures are of reviews without proofs
        "ANTHROPIC_API_KEY": "bench",
        "NO_COLOR": "1",
        **EFFORT,
    }


def estimate(repo: Path, base: str) -> dict[str, Any]:
    """``plan --json``'s cost estimate."""
    done = subprocess.run(
        [*PLAN, "--base", base, "--json"],
        cwd=repo,
        env={**os.environ, **EFFORT},
        capture_output=True,
        text=True,
        check=True,
    )
    cost: dict[str, Any] = json.loads(done.stdout)["cost"]
    return cost


def review(repo: Path, base: str, model: str) -> dict[str, Any]:
    """The usage section of one review's JSON report."""
    out = repo.parent / f"report-{model}.json"
    policy = ReadingModel(base=base, workflow=model == "per-file")
    with FakeMessagesAPI(policy) as api:
        done = subprocess.run(
            [*REVIEW, "--base", base, "--json", str(out)],
            cwd=repo,
            env=_env(api.base_url),
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if api.policy_errors:
            raise SystemExit(f"the scripted model failed: {api.policy_errors[0]}")
    if done.returncode not in (0, 1):
        raise SystemExit(f"review exited {done.returncode}:\n{done.stderr[-2000:]}")
    usage: dict[str, Any] = json.loads(out.read_text())["usage"]
    return usage


def fit_line(files: int, lines: int, model: str, usage: dict[str, Any]) -> str:
    """Per role: agents, input and output tokens per agent, cache-read share."""
    parts = []
    for role, u in usage["by_role"].items():
        agents = usage["agents_started"].get(role, 0) or (1 if u["requests"] else 0)
        if not agents:
            continue
        read = u["input_tokens"] + u["cache_write_tokens"] + u["cache_read_tokens"]
        share = u["cache_read_tokens"] / read if read else 0.0
        parts.append(
            f"{role}: {agents} x (in {read / agents:,.0f}, out {u['output_tokens'] / agents:,.0f},"
            f" cache read {share:.0%})"
        )
    return f"  fit {files} files x {lines} lines, {model}: " + "; ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--lines", type=int, nargs="+", default=[2, 30])
    parser.add_argument("--fit", action="store_true", help="print the per-agent token figures")
    parser.add_argument("--json", type=Path, help="write the figures here for run_all")
    args = parser.parse_args(argv)
    print("| change | model | estimate | actual | actual / midpoint | in range |")
    print("|---|---|---:|---:|---:|---|")
    ratios: list[float] = []
    inside = 0
    with tempfile.TemporaryDirectory(prefix="orch-review-estimate-bench-") as tmp:
        for lines in args.lines:
            for files in args.sizes:
                root = Path(tmp) / f"lines{lines}"
                root.mkdir(exist_ok=True)
                repo, base, _ = make_change(root, files)
                if lines > 2:
                    lengthen(repo, lines)
                cost = estimate(repo, base)
                low, high = cost["low_usd"], cost["high_usd"]
                for model in ("per-file", "no-fanout"):
                    usage = review(repo, base, model)
                    actual = float(usage["total"]["cost_usd"])
                    ratio = actual / math.sqrt(low * high)
                    ratios.append(ratio)
                    within = low <= actual <= high
                    inside += within
                    print(
                        f"| {files} files x {lines} lines | {model} | {usd(low)}-{usd(high)} | "
                        f"{usd(actual)} | {ratio:.2f} | {'yes' if within else 'no'} |",
                        flush=True,
                    )
                    if args.fit:
                        print(fit_line(files, lines, model, usage), flush=True)
    worst = max(max(ratios), 1 / min(ratios))
    print(f"\nworst factor off the midpoint: {worst:.2f}; {inside}/{len(ratios)} inside the range")
    write_figures(
        args.json,
        [
            Figure(
                "estimate",
                "review cost against plan's estimate (geometric midpoint), worst factor over "
                f"{len(ratios)} reviews of the coverage bench's changes",
                f"{worst:.2f}x ({inside}/{len(ratios)} inside the range)",
                f"within {GOAL:g}x",
                worst <= GOAL,
            )
        ],
    )


if __name__ == "__main__":
    main()
