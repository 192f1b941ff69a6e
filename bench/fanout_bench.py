"""Fan-out wall time against the fake Messages API: our engine vs the reference schedule.

Usage: python -m bench.fanout_bench [--concerns 40] [--concurrency 10] [--seeds 0 1 2]
       [--memory-concerns 200] [--sandbox MODE] [--json FILE] [--requests-out FILE]

Each run is a real review (``orch_review.engine.review.review_scope``) in a child process
against a fake
Messages API served from this process with per-request latency; see :mod:`bench.workload` for
what "the same work" means and how latencies are assigned. For every latency distribution
the same workload runs twice:

* **ours**: the engine as shipped (requests in flight capped, each freed slot going to the
  request with the longest chain of work behind it; a verifier is queued the moment its
  subagent reports);
* **baseline**: the same engine with the reference's schedule, every subagent first and every
  verifier after the last subagent finished, on the same number of workers
  (:class:`bench.review_child.BarrierPool`). Same client, fake API, journal and request count.

Critical-path figures, computed from the latencies the requests were actually given:

* **lower bound** = main-agent requests + max(longest subagent->verifier chain, total
  fan-out latency / concurrency). No schedule can beat it, not even one that knew every
  latency in advance; it is not always reachable.
* **zero-overhead schedule** = the makespan our scheduling policy would have with no engine
  overhead at all (:func:`bench.workload.engine_schedule`, an event simulation of the same
  queue discipline), i.e. the ideal for this policy, which cannot know latencies before a
  request returns.

Efficiency = bound / measured wall time. The last run reviews ``--memory-concerns`` concerns
and reports the child's peak RSS (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.figures import Figure, write_figures
from bench.workload import (
    MAIN_TURNS,
    Chains,
    LatencyModel,
    RequestId,
    engine_schedule,
    fan_out_ids,
    fan_out_requests,
    fixed_latency,
    heavy_latency,
    longest_chain_first,
    make_repo,
    make_script,
    request_id,
)
from tests.fakes.http_server import Exchange
from tests.fakes.messages_api import FakeMessagesAPI, RecordedRequest

ROOT = Path(__file__).resolve().parent.parent
HEAVY_RATIO_TARGET = 0.75
EFFICIENCY_TARGET = 0.9
RSS_TARGET_MB = 300
SIMULATED_SEEDS = 1000


@dataclass
class Run:
    """One review: what the child measured and what the fake API saw."""

    schedule: str
    latency: LatencyModel
    child: dict[str, Any]
    requests: list[RecordedRequest]
    rids: list[RequestId]
    connections: int
    hedge: bool = False  # late requests were sent once more

    @property
    def wall(self) -> float:
        return float(self.child["wall_s"])

    @property
    def chains(self) -> Chains:
        return Chains.from_requests(self.logical, self.latency)

    @property
    def copies(self) -> int:
        """Second copies of requests sent (hedges)."""
        return len(self.requests) - len(self.logical)

    @property
    def logical(self) -> list[RequestId]:
        """The logical requests made, each once (a hedge is a second copy of one)."""
        return list(dict.fromkeys(self.rids))

    def ideal(self, concerns: int, workers: int) -> float:
        """The zero-overhead makespan of this run's schedule on its latencies."""
        chains = self.chains
        if self.schedule == "barrier":
            return chains.barrier_schedule(workers)
        agents = workers if self.schedule == "agents" else None
        fan_out = engine_schedule(self.latency, concerns, workers, agents=agents, hedge=self.hedge)
        return chains.main_before + fan_out + chains.main_after

    def verifiers_before_last_subagent(self) -> int:
        """Verifier requests sent before the last subagent's last reply (its request's arrival
        plus the latency the fake waited before answering): 0 means a barrier. The gate may
        send every subagent *request* before any verifier's; it does not wait for replies."""
        pairs = list(zip(self.requests, self.rids, strict=True))
        last_reply = max(
            r.received_at + self.latency.seconds(i) for r, i in pairs if i[0] == "subagent"
        )
        return sum(1 for r, i in pairs if i[0] == "verifier" and r.received_at < last_reply)


class FakeServerTuning:
    """Answer without Nagle's algorithm, as production HTTP servers do, and count connections.

    The fake writes each SSE event with its own send(); with Nagle on, the client's delayed
    ACK holds the second write back about 40 ms on every streamed response, a cost the real
    API does not have and that would swamp the engine's own overhead.
    """

    def __init__(self) -> None:
        self.connections = 0
        setup = Exchange.setup

        def counting_setup(exchange: Exchange) -> None:
            self.connections += 1  # one handler per accepted TCP connection
            setup(exchange)

        Exchange.disable_nagle_algorithm = True
        Exchange.setup = counting_setup  # type: ignore[method-assign,assignment]


