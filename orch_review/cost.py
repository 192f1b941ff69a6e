"""What a review of a scope would cost, before it starts: a range of US dollars.

The model (docs/cost.md): a review runs one main agent, one subagent per concern, a verifier
per concern that reports findings, and for large changes a critic. Each agent reads a fixed
prompt (system prompt, tools, the task), plus tokens for every file it is given and every
changed line it reads; it writes a few tokens per file. The number of concerns is what
nobody knows in advance, so the range spans the two ways a review covers its files:

* low: the main agent fans out little and the sweep packs the files into concerns as the
  sweep itself groups them (``findings/sweep_groups.py``: neighbours together, up to 40
  files or 1,500 weighted lines), one verifier in all;
* high: one subtask per file (up to ``max-subtasks``, the rest swept), the small ones packed
  into as many agents as run at once when there are more of them (``engine/agents/packing.py``), a
  verifier for a quarter of the concerns, the critic when it runs, and the thinking the
  effort allows.

The per-agent figures are :data:`CALIBRATION`, measured by the bench it names; dollars come
from the configured price table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from orch_review.config.pricing import Price
from orch_review.config.settings import Config
from orch_review.findings.coverage import LedgerFile
from orch_review.findings.sweep_groups import group_files
from orch_review.findings.usage import CostRange
from orch_review.scope.languages import language_of
from orch_review.scope.resolve import Scope

BYTES_PER_LINE = 40  # a whole file (``--all``) is read as this many bytes per line
PACK_SMALL_BYTES = 4_000  # engine/agents/packing.py PackLimits.small_bytes
PACK_MAX_MEMBERS = 10  # engine/agents/packing.py PackLimits.max_members
AGENT_READS = 1  # tool outputs an agent spends reading the files its task does not show
# Input tokens per character of the guidance (guidance files, agent rules) every agent's
# prompt carries: a quarter token a character, read on about two turns.
GUIDANCE_TOKENS_PER_CHAR = 0.5


@dataclass(frozen=True, slots=True)
class RoleTokens:
    """One agent of a role: input tokens (fixed, per file, per changed line), output tokens
    (fixed, per file), and the share of its input read from the prompt cache."""

    base: int
    per_file: float
    per_line: float
    output: int
    output_per_file: float
    cache_read_share: float
    per_byte: float = 0.0  # input tokens per byte of the files the agent reads

    def tokens(self, files: float, lines: float, read_bytes: float = 0.0) -> tuple[float, float]:
        """(input, output) tokens of one agent given ``files`` with ``lines`` changed, of
        which it reads ``read_bytes``."""
        read = self.base + self.per_file * files + self.per_line * lines
        read += self.per_byte * read_bytes
        return read, self.output + self.output_per_file * files


@dataclass(frozen=True, slots=True)
class Calibration:
    """The per-agent token figures and the bench run that measured them."""

    source: str
    date: str
    basis: str  # what was measured, in words: "calibrated on <basis>"
    main_sweep: RoleTokens  # a main agent that leaves the files to the sweep (low end)
    main_fanout: RoleTokens  # one that writes a subtask per file (high end)
    subagent: RoleTokens  # a sweep's agent, one of few (low end)
    subagent_fanout: RoleTokens  # one of a subtask per file (high end)
    verifier: RoleTokens
    critic: RoleTokens
    verified_share: float  # of concerns that report a finding, so get a verifier (high end)

    def describe(self) -> dict[str, object]:
        """What the estimate rests on: input tokens per agent of each role, and the bench run
        that measured them."""
        roles = (
            ("main", self.main_sweep),
            ("main fanning out", self.main_fanout),
            ("per subagent", self.subagent),
            ("per verifier", self.verifier),
            ("critic", self.critic),
        )
        return {
            "source": self.source,
            "date": self.date,
            "basis": self.basis,
            "calibrated_on": calibrated_on(self.basis),
            "input_tokens": [
                f"{name} {r.base:,} + {r.per_file:g}/file + {r.per_line:g}/changed line"
                + (f" + {r.per_byte:g}/byte read" if r.per_byte else "")
                for name, r in roles
            ],
        }


# Measured with `python -m bench.estimate_bench --fit` against the fake Messages API (whose
# token counts are ceil(characters / 4) of each block), at effort low: 10 and 100 files of 2
# and of 30 changed lines, a main agent that fans out one subtask per file (on 100 files,
# packed ten to an agent) and one that leaves everything to the sweep; subagents are shown
# their files (`inline-file-bytes`) and report from them (per changed line: the difference
# between 2 and 30 lines; per file: between one file and a sweep group of 33). The fan-out's
# many agents read their prompt's prefix from the cache more often than the sweep's few.
# Tokens per byte of the files a subagent reads (each file up to what one agent reads:
# its shown files and one tool output of the rest): fitted with
# `python -m bench.history_bench` on real history (files of kilobytes, where the synthetic
# changes' are of a few lines), so that the high end holds and the midpoint is within 2x
# for the three strategies. Refitted on 2026-12-06 once the low end counted the sweep's
# groups as the sweep makes them: 0.2 and 0.38 tokens per byte, one tool output read;
# worst factor off the midpoint 1.90, every review at most the high end.
CALIBRATION = Calibration(
    source="bench/estimate_bench.py, bench/history_bench.py",
    date="2026-12-06",
    basis=(
        "a fake API's token counts (no real model) on synthetic changes and on 17 ranges of"
        " 7 public repositories (2, about 50 and about 1,000 files)"
    ),
    main_sweep=RoleTokens(2660, 26.5, 0, 61, 0, 0.47),
    main_fanout=RoleTokens(4250, 55, 0, 82, 10.7, 0.55),
    subagent=RoleTokens(810, 25, 6.3, 30, 0.4, 0.15, per_byte=0.2),
    subagent_fanout=RoleTokens(810, 25, 6.3, 30, 0.4, 0.3, per_byte=0.38),
    verifier=RoleTokens(1650, 0, 0, 77, 0, 0.48),
    critic=RoleTokens(3000, 32, 0, 44, 0, 0.46),
    verified_share=0.25,
)

# How far one agent's tokens stray from its role's figures between the bench's reviews (a
# verifier read 1,440 to 2,040 input tokens, the critic 6,010 to 7,250): each end of the
# range is widened by this share.
SCATTER = 0.15

# Output tokens of a request at each effort, over the same request with no thinking: the
# fake API does not think, so this is the documented allowance, applied to the high end only.
THINKING = {"low": 1.0, "medium": 1.5, "high": 2.0, "xhigh": 3.0, "max": 4.0}


def calibrated_on(basis: str) -> str:
    """What an estimate rests on, and what to budget for, wherever it is shown."""
    return f"calibrated on {basis}; budget for the high end"


@dataclass(frozen=True, slots=True)
class RoleEstimate:
    """One role's part of the estimate: its model and effort, agents and dollars."""

    role: str
    model: str
    effort: str
    agents: tuple[int, int]  # low, high
    usd: tuple[float, float]


