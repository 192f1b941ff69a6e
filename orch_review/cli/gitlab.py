"""``orch-review gitlab``: review a merge request in GitLab CI and discuss it on the diff."""

from __future__ import annotations

from pathlib import Path

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import (
    EXIT_CODES_HELP,
    fail_on_option,
    model_options,
    overrides,
    walkthrough_option,
)
from orch_review.errors import ExitCode


@click.command(
    epilog=EXIT_CODES_HELP,
    short_help="Review a merge request in GitLab CI and discuss it on the diff.",
)
@fail_on_option("high", why=' (with "Pipelines must succeed", it gates merging)')
@model_options
@click.option("--max-agents", type=int, help="Hard cap on agents started in this review.")
@click.option("--max-cost-usd", type=float, help="Hard cap on estimated cost in USD.")
@click.option(
    "--codequality",
    "codequality_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default="gl-code-quality-report.json",
    show_default=True,
    help="Write the GitLab Code Quality report here (for artifacts:reports:codequality).",
)
@click.option(
    "--json",
    "json_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the JSON report to this file.",
)
@click.option("--no-post", is_flag=True, help="Review and write reports; post nothing.")
@click.option(
    "--from-reports",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Post these shard JSON reports (`--shard K/N --json`), merged, instead of reviewing "
    "(repeatable).",
)
@click.option("--no-progress", is_flag=True, help="Do not show live progress on stderr.")
@walkthrough_option
@handle_errors
def gitlab(
    fail_on: str,
    model: str | None,
    subagent_model: str | None,
    effort: str | None,
    max_agents: int | None,
    max_cost_usd: float | None,
    codequality_file: Path,
    json_file: Path | None,
    no_post: bool,
    from_reports: tuple[Path, ...],
    no_progress: bool,
    no_walkthrough: bool,
) -> ExitCode:
    """Review a merge request in a GitLab CI merge request pipeline and discuss it.

    Reads GitLab CI's predefined variables (CI_API_V4_URL, CI_MERGE_REQUEST_PROJECT_ID,
    CI_MERGE_REQUEST_IID, CI_MERGE_REQUEST_DIFF_BASE_SHA, CI_COMMIT_SHA), reviews the
    latest merge request version's diff, then posts one discussion per finding on its diff
    lines (verified fixes as suggestions) and one summary note, edited in place on re-runs;
    threads whose finding is gone are resolved. Needs GITLAB_TOKEN (a project access token
    with `api` scope) to post; with only CI_JOB_TOKEN, or from a fork, findings go to the job
    log and the Code Quality report.
    """
    from rich.console import Console

    from orch_review.cli.output import print_report_as
    from orch_review.cli.progress import Progress
    from orch_review.core import take_environment
    from orch_review.hosts.gitlab.run import GitLabRun
    from orch_review.hosts.registry import host
    from orch_review.scope.git import open_repo

    env = take_environment()
    repo = open_repo(Path.cwd(), env)
    run = GitLabRun(
        fail_on=fail_on,
        overrides=overrides(
            model=model,
            subagent_model=subagent_model,
            effort=effort,
            max_agents=max_agents,
            max_cost_usd=max_cost_usd,
        ),
        codequality_file=codequality_file,
        json_file=json_file,
        post=not no_post,
        from_reports=from_reports,
        walkthrough=not no_walkthrough,
    )
    with Progress(Console(stderr=True), enabled=not no_progress) as progress:
        code, report = host("gitlab").run_ci(
            repo,
            run,
            env,
            echo=lambda line: click.echo(line, err=True),
            warn=lambda line: click.echo(line, err=True),
            events=progress,
        )
    if report is not None:
        print_report_as(report, "text")
    return code
