"""The tests exercise this checkout: in-process and in every orch-review they start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import orch_review
from tests.helpers import ORCH_REVIEW, SOURCE_ROOT, cli_env

WHERE = "import orch_review, sys; print(orch_review.__file__)"


def test_the_package_under_test_is_this_checkouts() -> None:
    assert Path(orch_review.__file__).resolve().is_relative_to(SOURCE_ROOT)


@pytest.mark.slow
def test_an_orch_review_started_by_a_test_imports_this_checkout(tmp_path: Path) -> None:
    decoy = tmp_path / "orch_review"  # a repository under review with a package of that name
    decoy.mkdir()
    (decoy / "__init__.py").write_text("raise SystemExit('the decoy was imported')\n")
    python = ORCH_REVIEW[: ORCH_REVIEW.index("-m")]
    for env in (cli_env({"PATH": os.environ["PATH"]}), dict(os.environ)):
        result = subprocess.run(
            [*python, "-c", WHERE], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
        assert Path(result.stdout.strip()).resolve().is_relative_to(SOURCE_ROOT / "orch_review")
    assert sys.executable in python