def run_review(
    api: FakeMessagesAPI,
    tuning: FakeServerTuning,
    repo: Path,
    latency: LatencyModel,
    schedule: str,
    concurrency: int,
    journal: Path,
    sandbox: str | None = None,
    *,
    critic: bool = False,
    hedge: bool = True,
) -> Run:
    """One review in a child process; raises if it did not cover every concern. The
    reference's schedule never hedges."""
    api.reset()
    latency.reset()
    api.latency = latency
    tuning.connections = 0
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": api.base_url,
        "ORCH_REVIEW_PROVE": "off",  # these figures are of reviews without proofs
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    env = {k: v for k, v in env.items() if not k.startswith("ORCH_REVIEW_")}
    cmd = [
        sys.executable,
        "-m",
        "bench.review_child",
        str(repo),
        "--schedule",
        schedule,
        "--concurrency",
        str(concurrency),
        "--journal",
        str(journal),
        *(["--sandbox", sandbox] if sandbox else []),
        *(["--critic"] if critic else []),
        *(["--no-inline"] if schedule == "barrier" else []),  # the reference shows no file
        *(["--no-hedge"] if schedule == "barrier" or not hedge else []),
    ]
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"review child failed ({done.returncode}):\n{done.stderr}")
    child = json.loads(done.stdout.strip().splitlines()[-1])
    if api.policy_errors:
        raise RuntimeError(f"the scripted policy failed:\n{api.policy_errors[0]}")
    if child["uncovered"] or child["warnings"]:
        raise RuntimeError(f"incomplete review: {child['warnings']} {child['uncovered']}")
    requests = sorted(api.message_requests, key=lambda r: r.received_at)
    rids = [request_id(r.model_request()) for r in requests]
    hedged = hedge and schedule != "barrier"
    return Run(schedule, latency, child, requests, rids, tuning.connections, hedged)


def expected_requests(concerns: int, schedule: str) -> int:
    """Requests of one review: the reference's subagents read their file in a turn of their
    own; ours are shown it (``bench.workload``)."""
    return MAIN_TURNS + fan_out_requests(concerns, shown=schedule != "barrier")


