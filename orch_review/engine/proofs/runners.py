"""Test runners a proof may use, found where the sandboxed shells run, and what their exit
statuses and summaries mean.

Only what the sandbox shows counts: a runner is used when the interpreter the shells find on
their ``PATH`` has it. Nothing is installed or fetched.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Literal

from orch_review.findings.proof import ProofRun
from orch_review.scope.languages import TEST_SUFFIXES

RunnerName = Literal["pytest", "unittest", "node"]

_PYTEST_FAILED = re.compile(r"\b(\d+) failed\b")
_PYTEST_PASSED = re.compile(r"\b(\d+) passed\b")
_PYTEST_ERRORS = re.compile(r"\b(\d+) errors?\b")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
_UNITTEST_FAILED = re.compile(r"^FAILED \((?P<counts>[^)]*)\)\s*$", re.M)
_UNITTEST_OK = re.compile(r"^OK\b", re.M)
_MISSING_MODULE = re.compile(
    r"ModuleNotFoundError: No module named '([^']+)'|Cannot find (?:module|package) '([^']+)'"
)
_TAP_COUNT = re.compile(r"^# (pass|fail|cancelled) (\d+)$", re.M)
# A test file node could not load at all shows up as a failed "test" with the exit code of
# the process that ran it.
_TAP_FILE_FAILED = re.compile(r"^\s+exitCode: ", re.M)

# Printed by the probe that tells which runner the shells have for a language.
PROBES = {
    "python": (
        "if ! command -v python3 >/dev/null; then echo none; "
        "elif python3 -c 'import pytest' >/dev/null 2>&1; then echo pytest; "
        "elif python3 -c 'import unittest' >/dev/null 2>&1; then echo unittest; "
        "else echo none; fi"
    ),
    "javascript": (
        "if command -v node >/dev/null && node -e 'require(\"node:test\")' >/dev/null 2>&1; "
        "then echo node; else echo none; fi"
    ),
}


def runner_from_probe(output: str) -> Runner | None:
    """The runner a probe of :data:`PROBES` printed, or None."""
    said = output.strip().splitlines()[-1:] if output.strip() else []
    names: tuple[RunnerName, ...] = ("pytest", "unittest", "node")
    for name in names:
        if said == [name]:
            return Runner(name)
    return None


@dataclass(frozen=True, slots=True)
class Runner:
    """A Python test runner: how to run one test file, and how to read the outcome."""

    name: RunnerName

    @property
    def language(self) -> str:
        """The language whose tests it runs."""
        return "javascript" if self.name == "node" else "python"

    @property
    def test_suffixes(self) -> tuple[str, ...]:
        """The suffixes a test file it runs may have."""
        return TEST_SUFFIXES[self.language]

    def command(self, test_path: str) -> str:
        """The command, run from the root of a copy of the project, that runs ``test_path``."""
        quoted = shlex.quote(test_path)
        if self.name == "pytest":
            return f"python3 -m pytest -p no:cacheprovider -q {quoted}"
        if self.name == "node":
            return f"node --test --test-reporter=tap {quoted}"
        return f"python3 -m unittest -v {quoted}"

    def failed_by_a_test(self, run: ProofRun) -> bool:
        """Whether a test failed (an assertion or an expected exception), and nothing else
        went wrong: not a collection, import, syntax or usage error."""
        if run.exit_code != 1:  # pytest: 2 interrupted, 3 internal, 4 usage, 5 no tests
            return False
        if self.name == "pytest":
            return bool(_PYTEST_FAILED.search(run.output)) and not _PYTEST_ERRORS.search(
                _last_line(run.output)
            )
        if self.name == "node":
            tap = _tap_counts(run.output)
            loaded = not _TAP_FILE_FAILED.search(run.output)
            return loaded and tap.get("fail", 0) > 0 and not tap.get("cancelled")
        counts = _unittest_counts(run.output)
        return counts is not None and counts.get("failures", 0) > 0 and not counts.get("errors")

    def passed(self, run: ProofRun) -> bool:
        """Whether the test ran and passed."""
        if run.exit_code != 0:
            return False
        if self.name == "pytest":
            return bool(_PYTEST_PASSED.search(run.output))
        if self.name == "node":
            counts = _tap_counts(run.output)
            return counts.get("pass", 0) > 0 and counts.get("fail", 1) == 0
        ran = _UNITTEST_RAN.search(run.output)
        return ran is not None and int(ran.group(1)) > 0 and bool(_UNITTEST_OK.search(run.output))


def missing_module(output: str) -> str | None:
    """The module an import failed to find, when that is what the output shows."""
    found = _MISSING_MODULE.search(output)
    return None if found is None else found.group(1) or found.group(2)


def _tap_counts(output: str) -> dict[str, int]:
    """The summary counts of node's TAP report (``# pass 1``, ``# fail 0``)."""
    return {m.group(1): int(m.group(2)) for m in _TAP_COUNT.finditer(output)}


def _last_line(output: str) -> str:
    lines = output.strip().splitlines()
    return lines[-1] if lines else ""


def _unittest_counts(output: str) -> dict[str, int] | None:
    """``{"failures": n, "errors": m, ...}`` from unittest's last summary; None without one."""
    ran = _UNITTEST_RAN.search(output)
    failed = list(_UNITTEST_FAILED.finditer(output))
    if ran is None or int(ran.group(1)) == 0 or not failed:
        return None
    counts = {}
    for item in failed[-1].group("counts").split(","):
        name, _, number = item.strip().partition("=")
        if number.isdigit():
            counts[name] = int(number)
    return counts
