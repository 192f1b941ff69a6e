"""orch-review: code review with Claude in orchestration mode.

The library front door (see :mod:`orch_review.core`)::

    from orch_review import review, ReviewOptions
    report = review(".", ReviewOptions(base="origin/main"))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from orch_review.version import REPOSITORY_URL as REPOSITORY_URL
from orch_review.version import __version__
from orch_review.version import install_command as install_command

# Name -> the module that defines it. Imported on first use: `orch-review --version` must
# not pay for the whole engine.
_EXPORTS = {
    "review": "orch_review.core",
    "prepare": "orch_review.core",
    "run": "orch_review.core",
    "merge": "orch_review.core",
    "ReviewOptions": "orch_review.core",
    "PreparedReview": "orch_review.core",
    "Report": "orch_review.findings.report",
    "Finding": "orch_review.findings.records",
    "Verdict": "orch_review.findings.records",
    "Severity": "orch_review.findings.records",
    "Status": "orch_review.findings.records",
    "Coverage": "orch_review.findings.coverage",
    "UsageReport": "orch_review.findings.usage",
    "AgentEvent": "orch_review.events",
    "EventSink": "orch_review.events",
    "ExitCode": "orch_review.errors",
    "OrchReviewError": "orch_review.errors",
    "ConfigError": "orch_review.errors",
    "UsageError": "orch_review.errors",
    "OutputError": "orch_review.errors",
    "GitError": "orch_review.errors",
    "CredentialsMissing": "orch_review.errors",
    "AuthenticationFailed": "orch_review.errors",
    "ApiUnavailable": "orch_review.errors",
    "BudgetExceeded": "orch_review.errors",
    "RequestRejected": "orch_review.errors",
    "NothingToReview": "orch_review.scope.resolve",
}

__all__ = [
    "AgentEvent",
    "ApiUnavailable",
    "AuthenticationFailed",
    "BudgetExceeded",
    "ConfigError",
    "Coverage",
    "CredentialsMissing",
    "EventSink",
    "ExitCode",
    "Finding",
    "GitError",
    "NothingToReview",
    "OrchReviewError",
    "OutputError",
    "PreparedReview",
    "Report",
    "RequestRejected",
    "ReviewOptions",
    "Severity",
    "Status",
    "UsageError",
    "UsageReport",
    "Verdict",
    "__version__",
    "merge",
    "prepare",
    "review",
    "run",
]

if TYPE_CHECKING:
    from orch_review.core import PreparedReview, ReviewOptions, merge, prepare, review, run
    from orch_review.errors import (
        ApiUnavailable,
        AuthenticationFailed,
        BudgetExceeded,
        ConfigError,
        CredentialsMissing,
        ExitCode,
        GitError,
        OrchReviewError,
        OutputError,
        RequestRejected,
        UsageError,
    )
    from orch_review.events import AgentEvent, EventSink
    from orch_review.findings.coverage import Coverage
    from orch_review.findings.records import Finding, Severity, Status, Verdict
    from orch_review.findings.report import Report
    from orch_review.findings.usage import UsageReport
    from orch_review.scope.resolve import NothingToReview


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'orch_review' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
