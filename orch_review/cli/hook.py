"""``orch-review hook``: the entry of the pre-commit hook."""

from __future__ import annotations

from pathlib import Path

import click

from orch_review.cli.exits import handle_errors, say
from orch_review.cli.options import EXIT_CODES_HELP, fail_on_option, overrides
from orch_review.errors import ExitCode


@click.command(
    context_settings={"ignore_unknown_options": True},
    epilog=EXIT_CODES_HELP,
    short_help="The pre-commit hook: review what is about to be committed.",
)
@click.argument("files", nargs=-1, type=click.UNPROCESSED)
@fail_on_option(verb="Block")
@click.option(
    "--require-key", is_flag=True, help="Fail (exit 2) instead of skipping when no API key is set."
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Print the full report, not one line per finding."
)
@click.option("--max-cost-usd", type=float, help="Hard cap on estimated cost in USD.")
@handle_errors
def hook(
    files: tuple[str, ...],
    fail_on: str | None,
    require_key: bool,
    verbose: bool,
    max_cost_usd: float | None,
) -> ExitCode:
    """Review what is about to be committed: the entry of the pre-commit hook.

    FILES are the staged files pre-commit passes; the staged change is reviewed once,
    narrowed to them. In the pre-push stage the pushed commits are reviewed instead.
    """
    from rich.console import Console

    from orch_review import core
    from orch_review.cli.progress import Progress
    from orch_review.engine.client import has_credentials
    from orch_review.hook import HookRequest, missing_key
    from orch_review.reporters.terminal import print_report, render_compact
    from orch_review.scope.resolve import NothingToReview

    env = core.take_environment()
    settings = overrides(fail_on=fail_on, max_cost_usd=max_cost_usd)
    try:
        prepared = core.prepare(Path.cwd(), HookRequest.from_env(files, env).options(settings), env)
    except NothingToReview:
        return ExitCode.CLEAN  # nothing reviewable staged: no API call, no key needed
    if not has_credentials(env, prepared.config.provider):
        line, code = missing_key(require_key or prepared.config.require_key)
        say(line)
        return code
    with Progress(Console(stderr=True), enabled=verbose) as progress:
        report = core.run(prepared, events=progress)
    if verbose:
        print_report(report, Console(), verbose=True)
    else:
        click.echo(render_compact(report), nl=False)
    return report.exit_code(prepared.config.fail_on)
