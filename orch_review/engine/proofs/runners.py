"""Test runners a proof may use, found where the sandboxed shells run, and what their exit
statuses and reports mean.

Only what the sandbox shows counts: a runner is used when the shells find it on their
``PATH`` (Python's pytest, node, go) or in the project's ``node_modules/.bin`` (vitest,
jest). Nothing is installed or fetched.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from orch_review.findings.proof import ProofRun
from orch_review.scope.languages import TEST_SUFFIXES

RunnerName = Literal["pytest", "unittest", "node", "vitest", "jest", "go"]
_NAMES: tuple[RunnerName, ...] = ("pytest", "unittest", "node", "vitest", "jest", "go")

_PYTEST_FAILED = re.compile(r"\b(\d+) failed\b")
_PYTEST_PASSED = re.compile(r"\b(\d+) passed\b")
_PYTEST_ERRORS = re.compile(r"\b(\d+) errors?\b")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
_UNITTEST_FAILED = re.compile(r"^FAILED \((?P<counts>[^)]*)\)\s*$", re.M)
_UNITTEST_OK = re.compile(r"^OK\b", re.M)
_MISSING_MODULE = re.compile(
    r"ModuleNotFoundError: No module named '([^']+)'"
    r"|Cannot find (?:module|package) '([^']+)'"
    # go: a package no module in go.mod (or in the vendor directory, or the cache) provides
    r"|(?:no required module provides|cannot find module providing"
    r"|missing go\.sum entry for module providing) package ([^\s;:]+)"
    # go: a module go.mod requires that is not in the module cache (go tries to fetch it)
    r"|(?m:^go: downloading (\S+) v\S+$)"
)
_TAP_COUNT = re.compile(r"^# (pass|fail|cancelled) (\d+)$", re.M)
# A test file node could not load at all shows up as a failed "test" with the exit code of
# the process that ran it.
_TAP_FILE_FAILED = re.compile(r"^\s+exitCode: ", re.M)
# The start of vitest's (``--reporter=json``) and jest's (``--json``) report: one line of
# JSON whose counts come before the per-file results, so they survive a cut output.
_JSON_REPORT = re.compile(r'^\{"num(?:Total|Failed)TestSuites":', re.M)
_JSON_COUNT = re.compile(r'"(num[A-Za-z]+)":(\d+)')
_JEST_TESTS = re.compile(r"^Tests: +(.*)$", re.M)
_JEST_SUITE_ERROR = re.compile(r"^\s*● Test suite failed to run$", re.M)
# A package go could not build or set up ran no test, whatever else it printed.
_GO_NOT_BUILT = re.compile(r"\[(?:build|setup) failed\]")
_GO_TEST_FUNC = re.compile(r"^func (Test[A-Za-z0-9_]*)\(\w+ \*testing\.T\)", re.M)

# The environment of every run of go: nothing fetched, no toolchain switch, caches in the
# shell's private home; the vendor directory when the module has one.
GO_ENVIRONMENT = (
    "export GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GOTELEMETRY=off "
    'GOCACHE="$HOME/go-build" GOPATH="$HOME/go" GOFLAGS=\n'
    "if [ -d vendor ]; then export GOFLAGS=-mod=vendor; fi\n"
)
# node reserves gigabytes of address space for each WebAssembly instance (vite and vitest
# use some) unless told not to, which the sandbox's address-space limit refuses; colours off.
NODE_ENVIRONMENT = (
    "export NO_COLOR=1\n"
    "if node --disable-wasm-trap-handler -e 0 >/dev/null 2>&1; then "
    "export NODE_OPTIONS=--disable-wasm-trap-handler; fi\n"
)
_NODE_BIN = "node_modules/.bin"
_PROJECT_RUNNERS = "".join(
    f"if [ -x {_NODE_BIN}/{name} ] && {_NODE_BIN}/{name} --version >/dev/null 2>&1; "
    f"then echo {name}; fi; "
    for name in ("vitest", "jest")
)
# Printed by the probe that tells which runners the shells have for a language, one a line;
# run in a directory that has the project's node_modules.
PROBES = {
    "python": (
        "if ! command -v python3 >/dev/null; then echo none; "
        "elif python3 -c 'import pytest' >/dev/null 2>&1; then echo pytest; "
        "elif python3 -c 'import unittest' >/dev/null 2>&1; then echo unittest; "
        "else echo none; fi"
    ),
    "javascript": (
        NODE_ENVIRONMENT
        + "if command -v node >/dev/null; then "
        + _PROJECT_RUNNERS
        + "if node -e 'require(\"node:test\")' >/dev/null 2>&1; then echo node; fi; fi"
    ),
    "typescript": NODE_ENVIRONMENT
    + "if command -v node >/dev/null; then "
    + _PROJECT_RUNNERS
    + "fi",
    "go": (
        "if command -v go >/dev/null && go version >/dev/null 2>&1; then echo go; "
        "else echo none; fi"
    ),
}


def runner_from_probe(output: str, preferred: Sequence[str] = ()) -> Runner | None:
    """The runner a probe of :data:`PROBES` printed (the first of ``preferred`` it printed,
    else the first it printed), or None."""
    said = [line.strip() for line in output.splitlines() if line.strip() in _NAMES]
    for name in [*(p for p in preferred if p in said), *said]:
        return Runner(name)  # type: ignore[arg-type]
    return None


def preferred_runners(package_json: bytes | None) -> tuple[str, ...]:
    """The JavaScript runners a project's ``package.json`` names in its dependencies, in
    the order to try them: a project with jest and no vitest is tested with jest."""
    try:
        package = json.loads(package_json or b"{}")
    except ValueError:
        return ()
    if not isinstance(package, dict):
        return ()
    names: set[str] = set()
    for key in ("dependencies", "devDependencies"):
        if isinstance(package.get(key), dict):
            names.update(package[key])
    return tuple(name for name in ("vitest", "jest") if name in names)


@dataclass(frozen=True, slots=True)
class Runner:
    """A test runner: how to run one test file, and how to read the outcome."""

    name: RunnerName

    @property
    def test_suffixes(self) -> tuple[str, ...]:
        """The suffixes a test file it runs may have."""
        return TEST_SUFFIXES[self.name]

    @property
    def environment(self) -> str:
        """Shell lines run before the command (not part of it: the sandbox's own setting)."""
        if self.name == "go":
            return GO_ENVIRONMENT
        return NODE_ENVIRONMENT if self.name in ("node", "vitest", "jest") else ""

    def command(self, test_path: str, test_code: str = "") -> str:
        """The command, run from the root of a copy of the project, that runs ``test_path``
        (for go, only the tests ``test_code`` declares, when it declares any)."""
        quoted = shlex.quote(test_path)
        if self.name == "pytest":
            return f"python3 -m pytest -p no:cacheprovider -q {quoted}"
        if self.name == "node":
            return f"node --test --test-reporter=tap {quoted}"
        if self.name == "vitest":
            return f"{_NODE_BIN}/vitest run --reporter=json {quoted}"
        if self.name == "jest":
            return f"{_NODE_BIN}/jest --ci --json --watchman=false --runTestsByPath {quoted}"
        if self.name == "go":
            directory, _, _ = test_path.rpartition("/")
            names = sorted(set(_GO_TEST_FUNC.findall(test_code)))
            only = f" -run {shlex.quote('^(' + '|'.join(names) + ')$')}" if names else ""
            go = f"go test -json -count=1{only} ."
            return f"cd {shlex.quote(directory)} && {go}" if directory else go
        return f"python3 -m unittest -v {quoted}"

    def failed_by_a_test(self, run: ProofRun) -> bool:
        """Whether a test failed (an assertion or an expected exception), and nothing else
        went wrong: not a collection, import, build, syntax or usage error."""
        if run.exit_code != 1:  # pytest: 2 interrupted, 3 internal, 4 usage, 5 no tests; go: 2
            return False
        if self.name == "pytest":
            return bool(_PYTEST_FAILED.search(run.output)) and not _PYTEST_ERRORS.search(
                _last_line(run.output)
            )
        if self.name == "node":
            tap = _tap_counts(run.output)
            loaded = not _TAP_FILE_FAILED.search(run.output)
            return loaded and tap.get("fail", 0) > 0 and not tap.get("cancelled")
        if self.name in ("vitest", "jest"):
            report = json_report_counts(run.output)
            # A file that did not load (syntax, import) is a failed suite with no test run;
            # jest also counts it as a suite with a runtime error.
            return (
                report.get("numFailedTests", 0) > 0
                and report.get("numTotalTests", 0) > 0
                and not report.get("numRuntimeErrorTestSuites", 0)
            )
        if self.name == "go":
            events = go_events(run.output)
            return not _GO_NOT_BUILT.search(run.output) and any(
                e.get("Action") == "fail" and e.get("Test") for e in events
            )
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
        if self.name in ("vitest", "jest"):
            report = json_report_counts(run.output)
            return report.get("numPassedTests", 0) > 0 and report.get("numFailedTests", 1) == 0
        if self.name == "go":
            events = go_events(run.output)
            passed = any(e.get("Action") == "pass" and e.get("Test") for e in events)
            return passed and not any(e.get("Action") == "fail" for e in events)
        ran = _UNITTEST_RAN.search(run.output)
        return ran is not None and int(ran.group(1)) > 0 and bool(_UNITTEST_OK.search(run.output))


def missing_module(output: str) -> str | None:
    """The module an import failed to find, when that is what the output shows."""
    found = _MISSING_MODULE.search(output)
    return None if found is None else next(g for g in found.groups() if g)


def json_report_counts(output: str) -> dict[str, int]:
    """The top-level counts (``numFailedTests``, ...) of the last vitest or jest JSON report
    in ``output``; empty without one. Read from the report's start, which holds them all,
    so an output cut in the middle still tells."""
    starts = list(_JSON_REPORT.finditer(output))
    if not starts:
        return _jest_summary_counts(output)
    text = output[starts[-1].start() :]
    try:
        report, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        head = text.split('"testResults"', 1)[0]
        return {m.group(1): int(m.group(2)) for m in _JSON_COUNT.finditer(head)}
    if not isinstance(report, dict):
        return {}
    return {k: v for k, v in report.items() if k.startswith("num") and isinstance(v, int)}


def _jest_summary_counts(output: str) -> dict[str, int]:
    """The same counts from the summary jest prints before its JSON (``Tests: 1 failed,
    1 total``), for an output cut where the JSON began; empty without one."""
    lines = _JEST_TESTS.findall(output)
    if not lines:
        return {}
    found = {word: int(n) for n, word in re.findall(r"(\d+) (failed|passed|total)", lines[-1])}
    counts = {
        "numFailedTests": found.get("failed", 0),
        "numPassedTests": found.get("passed", 0),
        "numTotalTests": found.get("total", 0),
    }
    if _JEST_SUITE_ERROR.search(output):
        counts["numRuntimeErrorTestSuites"] = 1
    return counts


def go_events(output: str) -> list[dict[str, object]]:
    """The events of ``go test -json`` in ``output`` (one JSON object a line); lines that are
    not events (the compiler's messages) are skipped."""
    events = []
    for line in output.splitlines():
        if not line.startswith('{"Time":'):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


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
