"""``orch-review hook``: the entry of the pre-commit hook."""

from __future__ import annotations

from pathlib import Path

import click

from orch_review.cli.exits import handle_errors, say
from orch_review.cli.options import EXIT_CODES_HELP, fail_on_option, overrides, warn
from orch_review.errors import ExitCode


@click.command(
    context_settings={"ignore_unknown_options": True},
    epilog=EXIT_CODES_HELP,
    short_help="The pre-commit hook: review what is about to be committed.",
)
@click.argument("files", nargs=-1, type=click.UNPROCESSED)
@fail_on_option(verb="Block")
@click.option(
    "--require-key/--no-require-key",
    default=None,
    help="With no API key, fail (exit 2, the default) or pass with one line saying the "
    "review was skipped.",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Print the full report, not one line per finding."
)
@click.option("--max-cost-usd", type=float, help="Hard cap on estimated cost in USD.")
@handle_errors
def hook(
    files: tuple[str, ...],
    fail_on: str | None,
    require_key: bool | None,
    verbose: bool,
    max_cost_usd: float | None,
) -> ExitCode:
    """Review what is about to be committed: the entry of the pre-commit hook.

    FILES are the staged files pre-commit passes; the staged change is reviewed once,
    narrowed to them. In the pre-push stage the pushed commits are reviewed instead.
    """
    from orch_review import core
    from orch_review.cli.consoles import console
    from orch_review.cli.progress import Progress
    from orch_review.hook import HookRequest, missing_key
    from orch_review.reporters.terminal import print_report, render_compact
    from orch_review.scope.resolve import NothingToReview

    env = core.take_environment()
    if files and _only_git_files(files, env):
        # The commit message of a commit-msg or prepare-commit-msg stage (the manifest names
        # no stage, for pre-commit older than 3.2): nothing to review at this stage.
        return ExitCode.CLEAN
    settings = overrides(fail_on=fail_on, max_cost_usd=max_cost_usd, require_key=require_key)
    try:
        request = HookRequest.from_env(files, env).options(settings)
        prepared = core.prepare(Path.cwd(), request, env, warn=warn)
    except NothingToReview:
        return ExitCode.CLEAN  # nothing reviewable staged: no API call, no key needed
    if not prepared.scope.files:  # every staged file skipped (binary, excluded, ...): the same
        return ExitCode.CLEAN
    if not core.has_credentials(env, prepared.config.provider):
        line, code = missing_key(prepared.config.require_key, prepared.config.provider)
        say(line)
        return code
    with Progress(console(stderr=True), enabled=verbose) as progress:
        report = core.run(prepared, events=progress)
    if verbose:
        print_report(report, console(), verbose=True)
    else:
        click.echo(render_compact(report), nl=False)
    return report.exit_code(prepared.config.fail_on)


def _only_git_files(files: tuple[str, ...], env: dict[str, str]) -> bool:
    """True when every file pre-commit passed lies in the repository's git directory (the
    message file of the commit-msg stages), so none is content being committed."""
    from orch_review.scope.git import open_repo

    repo = open_repo(Path.cwd(), env)
    inside = [Path(repo.git_dir).resolve(), Path(repo.common_dir).resolve()]
    return all(any(Path(f).resolve().is_relative_to(d) for d in inside) for f in files)
