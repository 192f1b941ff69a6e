"""Snapshot comparison against files in ``tests/reporters/golden/``; regenerate with
``UPDATE_GOLDEN=1 pytest tests/reporters`` and review ``git diff`` of the golden files."""

from __future__ import annotations

from pathlib import Path

from tests.golden import assert_matches

GOLDEN = Path(__file__).parent / "golden"


def assert_golden(name: str, actual: str) -> None:
    """Fail with a unified diff when ``actual`` differs from the golden file ``name``."""
    assert_matches(GOLDEN, name, actual)
