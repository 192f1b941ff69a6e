"""The attack suites' summary tables, printed at the end of the test session."""

from __future__ import annotations

import pytest

# The fake GitHub API and a pull request, for the attacks through the `github` command.
from tests.github.conftest import (  # noqa: F401
    actions_env,
    github_api,
    opened_env,
    pull_repo,
)
from tests.security.verdicts import HOST_RESULTS, RESULTS, render_host_table, render_table


def pytest_configure(config: pytest.Config) -> None:
    config.stash[RESULTS] = []
    config.stash[HOST_RESULTS] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    verdicts = terminalreporter.config.stash.get(RESULTS, [])
    if verdicts:
        terminalreporter.section("sandbox attack suite: attack -> contained?")
        for line in render_table(verdicts):
            terminalreporter.write_line(line)
    host = terminalreporter.config.stash.get(HOST_RESULTS, [])
    if host:
        terminalreporter.section("host attack suite: attack -> contained?")
        for line in render_host_table(sorted(host, key=lambda v: v.attack)):
            terminalreporter.write_line(line)
