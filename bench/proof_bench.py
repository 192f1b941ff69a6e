"""What proving costs: a review with two high findings on the fake Messages API, without and
with `--prove`, and the tokens, cost and time of the proofs per finding.

Each model request waits ``--latency`` seconds, as a real model's turn does; the review's
agents, its sandboxed shells and the proofs' test runs are real. Run it from the repository's
root: ``python -m bench.proof_bench``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench.readme_svg import _git
from orch_review import ReviewOptions, review
from orch_review.findings.report import Report
from tests.fakes.messages_api import FakeMessagesAPI
from tests.proofs.fixture import BASE, DISCOUNT, DISCOUNT_TEST, EVAL_TEST, EVALUATE, HEAD
from tests.scripted import ReviewScript
from tests.scripted_prover import ProverScript


def _repo(folder: Path) -> Path:
    repo = folder / "shop"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for name, text in BASE.items():
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "shop")
    for name, text in HEAD.items():
        (repo / name).write_text(text, encoding="utf-8")
    return repo


def _once(prove: str, latency: float) -> tuple[float, Report]:
    script = ProverScript(
        ReviewScript([DISCOUNT, EVALUATE]),
        {"returns the discount": DISCOUNT_TEST, "eval": EVAL_TEST},
    )
    with tempfile.TemporaryDirectory(prefix="orch-review-proof-bench-") as tmp:
        folder = Path(tmp)
        repo = _repo(folder)
        home = folder / "home"
        home.mkdir()
        with FakeMessagesAPI(script) as api:
            api.latency = lambda _: latency
            env = {
                "PATH": "/usr/local/bin:/usr/bin:/bin",
                "HOME": str(home),
                "GIT_CONFIG_NOSYSTEM": "1",
                "ANTHROPIC_BASE_URL": api.base_url,
                "ANTHROPIC_API_KEY": "fake-key",
            }
            settings = {"journal": False, "critic": False, "prove": prove}
            started = time.monotonic()
            report = review(repo, ReviewOptions(settings=settings), env=env)
            seconds = time.monotonic() - started
            if api.policy_errors:
                raise RuntimeError(f"the scripted model failed: {api.policy_errors[0]}")
    return seconds, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per model request")
    args = parser.parse_args()
    timings: dict[str, list[float]] = {"off": [], "high": []}
    proven = 0
    report = None
    for _ in range(args.runs):
        for prove in ("off", "high"):
            seconds, report = _once(prove, args.latency)
            timings[prove].append(seconds)
            if prove == "high":
                proven = sum(1 for f in report.findings if f.proof and f.proof.proven)
    assert report is not None
    off, high = (statistics.median(timings[p]) for p in ("off", "high"))
    provers = report.usage.by_role.get("prover")
    findings = sum(1 for f in report.findings if f.proof is not None) or 1
    print(f"review with two high findings, {args.latency:g} s per model request, {args.runs} runs")
    print(f"  without proofs: {off:6.2f} s (median)")
    print(f"  with proofs:    {high:6.2f} s (median), {proven} of 2 findings proven")
    print(f"  proving adds:   {high - off:6.2f} s = {100 * (high - off) / off:.0f}% of the review")
    if provers is not None:
        total = report.usage.total
        tokens = provers.input_tokens + provers.output_tokens + provers.cache_read_tokens
        print(
            f"  per finding:    {(high - off) / findings:6.2f} s, {tokens // findings:,} tokens, "
            f"${provers.cost_usd / findings:.4f} (the review: ${total.cost_usd:.4f})"
        )


if __name__ == "__main__":
    main()
