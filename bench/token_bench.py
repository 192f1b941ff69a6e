"""Prompt-cache use and cost per concern, from the requests the fan-out bench recorded.

Usage: python -m bench.token_bench [--requests bench/out/fanout-requests.json] [--json FILE]

Input: the request bodies of one fan-out review (``bench.fanout_bench --requests-out``), in
the order the fake API received them, and that review's usage ledger. Token counts are the
fake's simulation (ceil(characters / 4) of each block's canonical JSON), so shares and ratios
are meaningful, absolute counts only roughly.

Figures, per role, over every request after an agent's first (turn 2+):

* **cacheable share**: tokens up to and including the last ``cache_control`` block, over all
  input tokens. What the request layout allows the API to cache.
* **cache-read share**: what a prompt cache replayed over the same requests in the same order
  actually serves from cache (the fake's simulation: a breakpoint reads the longest prefix
  an earlier request wrote within 20 blocks before it). Also shown with the API's minimum
  cacheable prompt length (1,024 or 4,096 tokens depending on the model), which these small
  synthetic prompts do not always reach.

Cost per concern: the review's ledger (our requests, priced with the built-in price table)
against the same requests without any cache breakpoint, as the reference sends them.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.figures import Figure, write_figures
from orch_review.config.pricing import DEFAULT_PRICES, lookup_price
from orch_review.wording import usd
from tests.fakes.model_io import ModelRequest
from tests.fakes.wire import PromptCache, canonical_json, prompt_blocks

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REQUESTS = ROOT / "bench" / "out" / "fanout-requests.json"
SHARE_TARGET = 0.80
ROLES = ("main", "subagent", "verifier")
API_MINIMUMS = (1024, 4096)


def block_tokens(body: Mapping[str, Any]) -> tuple[int, int]:
    """(tokens up to the last cache breakpoint, all input tokens) of one request."""
    total = cacheable = 0
    for value, marked in prompt_blocks(body):
        total += math.ceil(len(canonical_json(value)) / 4)
        if marked:
            cacheable = total
    return cacheable, total


def replay(bodies: list[dict[str, Any]], min_tokens: int) -> list[dict[str, int]]:
    """Usage of each request against a fresh simulated prompt cache."""
    cache = PromptCache(min_tokens=min_tokens)
    return [cache.usage(body) for body in bodies]


def strip_markers(value: Any) -> Any:
    """``value`` without any ``cache_control`` key, at any depth."""
    if isinstance(value, dict):
        return {k: strip_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_markers(v) for v in value]
    return value


TOKEN_KINDS = ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")


def print_role_tokens(by_role: Mapping[str, Mapping[str, int]], concerns: int) -> None:
    """Tokens of each kind per role, over the whole review and per concern (no prices: the
    counts are the fake API's simulation; docs/what-a-review-costs.md turns real ones into
    dollars)."""
    print("\nTokens per role, from the review's usage ledger (whole review / per concern):\n")
    print("| role | requests | input | cache write | cache read | output |")
    print("|---|---:|---:|---:|---:|---:|")
    for role in (*ROLES, *sorted(set(by_role) - set(ROLES))):
        used = by_role.get(role)
        if not used or not used["requests"]:
            continue
        cells = "".join(f" {used[kind]:,} / {used[kind] / concerns:,.0f} |" for kind in TOKEN_KINDS)
        print(f"| {role} | {used['requests']} |{cells}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description="Prompt-cache use and cost per concern.")
    parser.add_argument("--requests", type=Path, default=DEFAULT_REQUESTS)
    parser.add_argument("--json", type=Path, help="write the figures here for run_all")
    args = parser.parse_args()
    if not args.requests.exists():
        parser.error(
            f"{args.requests} not found: run `python -m bench.fanout_bench "
            f"--requests-out {args.requests}` first"
        )
    data = json.loads(args.requests.read_text(encoding="utf-8"))
    bodies: list[dict[str, Any]] = data["requests"]
    concerns: int = data["concerns"]
    model: str = data["model"]
    price, _ = lookup_price(DEFAULT_PRICES, model)

    roles = []
    later = []
    for body in bodies:
        request = ModelRequest(body)
        roles.append(request.role)
        later.append(request.assistant_turns > 0)
    replays = {m: replay(bodies, m) for m in (0, *API_MINIMUMS)}

    print(f"# Tokens: {concerns} concerns, {len(bodies)} requests ({data['latency']})\n")
    print(
        f"Price table for {model} (USD per million tokens): input {price.input}, output "
        f"{price.output}, cache write {price.cache_write}, cache read {price.cache_read}.\n"
    )
    header = "| role | turn-2+ requests | mean input tokens | cacheable share | cache-read share |"
    header += "".join(f" cache-read share, min {m:,} tokens |" for m in API_MINIMUMS)
    print(header)
    print("|---|---:|---:|---:|---:|" + "---:|" * len(API_MINIMUMS))
    figures: list[Figure] = []
    for role in ROLES:
        picked = [
            i for i, (r, late) in enumerate(zip(roles, later, strict=True)) if r == role and late
        ]
        cacheable = sum(block_tokens(bodies[i])[0] for i in picked)
        total = sum(block_tokens(bodies[i])[1] for i in picked)

        def read_share(min_tokens: int, picked: list[int] = picked) -> float:
            usages = [replays[min_tokens][i] for i in picked]
            read = sum(u["cache_read_input_tokens"] for u in usages)
            billed = sum(
                u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
                for u in usages
            )
            return read / billed if billed else 0.0

        share = cacheable / total if total else 0.0
        minimums = "".join(f" {read_share(m):.1%} |" for m in API_MINIMUMS)
        mean = total / len(picked) if picked else 0
        print(
            f"| {role} | {len(picked)} | {mean:,.0f} | {share:.1%} | {read_share(0):.1%} "
            f"|{minimums}"
        )
        figures.append(
            Figure(
                "tokens",
                f"{role}: turn-2+ input tokens in the cacheable prefix (cache read share)",
                f"{share:.1%} ({read_share(0):.1%})",
                f">= {SHARE_TARGET:.0%}",
                share >= SHARE_TARGET,
            )
        )

    print_role_tokens(data["by_role"], concerns)

    ours = float(data["total"]["cost_usd"])
    output_tokens = int(data["total"]["output_tokens"])
    uncached_input = sum(block_tokens(strip_markers(b))[1] for b in bodies)
    reference = price.cost(uncached_input, output_tokens)
    print(
        f"\nCost per concern: ours {usd(ours / concerns)} (ledger of the run); the same requests "
        f"without cache breakpoints (the reference) {usd(reference / concerns)}; "
        f"{1 - ours / reference:.0%} saved.\n"
    )
    figures.append(
        Figure(
            "tokens",
            f"cost per concern ({model} prices), ours vs the same requests without cache "
            "breakpoints (reference)",
            f"{usd(ours / concerns)} vs {usd(reference / concerns)} "
            f"({1 - ours / reference:.0%} less)",
        )
    )
    write_figures(args.json, figures)


if __name__ == "__main__":
    main()
