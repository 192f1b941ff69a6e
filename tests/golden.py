"""Snapshot comparison against golden files: one rule for every package's golden folder.

To regenerate after an intended change, run the tests with ``UPDATE_GOLDEN=1`` and review
``git diff`` of the golden files before committing them.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest


def assert_matches(golden: Path, name: str, actual: str) -> None:
    """Fail with a unified diff when ``actual`` differs from the file ``golden / name``;
    with ``UPDATE_GOLDEN=1``, write it instead."""
    path = golden / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="")
        return
    if not path.exists():
        pytest.fail(f"no golden file {path}: run with UPDATE_GOLDEN=1 to write it")
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"golden/{name}",
            tofile="actual",
        )
        pytest.fail("output differs from the golden file:\n" + "".join(diff), pytrace=False)
