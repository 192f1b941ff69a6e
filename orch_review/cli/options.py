"""Flags shared by several commands, declared once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from orch_review.config.choices import EFFORTS, FAIL_ON_LEVELS

if TYPE_CHECKING:
    from orch_review.scope.stated_intent import Intent

EXIT_CODES_HELP = """\b
Exit codes:
  0  no confirmed finding at or above --fail-on
  1  confirmed findings at or above --fail-on
  2  usage or configuration error
  3  review incomplete (API failure, budget cap, agent failure)
  4  internal error (a crash log is written)
  129 hung up (SIGHUP), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM):
  run again to resume"""

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def option_group(*decorators: Decorator) -> Decorator:
    """Several click options applied as one decorator, in the order listed (for --help)."""

    def apply(fn: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            fn = decorator(fn)
        return fn

    return apply


# The flags that choose what is reviewed, shared by `review` and `plan`.
scope_options = option_group(
    click.argument("paths", nargs=-1, type=click.Path()),
    click.option(
        "--staged",
        is_flag=True,
        help="Review the index: exactly what `git commit` would record.",
    ),
    click.option(
        "--base",
        "base",
        metavar="REF",
        help="Compare with the merge-base of REF and HEAD (config is read from REF).",
    ),
    click.option(
        "--head",
        "head",
        metavar="REF",
        help="With --base: review the committed content of REF (a pull request).",
    ),
    click.option(
        "--all", "review_all", is_flag=True, help="Review every tracked file (a full audit)."
    ),
    click.option(
        "--exclude",
        multiple=True,
        metavar="GLOB",
        help="Leave out paths matching GLOB (repeatable; adds to config).",
    ),
)

# --model, --subagent-model and --effort, shared by the commands that review.
model_options = option_group(
    click.option("--model", help="Model for the main agent [claude-opus-5-5]."),
    click.option("--subagent-model", help="Model for subagents and verifiers [--model]."),
    click.option(
        "--effort", type=click.Choice(EFFORTS), help="Effort level on every request [xhigh]."
    ),
)


# --json FILE and --sarif FILE, the report files `review`, `merge` and `github` can write.
def _report_file_options(stdout: bool) -> Decorator:
    dash = "; - for stdout" if stdout else ""
    return option_group(
        click.option(
            "--json",
            "json_file",
            type=click.Path(dir_okay=False, path_type=Path),
            help=f"Also write the JSON report to this file (its folder is created{dash}).",
        ),
        click.option(
            "--sarif",
            "sarif_file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Also write a SARIF 2.1.0 report (for code scanning) to this file"
            + (" (- for stdout)." if stdout else "."),
        ),
    )


report_file_options = _report_file_options(stdout=True)
# `github` prints annotations on stdout: its reports go to files only.
report_files_only_options = _report_file_options(stdout=False)


# --config FILE, for the commands that read the configuration.
config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read settings from this file instead of the repository's .orch-review.toml or "
    "pyproject.toml (a pyproject.toml's [tool.orch-review] table; any other file is the "
    "table itself).",
)


# --no-walkthrough, for the commands that post a summary comment.
walkthrough_option = click.option(
    "--no-walkthrough",
    is_flag=True,
    help="Leave the walkthrough (a line per changed file, a Mermaid diagram: unverified "
    "description) out of the summary comment.",
)


def read_intent(where: str) -> Intent:
    """The task description of ``--intent FILE`` (``-``: stdin), bounded in size."""
    import sys

    from orch_review.errors import UsageError
    from orch_review.scope.stated_intent import DESCRIPTION_LIMIT, from_text

    limit = DESCRIPTION_LIMIT * 4  # bytes: the text is cut to its limit in characters after
    try:
        if where == "-":
            data = sys.stdin.buffer.read(limit)
        else:
            with open(where, "rb") as handle:
                data = handle.read(limit)
    except OSError as exc:
        raise UsageError(
            f"--intent {where}: {exc.strerror or exc}; give a readable file, or - for stdin."
        ) from None
    return from_text(data.decode("utf-8", "replace"))


def warn(message: str) -> None:
    """A warning on stderr about configuration that is ignored."""
    from orch_review.cli.exits import say

    say(f"orch-review: warning: {message}")


# --format, for the commands that print a report.
format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "sarif", "github", "gitlab", "rdjson", "junit", "markdown"]),
    default="text",
    show_default=True,
    help="What to print on stdout (github: workflow-command annotations; gitlab: a Code "
    "Quality report; rdjson: reviewdog's format; junit: a test report; markdown: compact "
    "findings to paste into a coding agent or a chat).",
)


def fail_on_option(
    default: str | None = None, *, verb: str = "Exit 1", why: str = "", text: str | None = None
) -> Decorator:
    """``--fail-on``: the lowest severity of a confirmed finding that fails the command, the
    one definition every command's flag comes from (``why`` ends its help; ``text``, when
    given, is the whole help).

    Without ``default`` the flag overrides the configuration's ``fail-on`` (``high`` unless
    set); with one, the command reads no configuration and the flag's default is its own.
    """
    shown = " [high]" if default is None else ""
    return click.option(
        "--fail-on",
        type=click.Choice(FAIL_ON_LEVELS),
        default=default,
        show_default=default is not None,
        help=text or f"{verb} at this severity or above{why}{shown}.",
    )


def overrides(**flags: Any) -> dict[str, object]:
    """The configuration keys a command's flags set (flags left out are not overrides)."""
    return {name: value for name, value in flags.items() if value is not None}
