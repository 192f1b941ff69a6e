"""One row of the results table, and how each bench hands its rows to ``bench/run_all``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Figure:
    """A measured figure; ``met`` is None when it has no target."""

    bench: str
    figure: str
    value: str
    target: str = ""
    met: bool | None = None


def write_figures(path: Path | None, figures: list[Figure]) -> None:
    """Save ``figures`` as JSON for run_all (no-op without a path)."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(f) for f in figures], indent=1), encoding="utf-8")


def read_figures(path: Path) -> list[Figure]:
    """Load what :func:`write_figures` saved."""
    return [Figure(**row) for row in json.loads(path.read_text(encoding="utf-8"))]


def markdown_table(figures: list[Figure]) -> str:
    """The results table: bench, figure, value, target, met?"""
    lines = ["| bench | figure | value | target | met? |", "|---|---|---:|---|---|"]
    for f in figures:
        met = "" if f.met is None else ("yes" if f.met else "**no**")
        lines.append(f"| {f.bench} | {f.figure} | {f.value} | {f.target} | {met} |")
    return "\n".join(lines)
