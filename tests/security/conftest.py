"""The attack suite's summary table, printed at the end of the test session."""

from __future__ import annotations

import pytest

from tests.security.verdicts import RESULTS, render_table


def pytest_configure(config: pytest.Config) -> None:
    config.stash[RESULTS] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    verdicts = terminalreporter.config.stash.get(RESULTS, [])
    if not verdicts:
        return
    terminalreporter.section("sandbox attack suite: attack -> contained?")
    for line in render_table(verdicts):
        terminalreporter.write_line(line)
