"""Fixtures of the attack suites (their summary tables are printed by tests/conftest.py)."""

from __future__ import annotations

# The fake GitHub API and a pull request, for the attacks through the `github` command.
from tests.hosts.github.conftest import (  # noqa: F401
    actions_env,
    github_api,
    opened_env,
    pull_repo,
)