def simulate_seeds(concerns: int, workers: int, seeds: int) -> dict[str, float]:
    """Zero-overhead schedules over many heavy-tailed seeds: what policy alone can give."""
    ours_over_base = []
    agents_over_base = []
    bound_over_base = []
    chain_first_over_base = []
    for seed in range(seeds):
        latency = heavy_latency(concerns, seed)
        rids: list[RequestId] = [("main", -1, t) for t in range(MAIN_TURNS)]
        chains = Chains.from_requests(rids + fan_out_ids(concerns), latency)
        ours = Chains.from_requests(rids + fan_out_ids(concerns, shown=True), latency)
        base = chains.barrier_schedule(workers)
        main = chains.main_before + chains.main_after
        ours_over_base.append((main + engine_schedule(latency, concerns, workers)) / base)
        agents_over_base.append(ours.pipelined_schedule(workers) / base)
        bound_over_base.append(ours.lower_bound(workers) / base)
        chain_first = main + longest_chain_first(latency, concerns, workers, shown=True)
        chain_first_over_base.append(chain_first / base)
    ours_over_base.sort()
    return {
        "ours_mean": statistics.fmean(ours_over_base),
        "ours_p10": ours_over_base[len(ours_over_base) // 10],
        "ours_p90": ours_over_base[len(ours_over_base) * 9 // 10],
        "bound_mean": statistics.fmean(bound_over_base),
        "share_at_target": sum(r <= HEAVY_RATIO_TARGET for r in ours_over_base) / seeds,
        "bound_share_above_target": sum(r > HEAVY_RATIO_TARGET for r in bound_over_base) / seeds,
        "chain_first_mean": statistics.fmean(chain_first_over_base),
        "agents_mean": statistics.fmean(agents_over_base),
    }


def save_requests(path: Path, run: Run, concerns: int) -> None:
    """The recorded requests of one run, for the token bench."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "concerns": concerns,
        "model": run.child["model"],
        "by_role": run.child["by_role"],
        "total": run.child["total"],
        "latency": run.latency.describe(),
        "requests": [r.body for r in run.requests],
    }
    path.write_text(json.dumps(data), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description="Fan-out wall time against the fake API.")
    parser.add_argument("--concerns", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--memory-concerns", type=int, default=200)
    parser.add_argument(
        "--sandbox", help="the config's `sandbox` setting for every review (default: default)"
    )
    parser.add_argument("--json", type=Path, help="write the figures here for run_all")
    parser.add_argument("--requests-out", type=Path, help="save one run's requests (token bench)")
    args = parser.parse_args()
    concerns: int = args.concerns
    workers: int = args.concurrency
    started = time.perf_counter()
    figures: list[Figure] = []
    tuning = FakeServerTuning()

    with tempfile.TemporaryDirectory(prefix="orch-review-bench-") as tmp:
        folder = Path(tmp)
        repo = make_repo(folder / "repo", concerns, os.environ)
        journals = iter(range(1_000_000))

        def journal() -> Path:
            return folder / f"journal-{next(journals)}.sqlite3"

        with FakeMessagesAPI(make_script(concerns)) as api:
            distributions = [fixed_latency(concerns)]
            distributions += [heavy_latency(concerns, seed) for seed in args.seeds]
            pairs: list[tuple[Run, Run]] = []
            for latency in distributions:
                ours = run_review(
                    api, tuning, repo, latency, "engine", workers, journal(), args.sandbox
                )
                base = run_review(
                    api, tuning, repo, latency, "barrier", workers, journal(), args.sandbox
                )
                pairs.append((ours, base))
                if args.requests_out is not None and len(pairs) == 2:  # first heavy-tailed
                    save_requests(args.requests_out, ours, concerns)

            memory_repo = make_repo(folder / "repo-mem", args.memory_concerns, os.environ)
            api.policy = make_script(args.memory_concerns)
            memory_latency = fixed_latency(args.memory_concerns)
            memory = run_review(
                api, tuning, memory_repo, memory_latency, "engine", workers, journal()
            )

    sandbox = args.sandbox or "the default"
    print(f"# Fan-out: {concerns} concerns, concurrency {workers}, sandbox setting {sandbox}\n")
    print(
        "Each run is a real review in a child process against the fake Messages API; wall "
        "time is the review call itself (interpreter start and imports excluded, see the "
        "startup bench).\n"
    )
    print(
        "| latency | schedule | wall s | requests | verifier requests before the last "
        "subagent reply | lower bound s | zero-overhead schedule s | efficiency vs "
        "bound | efficiency vs schedule | TCP connections | review CPU s (+ shells) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for ours, base in pairs:
        for run in (ours, base):
            chains = run.chains
            bound = chains.lower_bound(workers)
            ideal = run.ideal(concerns, workers)
            print(
                f"| {run.latency.name} | {'ours' if run is ours else 'baseline'} "
                f"| {run.wall:.2f} | {len(run.requests)} | {run.verifiers_before_last_subagent()} "
                f"| {bound:.2f} | {ideal:.2f} | {bound / run.wall:.3f} | {ideal / run.wall:.3f} "
                f"| {run.connections} | {run.child['cpu_s']:.2f} "
                f"(+ {run.child['shell_cpu_s']:.2f}) |"
            )
    print()
    for latency in distributions:
        print(f"- {latency.describe()}")
    print()

    for ours, base in pairs:
        counts = (len(ours.logical), len(base.requests))
        expected = (expected_requests(concerns, "engine"), expected_requests(concerns, "barrier"))
        if counts != expected:
            raise RuntimeError(f"requests (ours, baseline): {counts}, expected {expected}")
        if len(ours.requests) > len(base.requests):
            raise RuntimeError(f"ours sent {len(ours.requests)} requests with their hedges")
    fixed_ours, fixed_base = pairs[0]
    heavy = pairs[1:]
    figures.append(
        Figure(
            "fan-out",
            f"fixed 200 ms: wall, ours / baseline ({concerns} concerns, concurrency {workers})",
            f"{fixed_ours.wall:.2f} s / {fixed_base.wall:.2f} s = "
            f"{fixed_ours.wall / fixed_base.wall:.2f}",
        )
    )
    fixed_eff = fixed_ours.chains.lower_bound(workers) / fixed_ours.wall
    figures.append(
        Figure(
            "fan-out",
            "fixed 200 ms: efficiency (lower bound / wall)",
            f"{fixed_eff:.3f}",
            f">= {EFFICIENCY_TARGET}",
            fixed_eff >= EFFICIENCY_TARGET,
        )
    )
    ours_total = sum(o.wall for o, _ in heavy)
    base_total = sum(b.wall for _, b in heavy)
    ratio = ours_total / base_total
    per_seed = ", ".join(f"{o.wall / b.wall:.2f}" for o, b in heavy)
    figures.append(
        Figure(
            "fan-out",
            f"heavy-tailed: wall, ours / baseline (sum over seeds {args.seeds}; per seed "
            f"{per_seed}); requests, ours and baseline: {expected} (ours are shown their files)",
            f"{ours_total:.2f} s / {base_total:.2f} s = {ratio:.2f}",
            f"<= {HEAVY_RATIO_TARGET}",
            ratio <= HEAVY_RATIO_TARGET,
        )
    )
    ideal_ratio = sum(o.ideal(concerns, workers) for o, _ in heavy) / sum(
        b.ideal(concerns, workers) for _, b in heavy
    )
    bound_ratio = sum(o.chains.lower_bound(workers) for o, _ in heavy) / base_total
    figures.append(
        Figure(
            "fan-out",
            "heavy-tailed: same ratio with zero engine overhead (policy alone); lower bound / "
            "measured baseline (best any schedule could do)",
            f"{ideal_ratio:.2f}; {bound_ratio:.2f}",
        )
    )
    sim = simulate_seeds(concerns, workers, SIMULATED_SEEDS)
    figures.append(
        Figure(
            "fan-out",
            f"heavy-tailed, simulated over {SIMULATED_SEEDS} seeds with zero overhead: ours / "
            "baseline mean (p10-p90); lower bound / baseline mean, and the share of seeds where "
            f"even the lower bound is above {HEAVY_RATIO_TARGET}",
            f"{sim['ours_mean']:.2f} ({sim['ours_p10']:.2f}-{sim['ours_p90']:.2f}); "
            f"{sim['bound_mean']:.2f}, {sim['bound_share_above_target']:.0%}",
        )
    )
    figures.append(
        Figure(
            "fan-out",
            f"heavy-tailed, simulated over {SIMULATED_SEEDS} seeds with zero overhead, / baseline "
            "mean: longest remaining chain first, requests at once (the textbook policy; ours "
            "should equal it); a slot per agent, verifiers first (the previous policy)",
            f"{sim['chain_first_mean']:.2f}; {sim['agents_mean']:.2f}",
        )
    )
    heavy_bound_eff = sum(o.chains.lower_bound(workers) for o, _ in heavy) / ours_total
    heavy_sched_eff = sum(o.ideal(concerns, workers) for o, _ in heavy) / ours_total
    figures.append(
        Figure(
            "fan-out",
            "heavy-tailed: efficiency vs lower bound (sum over seeds)",
            f"{heavy_bound_eff:.3f}",
            f">= {EFFICIENCY_TARGET}",
            heavy_bound_eff >= EFFICIENCY_TARGET,
        )
    )
    figures.append(
        Figure(
            "fan-out",
            "heavy-tailed: efficiency vs zero-overhead schedule of the same policy",
            f"{heavy_sched_eff:.3f}",
            f">= {EFFICIENCY_TARGET}",
            heavy_sched_eff >= EFFICIENCY_TARGET,
        )
    )
    barrier_free = all(o.verifiers_before_last_subagent() > 0 for o, _ in heavy)
    figures.append(
        Figure(
            "fan-out",
            "verifier requests sent before the last subagent reply, ours, fixed latency then "
            "heavy-tailed (baseline: 0)",
            ", ".join(str(o.verifiers_before_last_subagent()) for o, _ in pairs),
            "> 0 with heavy-tailed latency (no barrier)",
            barrier_free,
        )
    )
    figures.append(
        Figure(
            "fan-out",
            "TCP connections opened, ours (one SDK client shared by all agents; a cancelled "
            "copy of a hedged request closes its connection), fixed latency then heavy-tailed",
            ", ".join(
                f"{o.connections} for {len(o.requests)} requests ({o.copies} copies)"
                for o, _ in pairs
            ),
            f"<= concurrency + 1 ({workers + 1}) + copies",
            all(o.connections <= workers + 1 + o.copies for o, _ in pairs),
        )
    )
    mem_bound = memory.chains.lower_bound(workers)
    figures.append(
        Figure(
            "fan-out",
            f"{args.memory_concerns} concerns, fixed 200 ms: wall (lower bound), requests",
            f"{memory.wall:.2f} s ({mem_bound:.2f} s), {len(memory.requests)}",
        )
    )
    rss = float(memory.child["maxrss_mb"])
    figures.append(
        Figure(
            "fan-out",
            f"{args.memory_concerns} concerns: peak RSS of the review process",
            f"{rss:.0f} MB",
            f"< {RSS_TARGET_MB} MB",
            rss < RSS_TARGET_MB,
        )
    )
    figures.append(
        Figure(
            "fan-out",
            f"{concerns} concerns: peak RSS of the review process",
            f"{float(fixed_ours.child['maxrss_mb']):.0f} MB",
        )
    )
    for f in figures:
        print(f"- {f.figure}: **{f.value}**" + (f" (target {f.target})" if f.target else ""))
    print(f"\nbench wall time {time.perf_counter() - started:.1f} s")
    write_figures(args.json, figures)


if __name__ == "__main__":
    main()
