"""``orch-review pr N`` and ``orch-review mr N``: review a pull or merge request locally."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import (
    EXIT_CODES_HELP,
    config_option,
    fail_on_option,
    format_option,
    model_options,
    option_group,
    overrides,
    report_file_options,
    walkthrough_option,
)
from orch_review.errors import ExitCode

_request_options = option_group(
    click.argument("number", type=click.IntRange(min=1)),
    click.option("--post", is_flag=True, help="Also post the results on the request, as CI would."),
    walkthrough_option,
    model_options,
    fail_on_option(),
    click.option("--max-agents", type=int, help="Hard cap on agents started in this review."),
    click.option("--max-cost-usd", type=float, help="Hard cap on estimated cost in USD."),
    click.option(
        "--exclude",
        multiple=True,
        metavar="GLOB",
        help="Leave out paths matching GLOB (repeatable; adds to config).",
    ),
    report_file_options,
    format_option,
    config_option,
    click.option("-q", "--quiet", is_flag=True, help="Print only the findings."),
    click.option("--no-progress", is_flag=True, help="Do not show live progress on stderr."),
)


def _run(command: str, repository: str | None, flags: dict[str, Any]) -> ExitCode:
    from orch_review import core
    from orch_review.cli.consoles import console
    from orch_review.cli.options import warn
    from orch_review.cli.output import check_stdout, print_report_as
    from orch_review.cli.progress import Progress
    from orch_review.cli.stdout import check_stdout_open
    from orch_review.hosts.local import LocalRequest
    from orch_review.hosts.registry import by_local_command
    from orch_review.reporters.files import report_files
    from orch_review.scope.git import open_repo

    json_file, sarif_file = flags["json_file"], flags["sarif_file"]
    output_format, quiet = flags["output_format"], flags["quiet"]
    options = core.ReviewOptions(
        exclude=flags["exclude"],
        settings=overrides(
            model=flags["model"],
            subagent_model=flags["subagent_model"],
            effort=flags["effort"],
            fail_on=flags["fail_on"],
            max_agents=flags["max_agents"],
            max_cost_usd=flags["max_cost_usd"],
        ),
        json_file=json_file,
        sarif_file=sarif_file,
        config_file=flags["config_file"],
    )
    stdout_taken = check_stdout(report_files(json_file, sarif_file), output_format)
    check_stdout_open(report_files(json_file, sarif_file), output_format, quiet)
    env = core.take_environment()
    repo = open_repo(Path.cwd(), env)
    request = LocalRequest(
        flags["number"],
        repository,
        post=flags["post"],
        walkthrough=not flags["no_walkthrough"],
        options=options,
    )
    with Progress(console(stderr=True), enabled=not flags["no_progress"] and not quiet) as shown:
        done = by_local_command(command).review_local(repo, request, env, events=shown, warn=warn)
    print_report_as(done.report, output_format, quiet=quiet, stdout_taken=stdout_taken)
    if done.posted is not None:
        click.echo(done.posted, err=True)
    return done.report.exit_code(done.prepared.config.fail_on)


@click.command(epilog=EXIT_CODES_HELP, short_help="Review GitHub pull request N from this clone.")
@_request_options
@click.option(
    "--repo",
    "repository",
    metavar="OWNER/NAME",
    help="The repository [from the `origin` remote's URL].",
)
@handle_errors
def pr(repository: str | None, **flags: Any) -> ExitCode:
    """Review GitHub pull request NUMBER from this clone, and print the result.

    Reads the pull request through the API (GITHUB_TOKEN or GH_TOKEN; GITHUB_API_URL for
    GitHub Enterprise Server), fetches its head from `origin` (refs/pull/NUMBER/head) without
    checking anything out, and reviews it as --base BASE --head HEAD, with its title,
    description and linked issues for the intent check. With --post, also posts inline
    comments and the summary comment, as `orch-review github` does.
    """
    return _run("pr", repository, flags)


@click.command(epilog=EXIT_CODES_HELP, short_help="Review GitLab merge request N from this clone.")
@_request_options
@click.option(
    "--repo",
    "repository",
    metavar="GROUP/NAME",
    help="The project's path [from the `origin` remote's URL].",
)
@handle_errors
def mr(repository: str | None, **flags: Any) -> ExitCode:
    """Review GitLab merge request NUMBER from this clone, and print the result.

    Reads the merge request through the API (GITLAB_TOKEN; CI_API_V4_URL for a self-managed
    instance [https://gitlab.com/api/v4]), fetches its head from `origin`
    (refs/merge-requests/NUMBER/head) without checking anything out, and reviews it against
    the base of its latest diff version, with its title, description and linked issues for
    the intent check. With --post, also posts diff discussions and the summary note, as
    `orch-review gitlab` does.
    """
    return _run("mr", repository, flags)
