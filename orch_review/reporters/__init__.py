"""Output formats: one module each, all with ``render(report) -> str``, listed here.

Every renderer gets the same triaged :class:`Report`; which findings a format shows is decided
by their status alone (JSON lists all of them, the others only confirmed ones).
"""

from __future__ import annotations

from collections.abc import Callable

from orch_review.findings.report import Report

Renderer = Callable[[Report], str]


def registry() -> dict[str, Renderer]:
    """Format name -> renderer (imported lazily: each pulls in what it needs)."""
    from orch_review.reporters import (
        codequality,
        json_report,
        junit,
        markdown,
        rdjson,
        sarif,
        terminal,
        workflow_commands,
    )

    return {
        "github": workflow_commands.render,
        "gitlab": codequality.render,
        "json": json_report.render,
        "junit": junit.render,
        "markdown": markdown.render,
        "rdjson": rdjson.render,
        "sarif": sarif.render,
        "text": terminal.render,
    }
