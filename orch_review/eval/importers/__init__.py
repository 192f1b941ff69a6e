"""Importers: public code review benchmarks turned into evaluation cases.

Each importer reads the data set as its maintainers publish it (nothing is downloaded
here) and returns :class:`~orch_review.eval.cases.Case` records whose repository is the
project's GitHub clone URL; ``orch-review eval`` clones it into its cache on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from orch_review.eval.cases import Case
from orch_review.eval.importers.aacr_bench import import_aacr_bench
from orch_review.eval.importers.bc_bench import import_bc_bench
from orch_review.eval.importers.code_review_bench import import_code_review_bench
from orch_review.eval.importers.swe_prbench import import_swe_prbench
from orch_review.eval.importers.swr_bench import import_swr_bench

IMPORTERS: dict[str, Callable[[Path], list[Case]]] = {
    "swr-bench": import_swr_bench,
    "swe-prbench": import_swe_prbench,
    "code-review-bench": import_code_review_bench,
    "aacr-bench": import_aacr_bench,
    "bc-bench": import_bc_bench,
}
