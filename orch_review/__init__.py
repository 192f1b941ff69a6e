"""orch-review: code review with Claude in orchestration mode.

The library front door (see :mod:`orch_review.core`)::

    from orch_review import review, ReviewOptions
    report = review(".", ReviewOptions(base="origin/main"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Report", "ReviewOptions", "__version__", "review"]

if TYPE_CHECKING:
    from orch_review.core import ReviewOptions, review
    from orch_review.findings.report import Report


def __getattr__(name: str) -> Any:
    # Imported on first use: `orch-review --version` must not pay for the whole engine.
    if name in ("review", "ReviewOptions"):
        from orch_review import core

        return getattr(core, name)
    if name == "Report":
        from orch_review.findings.report import Report

        return Report
    raise AttributeError(f"module 'orch_review' has no attribute {name!r}")
