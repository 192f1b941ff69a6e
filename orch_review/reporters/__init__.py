"""Output formats: one module each, all with ``render(report) -> str``, listed here."""

from __future__ import annotations

from collections.abc import Callable

from orch_review.report import Report

Renderer = Callable[[Report], str]


def registry() -> dict[str, Renderer]:
    """Format name -> renderer (imported lazily: each pulls in what it needs)."""
    from orch_review.reporters import json_report

    return {"json": json_report.render}
