"""What counts as a test failure, read from what real runners print: pytest and unittest run
here as subprocesses on small test files (outside any sandbox: the files are ours)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from orch_review.engine.proofs.runners import Runner, missing_module
from orch_review.findings.proof import ProofRun

pytestmark = pytest.mark.slow

FAILS = "def test_it():\n    assert 1 + 1 == 3\n"
RAISES = "def test_it():\n    raise ValueError('the code under test raised')\n"
PASSES = "def test_it():\n    assert 1 + 1 == 2\n"
SYNTAX = "def test_it(:\n    pass\n"
IMPORT = "import not_installed_anywhere\n\ndef test_it():\n    pass\n"
NO_TESTS = "x = 1\n"
FIXTURE_ERROR = (
    "import pytest\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError('setup')\n\n"
    "def test_it(broken):\n    assert False\n"
)
CASE = "import unittest\n\nclass T(unittest.TestCase):\n    def test_it(self):\n        "
UNITTEST_FAILS = CASE + "self.assertEqual(1, 2)\n"
UNITTEST_ERROR = CASE + "raise ValueError('x')\n"
UNITTEST_PASSES = CASE + "self.assertEqual(1, 1)\n"


def _run(tmp_path: Path, runner: Runner, code: str, *extra: str) -> ProofRun:
    (tmp_path / "test_case.py").write_text(code)
    argv = [sys.executable, *runner.command("test_case.py").split()[1:], *extra]
    done = subprocess.run(
        argv,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return ProofRun(done.returncode, done.stdout + done.stderr)


@pytest.mark.parametrize(
    ("code", "failed", "passed"),
    [
        (FAILS, True, False),
        (RAISES, True, False),  # pytest counts an exception in the test as a failed test
        (PASSES, False, True),
        (SYNTAX, False, False),  # exit 2: a collection error
        (IMPORT, False, False),  # exit 2
        (NO_TESTS, False, False),  # exit 5
        (FIXTURE_ERROR, False, False),  # exit 1, but an error, not a failure
    ],
)
def test_pytest_outcomes(tmp_path: Path, code: str, failed: bool, passed: bool) -> None:
    run = _run(tmp_path, Runner("pytest"), code)
    assert Runner("pytest").failed_by_a_test(run) is failed, run.output
    assert Runner("pytest").passed(run) is passed, run.output


def test_a_pytest_usage_error_is_no_failure(tmp_path: Path) -> None:
    run = _run(tmp_path, Runner("pytest"), FAILS, "--no-such-option")
    assert run.exit_code == 4
    assert not Runner("pytest").failed_by_a_test(run)


@pytest.mark.parametrize(
    ("code", "failed", "passed"),
    [
        (UNITTEST_FAILS, True, False),
        (UNITTEST_ERROR, False, False),  # unittest tells an error from a failure
        (UNITTEST_PASSES, False, True),
        (SYNTAX, False, False),
        (IMPORT, False, False),
        (NO_TESTS, False, False),
    ],
)
def test_unittest_outcomes(tmp_path: Path, code: str, failed: bool, passed: bool) -> None:
    run = _run(tmp_path, Runner("unittest"), code)
    assert Runner("unittest").failed_by_a_test(run) is failed, run.output
    assert Runner("unittest").passed(run) is passed, run.output


def test_a_missing_module_is_named(tmp_path: Path) -> None:
    run = _run(tmp_path, Runner("unittest"), IMPORT)
    assert missing_module(run.output) == "not_installed_anywhere"
