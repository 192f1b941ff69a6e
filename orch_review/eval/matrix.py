"""Comparing settings: the same cases under every combination of a few settings.

``model=A,B effort=high,xhigh verifiers=on,off`` is 8 combinations. Axis names are
configuration keys (``verifiers`` is the ``verify`` key with on/off). Each combination keeps
its own journal, so every arm pays for (and reports the cost of) its own agents, and a rerun
of the same matrix resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from orch_review.config.settings import setting_from_text
from orch_review.engine.memory.journal import journal_key
from orch_review.errors import UsageError
from orch_review.eval.cases import Case
from orch_review.eval.render import money, number, percent
from orch_review.eval.runner import EvalSettings, run_cases
from orch_review.eval.summary import summarize
from orch_review.hosts.summary import cell

ALIASES = {"verifiers": "verify"}


@dataclass(frozen=True, slots=True)
class Axis:
    """One setting and the values to try, as typed and as configuration values."""

    name: str  # as typed, e.g. "verifiers"
    key: str  # the Config field, e.g. "verify"
    texts: tuple[str, ...]
    values: tuple[object, ...]


def parse_axis(text: str) -> Axis:
    """``name=v1,v2`` as an :class:`Axis`; UsageError when the name or a value is invalid."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    texts = tuple(v.strip() for v in raw.split(",") if v.strip())
    if not sep or not name or not texts:
        raise UsageError(f"--matrix {text!r}: write SETTING=VALUE,VALUE (e.g. effort=high,xhigh)")
    key = ALIASES.get(name, name).replace("-", "_")
    if len(set(texts)) != len(texts):
        raise UsageError(f"--matrix {text!r}: a value is listed twice")
    return Axis(name, key, texts, tuple(setting_from_text(key, v) for v in texts))


def combinations(axes: Sequence[Axis]) -> list[tuple[str, dict[str, object]]]:
    """(label, settings) for every combination, in the order the axes and values were given."""
    names = [a.key for a in axes]
    if len(set(names)) != len(names):
        raise UsageError("--matrix: a setting is given twice")
    out = []
    for picks in itertools.product(*(range(len(a.texts)) for a in axes)):
        label = " ".join(f"{a.name}={a.texts[i]}" for a, i in zip(axes, picks, strict=True))
        settings = {a.key: a.values[i] for a, i in zip(axes, picks, strict=True)}
        out.append((label, settings))
    return out


def run_matrix(
    cases: Sequence[Case],
    base: EvalSettings,
    axes: Sequence[Axis],
    env: Mapping[str, str],
    *,
    announce: Callable[[str], None] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Run ``cases`` under each combination; (label, summary) per combination."""
    rows = []
    for label, settings in combinations(axes):
        if announce is not None:
            announce(label)
        merged = {**base.settings, **settings}
        if merged.get("journal") is not False:
            digest = journal_key("matrix", sorted((k, repr(v)) for k, v in merged.items()))
            merged["journal_path"] = base.cache / "eval-matrix" / f"{digest[:16]}.sqlite3"
        result = run_cases(cases, dataclasses.replace(base, settings=merged), env)
        rows.append((label, summarize(result)))
    return rows


def matrix_markdown(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """One table, one row per combination."""
    lines = [
        "| settings | recall (95% CI) | precision (95% CI) | F1 | FP per clean change "
        "| cost per change | not scored |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, summary in rows:
        m = summary["overall"]
        lines.append(
            f"| {cell(label)} | {percent(m['recall'], m['recall_ci'])} "
            f"| {percent(m['precision'], m['precision_ci'])} | {percent(m['f1'])} "
            f"| {number(m['false_positives_per_clean_change'])} "
            f"| {money(m['cost_usd_per_change'])} | {m['failed']} |"
        )
    return "\n".join(lines) + "\n"
