"""The consoles orch-review prints through: stdout and stderr, each wrapped so that nothing
rich lays out (wrapped report text, table cells, live progress) starts a CI runner command
at the start of a physical line (see :class:`orch_review.sanitize.CommandSafeStream`).

Every command builds its consoles here, in a CI log or not: a report printed inside a
container step, or through ``script`` in a pseudo-terminal, reaches the runner's log all the
same.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import IO, cast

from rich.console import Console

from orch_review.sanitize import CommandSafeStream

#: Set by GitHub Actions, GitLab CI and most other CI services.
_CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "TF_BUILD", "JENKINS_URL")


def console(*, stderr: bool = False) -> Console:
    """A console on stdout (or stderr) whose every output line is defused."""
    stream = CommandSafeStream(sys.stderr if stderr else sys.stdout)
    return Console(file=cast(IO[str], stream))  # rich needs write, flush, isatty, encoding


def in_ci(env: Mapping[str, str]) -> bool:
    """Whether ``env`` is a CI job's: its output goes to a log, not to a person."""
    return any(env.get(name) for name in _CI_VARIABLES)


def shows_links(console: Console, env: Mapping[str, str]) -> bool:
    """Whether ``console`` is a real terminal, outside CI, that may get OSC 8 links: not a
    pipe or a file (even with FORCE_COLOR or TTY_COMPATIBLE), not a dumb terminal."""
    try:
        real = console.file.isatty()
    except (AttributeError, ValueError):
        return False
    return real and console.is_terminal and not console.is_dumb_terminal and not in_ci(env)