@dataclass(frozen=True, slots=True)
class Estimate:
    """The estimated cost of a review, per role, with what it rests on."""

    files: int
    changed_lines: int
    concerns: tuple[int, int]
    roles: tuple[RoleEstimate, ...]
    calibration: dict[str, object]
    unknown_price_models: tuple[str, ...] = ()

    @property
    def range(self) -> CostRange:
        """The total, low to high."""
        return CostRange(
            sum(r.usd[0] for r in self.roles),
            sum(r.usd[1] for r in self.roles),
            str(self.calibration.get("calibrated_on", "")),
        )

    def to_json(self) -> dict[str, object]:
        """JSON-ready data for ``plan --json``."""
        total = self.range
        return {
            "calibrated_on": total.calibrated_on,
            "low_usd": round(total.low_usd, 6),
            "high_usd": round(total.high_usd, 6),
            "files": self.files,
            "changed_lines": self.changed_lines,
            "concerns": list(self.concerns),
            "roles": [
                {
                    "role": r.role,
                    "model": r.model,
                    "effort": r.effort,
                    "agents": list(r.agents),
                    "low_usd": round(r.usd[0], 6),
                    "high_usd": round(r.usd[1], 6),
                }
                for r in self.roles
            ],
            "calibration": self.calibration,
            "unknown_price_models": list(self.unknown_price_models),
        }


