"""What the completeness critic costs, and the fan-out against the reference schedule.

Usage: python -m bench.critic_bench [--concerns 40] [--critic-concerns 4] [--concurrency 10]
       [--seeds 0 1 2 3 4] [--json FILE]

For each heavy-tailed latency seed (:mod:`bench.workload`: a request's latency depends on its
role, the concern its task names and its turn, never on its bytes, so every run meets the
same slow requests), four real reviews of the same 40-module repository run in child
processes against the fake Messages API, one after the other:

* **critic**: the engine as shipped with the completeness critic on (the default for
  ``--all``); the critic proposes ``--critic-concerns`` cross-module concerns;
* **no critic**: the same with ``--no-critic``;
* **no hedge**: the same with ``hedge = false``: each request sent once;
* **previous policy**: no critic, no hedge, the engine's previous scheduling (a slot per
  agent, verifiers first);
* **reference**: no critic, the reference's schedule (every subagent, then every verifier)
  and its prompts: a subagent is given its subtask only, so it spends a turn reading its
  file, where ours are shown it (``bench.workload``).

The first wave's latencies are the same in all of them, request for request (a hedge, a
second copy of a request, meets a latency of its own: :mod:`bench.workload`). Ratios are of
wall times summed over the seeds. Zero-overhead figures come from the event simulation of
each policy (:func:`bench.workload.engine_schedule`), here and over 1000 seeds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.fanout_bench import FakeServerTuning, Run, run_review
from bench.figures import Figure, write_figures
from bench.workload import (
    CRITIC_INDEX,
    CRITIC_TURNS,
    MAIN_TURNS,
    Chains,
    RequestId,
    engine_schedule,
    fan_out_ids,
    fan_out_requests,
    heavy_latency,
    hedged_schedule,
    make_repo,
    make_script,
)
from tests.fakes.messages_api import FakeMessagesAPI

CRITIC_RATIO_TARGET = 1.15
REFERENCE_RATIO_TARGET = 0.62
SIMULATED_SEEDS = 1000
KINDS = ("critic", "no critic", "no hedge", "previous policy", "reference")
SCHEDULES = {
    "critic": "engine",
    "no critic": "engine",
    "no hedge": "engine",
    "previous policy": "agents",
}
HEDGED = {"critic", "no critic"}


def critic_lead(run: Run) -> float:
    """Seconds between the critic's first request and the first wave's last subagent
    request (positive: the critic started while the first wave was still being sent)."""
    received = [r.received_at for r in run.requests]
    critic = min(t for t, i in zip(received, run.rids, strict=True) if i[0] == "critic")
    last_sub = max(
        t
        for t, i in zip(received, run.rids, strict=True)
        if i[0] == "subagent" and i[1] < CRITIC_INDEX
    )
    return last_sub - critic


def simulate(concerns: int, critic_concerns: int, workers: int, seeds: int) -> dict[str, float]:
    """Means over many seeds of the zero-overhead makespans, as ratios."""
    ratios: dict[str, list[float]] = {}
    for seed in range(seeds):
        latency = heavy_latency(concerns, seed, critic_concerns=critic_concerns)
        rids: list[RequestId] = [("main", -1, t) for t in range(MAIN_TURNS)]
        chains = Chains.from_requests(rids + fan_out_ids(concerns), latency)
        ours = Chains.from_requests(rids + fan_out_ids(concerns, shown=True), latency)
        main = chains.main_before + chains.main_after
        reference = chains.barrier_schedule(workers)
        alone, copies = hedged_schedule(latency, concerns, workers)
        alone += main
        unhedged = main + engine_schedule(latency, concerns, workers)
        critic = main + engine_schedule(
            latency, concerns, workers, critic_concerns=critic_concerns, hedge=True
        )
        for name, value in (
            ("critic / no critic", critic / alone),
            ("no critic / reference", alone / reference),
            ("no hedge / reference", unhedged / reference),
            (
                "requests / reference's",
                (MAIN_TURNS + copies) / (MAIN_TURNS + fan_out_requests(concerns, shown=False)),
            ),
            ("previous / reference", ours.pipelined_schedule(workers) / reference),
            ("bound / reference", chains.lower_bound(workers) / reference),
            ("bound on ours / reference", ours.lower_bound(workers) / reference),
        ):
            ratios.setdefault(name, []).append(value)
    return {name: statistics.fmean(values) for name, values in ratios.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description="The critic's cost and the fan-out's speed.")
    parser.add_argument("--concerns", type=int, default=40)
    parser.add_argument("--critic-concerns", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--json", type=Path, help="write the figures here for run_all")
    args = parser.parse_args()
    concerns: int = args.concerns
    proposed: int = args.critic_concerns
    workers: int = args.concurrency
    started = time.perf_counter()
    load_before = os.getloadavg()
    tuning = FakeServerTuning()
    runs: dict[int, dict[str, Run]] = {}

    with tempfile.TemporaryDirectory(prefix="orch-review-bench-") as tmp:
        folder = Path(tmp)
        repo = make_repo(folder / "repo", concerns, os.environ)
        with FakeMessagesAPI(make_script(concerns, proposed)) as api:
            for seed in args.seeds:
                latency = heavy_latency(concerns, seed, critic_concerns=proposed)
                runs[seed] = {}
                for kind in KINDS:
                    runs[seed][kind] = run_review(
                        api,
                        tuning,
                        repo,
                        latency,
                        SCHEDULES.get(kind, "barrier"),
                        workers,
                        folder / f"journal-{seed}-{kind.replace(' ', '-')}.sqlite3",
                        critic=kind == "critic",
                        hedge=kind in HEDGED,
                    )
    load_after = os.getloadavg()

    expected = {kind: MAIN_TURNS + fan_out_requests(concerns, shown=True) for kind in KINDS}
    expected["reference"] = MAIN_TURNS + fan_out_requests(concerns, shown=False)
    expected["critic"] += CRITIC_TURNS + fan_out_requests(proposed, shown=True)
    for seed, by_kind in runs.items():
        for kind, run in by_kind.items():
            if len(run.logical) != expected[kind]:
                raise RuntimeError(
                    f"seed {seed}, {kind}: {len(run.logical)} logical requests, expected "
                    f"{expected[kind]}"
                )
        if len(by_kind["no critic"].requests) > len(by_kind["reference"].requests):
            raise RuntimeError(f"seed {seed}: more requests than the reference with the hedges")

    print(
        f"# The critic and the schedule: {concerns} concerns, concurrency {workers}, "
        f"heavy-tailed latency, the critic proposes {proposed}\n"
    )
    print(
        "| seed | critic s | no critic s | no hedge s | previous policy s | reference s "
        "| critic / no critic | no critic / reference | no hedge / reference "
        "| requests: no critic (hedges sent), reference "
        "| zero-overhead: critic, no critic, no hedge, previous, reference s "
        "| critic's first request before the first wave's last subagent request |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|")
    for seed, by_kind in runs.items():
        walls = [by_kind[k].wall for k in KINDS]
        latency = by_kind["critic"].latency
        chains = by_kind["no critic"].chains
        main = chains.main_before + chains.main_after
        ideal = [
            main
            + engine_schedule(latency, concerns, workers, critic_concerns=proposed, hedge=True),
            main + engine_schedule(latency, concerns, workers, hedge=True),
            main + engine_schedule(latency, concerns, workers),
            chains.pipelined_schedule(workers),
            by_kind["reference"].chains.barrier_schedule(workers),
        ]
        ours = by_kind["no critic"]
        hedges = len(ours.requests) - len(ours.logical)
        print(
            f"| {seed} | "
            + " | ".join(f"{w:.2f}" for w in walls)
            + f" | {walls[0] / walls[1]:.2f} | {walls[1] / walls[4]:.2f} "
            + f"| {walls[2] / walls[4]:.2f} "
            + f"| {len(ours.requests)} ({hedges}), {len(by_kind['reference'].requests)} | "
            + ", ".join(f"{i:.2f}" for i in ideal)
            + f" | {critic_lead(by_kind['critic']):.2f} s |"
        )
    print(f"\nload average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min)\n")

    total = {kind: sum(r[kind].wall for r in runs.values()) for kind in KINDS}
    seeds = list(runs)
    figures: list[Figure] = []

    def per_seed(top: str, bottom: str) -> str:
        return ", ".join(f"{r[top].wall / r[bottom].wall:.2f}" for r in runs.values())

    critic_ratio = total["critic"] / total["no critic"]
    figures.append(
        Figure(
            "critic",
            f"heavy-tailed, {concerns} concerns: wall, critic on / no critic (sum over seeds "
            f"{seeds}; per seed {per_seed('critic', 'no critic')}); the critic adds {proposed} "
            "concerns",
            f"{total['critic']:.2f} s / {total['no critic']:.2f} s = {critic_ratio:.2f}",
            f"<= {CRITIC_RATIO_TARGET}",
            critic_ratio <= CRITIC_RATIO_TARGET,
        )
    )
    reference_ratio = total["no critic"] / total["reference"]
    figures.append(
        Figure(
            "critic",
            f"heavy-tailed, {concerns} concerns: wall, no critic / reference schedule (sum; per "
            f"seed {per_seed('no critic', 'reference')})",
            f"{total['no critic']:.2f} s / {total['reference']:.2f} s = {reference_ratio:.2f}",
            f"<= {REFERENCE_RATIO_TARGET}",
            reference_ratio <= REFERENCE_RATIO_TARGET,
        )
    )
    requests = {
        kind: sum(len(r[kind].requests) for r in runs.values()) / len(runs) for kind in KINDS
    }
    figures.append(
        Figure(
            "critic",
            "requests per review (means over the seeds): no critic, with its hedges; no "
            "hedge; reference",
            f"{requests['no critic']:.1f}; {requests['no hedge']:.1f}; {requests['reference']:.1f}",
            "no more than the reference",
            requests["no critic"] <= requests["reference"],
        )
    )
    figures.append(
        Figure(
            "critic",
            "heavy-tailed: wall, no hedge / reference "
            f"(sum; per seed {per_seed('no hedge', 'reference')})",
            f"{total['no hedge'] / total['reference']:.2f}",
        )
    )
    figures.append(
        Figure(
            "critic",
            "heavy-tailed: wall, previous policy (a slot per agent, verifiers first) / reference "
            f"(sum; per seed {per_seed('previous policy', 'reference')})",
            f"{total['previous policy'] / total['reference']:.2f}",
        )
    )
    leads = [critic_lead(r["critic"]) for r in runs.values()]
    figures.append(
        Figure(
            "critic",
            "the critic's first request, seconds before the first wave's last subagent request",
            ", ".join(f"{lead:.2f}" for lead in leads),
            "> 0 (overlapped)",
            all(lead > 0 for lead in leads),
        )
    )
    sim = simulate(concerns, proposed, workers, SIMULATED_SEEDS)
    figures.append(
        Figure(
            "critic",
            f"simulated over {SIMULATED_SEEDS} heavy-tailed seeds with zero overhead (means): "
            "critic / no critic; no critic / reference; no hedge / reference; requests / "
            "reference's; previous policy / reference; lower bound (an oracle that knows "
            "every latency, without hedges) / reference, on the reference's chains and on "
            "ours (whose subagents are shown their files)",
            "; ".join(f"{value:.2f}" for value in sim.values()),
        )
    )
    for f in figures:
        print(f"- {f.figure}: **{f.value}**" + (f" (target {f.target})" if f.target else ""))
    print(f"\nbench wall time {time.perf_counter() - started:.1f} s")
    write_figures(args.json, figures)


if __name__ == "__main__":
    main()
