"""CI log commands in the report files: a hijacked model writes a claim, evidence and a
suggestion whose lines are GitHub workflow commands (``::stop-commands::``, ``::add-mask::``,
``::error``), legacy ``##[...]`` commands and GitLab's section markers. Wherever a report file
is printed to a CI log (``cat report.xml`` in a job), none of its lines may start one."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from orch_review.reporters import registry
from tests.reporters.sample import sample_report

HOSTILE = (
    "looks fine\n::stop-commands::pwned\n  ::add-mask::secret\n"
    "::error file=app.py::fake\n\t::warning::x\nsection_start:1:fake\r\n##[error]legacy"
)
# What GitHub's runner and GitLab's job log read as a command at a line's start (blanks
# before it aside).
_COMMAND = re.compile(r"^[ \t]*(?:::|section_start:|section_end:)")
# The workflow-command format is itself commands: its own lines are the point of it.
_OWN_COMMANDS = {"github"}


def _hostile_report():  # type: ignore[no-untyped-def]
    report = sample_report()
    first = replace(report.confirmed[0], claim=HOSTILE, evidence=HOSTILE, suggestion=HOSTILE)
    return replace(
        report, findings=tuple(first if f is report.confirmed[0] else f for f in report.findings)
    )


@pytest.mark.parametrize("name", sorted(registry()))
def test_no_report_line_starts_a_ci_command(name: str) -> None:
    out = registry()[name](_hostile_report())

    lines = out.splitlines()
    if name in _OWN_COMMANDS:
        # Each annotation is one command line; the hostile text stays inside its message.
        assert all(line.startswith("::") for line in lines)
        lines = [line.split("::", 2)[2] for line in lines]
    assert not [line for line in lines if _COMMAND.search(line)], out