def _ledger_files(scope: Scope) -> list[LedgerFile]:
    """The files as the coverage ledger sees them: changed lines and hunks for a change, an
    estimated length for a full audit (the review reads it from the snapshot)."""
    return [
        LedgerFile(f.path, f.change.additions + f.change.deletions, f.change.hunks)
        if f.change
        else LedgerFile(f.path, max(1, f.size // BYTES_PER_LINE))
        for f in scope.files
    ]


def _sweep_groups(files: list[LedgerFile]) -> int:
    """How many concerns the sweep packs these files into: the sweep's own grouping."""
    return len(group_files(files)) if files else 0


def _fanned_concerns(sizes: list[int], config: Config) -> int:
    """Concerns of one subtask per file, the small ones packed as ``engine/agents/packing.py``
    packs them."""
    budget = config.inline_file_bytes if config.pack_subtasks else 0
    small = sum(1 for size in sizes if size <= min(PACK_SMALL_BYTES, budget))
    if budget <= 0 or small <= config.max_concurrent:
        return len(sizes)
    per_agent = min(PACK_MAX_MEMBERS, math.ceil(small / config.max_concurrent))
    return len(sizes) - small + math.ceil(small / per_agent)


def _cost(price: Price, role: RoleTokens, read: float, written: float) -> float:
    cached = read * role.cache_read_share
    return price.cost(0, round(written), round(read - cached), round(cached))


def estimate_cost(
    scope: Scope,
    config: Config,
    *,
    critic: bool,
    calibration: Calibration = CALIBRATION,
    guidance_chars: int = 0,
) -> Estimate:
    """The estimated cost of reviewing ``scope`` with ``config``; ``critic``: whether the
    critic runs (``engine.review.critic_wanted``); ``guidance_chars``: the length of the
    guidance every agent's prompt carries."""
    ledger = _ledger_files(scope)
    files, changed = len(ledger), sum(f.lines for f in ledger)
    # What one agent reads of its files: what its task shows, and its reads of the rest
    # (each tool output cut at tool-output-cap); no file more than that.
    readable = config.inline_file_bytes + AGENT_READS * config.tool_output_cap
    size = sum(min(f.size, readable) for f in scope.files)
    fanned = min(files, config.max_subtasks)
    low_concerns = _sweep_groups(ledger)
    sizes = [f.size for f in scope.files][:fanned]
    high_concerns = _fanned_concerns(sizes, config) + _sweep_groups(
        sorted(ledger, key=lambda f: f.lines)[: files - fanned]
    )
    thinking = THINKING.get(config.effort, 1.0)
    prices = {m: config.price_for(m) for m in (config.model, config.agent_model)}
    unknown = tuple(sorted(m for m, (_, known) in prices.items() if not known))

    def role(
        name: str,
        model: str,
        tokens: RoleTokens,
        low: int,
        high: int,
        dear: RoleTokens | None = None,
    ) -> RoleEstimate:
        price = prices[model][0]
        guided = GUIDANCE_TOKENS_PER_CHAR * guidance_chars
        dearer = replace(dear or tokens, base=(dear or tokens).base + round(guided))
        tokens = replace(tokens, base=tokens.base + round(guided))
        # Low: the files spread over the fewest agents; high: over the most, thinking more.
        few = (
            tokens.tokens(files / low, changed / low, min(size / low, readable))
            if low
            else (0.0, 0.0)
        )
        many = (
            dearer.tokens(files / high, changed / high, min(size / high, readable))
            if high
            else (0.0, 0.0)
        )
        return RoleEstimate(
            name,
            model,
            config.effort,
            (low, high),
            (
                low * _cost(price, tokens, *few) * (1 - SCATTER),
                high * _cost(price, dearer, many[0], many[1] * thinking) * (1 + SCATTER),
            ),
        )

    cal = calibration
    verifiers = max(1, math.ceil(high_concerns * cal.verified_share)) if files else 0
    roles = [
        role("main", config.model, cal.main_sweep, 1, 1, cal.main_fanout),
        role(
            "subagents",
            config.agent_model,
            cal.subagent,
            low_concerns,
            high_concerns,
            cal.subagent_fanout,
        ),
        role("verifiers", config.agent_model, cal.verifier, min(1, files), verifiers),
    ]
    if critic:
        roles.append(role("critic", config.model, cal.critic, 1, 1))
    provable = sum(1 for f in scope.files if language_of(f.path) is not None)
    if config.prove != "off" and provable:
        # A prover reads one finding's code, as a verifier reads its concern's findings: it
        # is estimated with the verifier's figures, one per finding a verifier may confirm.
        roles.append(
            role("provers", config.agent_model, cal.verifier, 0, min(verifiers, provable * 4))
        )
    return Estimate(
        files=files,
        changed_lines=changed,
        concerns=(low_concerns, high_concerns),
        roles=tuple(roles),
        calibration=cal.describe(),
        unknown_price_models=unknown,
    )
