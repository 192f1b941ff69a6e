"""The gate: which figures make `orch-review eval` exit non-zero."""

from __future__ import annotations

import pytest

from orch_review.cli.eval import _verdict
from orch_review.errors import ExitCode


def _summary(recall: float | None, fp: float | None, failed: int = 0) -> dict[str, object]:
    return {"overall": {"recall": recall, "false_positives_per_clean_change": fp, "failed": failed}}


@pytest.mark.parametrize(
    ("summaries", "min_recall", "max_fp", "code"),
    [
        ([_summary(0.5, 1.0)], None, None, ExitCode.CLEAN),
        ([_summary(0.5, 1.0)], 0.5, 1.0, ExitCode.CLEAN),
        ([_summary(0.49, 1.0)], 0.5, None, ExitCode.FINDINGS),
        ([_summary(0.5, 1.01)], None, 1.0, ExitCode.FINDINGS),
        ([_summary(None, 0.0)], 0.1, None, ExitCode.FINDINGS),
        ([_summary(1.0, None)], None, 0.5, ExitCode.FINDINGS),
        ([_summary(1.0, 0.0), _summary(0.2, 0.0)], 0.5, None, ExitCode.FINDINGS),
        ([_summary(0.1, 9.0, failed=1)], 0.5, 0.5, ExitCode.INCOMPLETE),
    ],
)
def test_thresholds(
    summaries: list[dict[str, object]],
    min_recall: float | None,
    max_fp: float | None,
    code: ExitCode,
) -> None:
    assert _verdict(summaries, min_recall, max_fp) == code
