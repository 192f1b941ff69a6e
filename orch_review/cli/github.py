"""``orch-review github``: review a pull request in GitHub Actions and comment on it."""

from __future__ import annotations

from pathlib import Path

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import (
    EXIT_CODES_HELP,
    fail_on_option,
    model_options,
    overrides,
    report_files_only_options,
    walkthrough_option,
)
from orch_review.config.choices import COMMENT_MODES, FILTER_MODES, FilterMode
from orch_review.errors import ExitCode
from orch_review.scope.pathspecs import from_cwd


@click.command(
    epilog=EXIT_CODES_HELP, short_help="Review a pull request in GitHub Actions and comment."
)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--comment-mode",
    type=click.Choice(COMMENT_MODES),
    default="review",
    show_default=True,
    help="review: inline comments and a summary comment; summary: the summary comment only; "
    "annotations: workflow-command annotations, no comments; none: post nothing.",
)
@fail_on_option("never")  # the Action comments; blocking a merge is asked for
@model_options
@click.option("--max-agents", type=int, help="Hard cap on agents started in this review.")
@click.option("--max-cost-usd", type=float, help="Hard cap on estimated cost in USD.")
@click.option(
    "--exclude", multiple=True, metavar="GLOB", help="Leave out paths matching GLOB (repeatable)."
)
@click.option(
    "--filter-mode",
    type=click.Choice(FILTER_MODES),
    help="Which findings to report: on added lines (default), in diff hunks, in changed "
    "files, or all.",
)
@report_files_only_options
@click.option(
    "--event",
    "event_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The event payload [default: $GITHUB_EVENT_PATH].",
)
@click.option("--pr", "pr_number", type=int, help="Review this pull request (read from the API).")
@click.option("--repo", "repository", metavar="OWNER/NAME", help="[default: $GITHUB_REPOSITORY]")
@click.option("--no-fetch", is_flag=True, help="Do not fetch missing history of a shallow clone.")
@click.option("--no-progress", is_flag=True, help="Do not show live progress on stderr.")
@walkthrough_option
@click.option(
    "--from-reports",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Post these shard JSON reports (`--shard K/N --json`), merged, instead of reviewing "
    "(repeatable).",
)
@click.option(
    "--conversation-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep the review's conversation and findings in this file, for runs started by "
    "comments on the pull request (the Action uploads it as an artifact).",
)
@handle_errors
def github(
    paths: tuple[str, ...],
    comment_mode: str,
    fail_on: str,
    model: str | None,
    subagent_model: str | None,
    effort: str | None,
    max_agents: int | None,
    max_cost_usd: float | None,
    exclude: tuple[str, ...],
    filter_mode: FilterMode | None,
    json_file: Path | None,
    sarif_file: Path | None,
    event_path: Path | None,
    pr_number: int | None,
    repository: str | None,
    no_fetch: bool,
    no_progress: bool,
    no_walkthrough: bool,
    from_reports: tuple[Path, ...],
    conversation_file: Path | None,
) -> ExitCode:
    """Review a pull request in GitHub Actions and comment on it.

    Reads the pull request from $GITHUB_EVENT_PATH (or --pr with --repo), reviews its head
    against the merge-base with its base (the same review as --base BASE --head HEAD), then
    posts inline comments on diff lines and one summary comment, edited in place on re-runs.
    A token that may not comment (pull requests from forks) falls back to annotations and
    the job summary. Needs GITHUB_TOKEN; writes $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY.

    Started by a comment (issue_comment, pull_request_review_comment) that mentions the
    trigger (@orch-review), it answers in the same place instead: a follow-up to the last
    review, for people with write access only.
    """
    from typing import cast

    from orch_review.cli.consoles import console
    from orch_review.cli.progress import Progress
    from orch_review.core import take_environment
    from orch_review.hosts.github.publish import CommentMode
    from orch_review.hosts.github.run import GitHubRun
    from orch_review.hosts.registry import host
    from orch_review.scope.git import open_repo, work_tree

    _refuse_reports_on_stdout(json_file, sarif_file)
    env = take_environment()
    repo = open_repo(Path.cwd(), env)
    run = GitHubRun(
        comment_mode=cast(CommentMode, comment_mode),
        fail_on=fail_on,
        pathspecs=from_cwd(paths, Path.cwd(), work_tree(repo)),
        exclude=exclude,
        overrides=overrides(
            model=model,
            subagent_model=subagent_model,
            effort=effort,
            max_agents=max_agents,
            max_cost_usd=max_cost_usd,
        ),
        filter_mode=filter_mode,
        sarif_file=sarif_file,
        json_file=json_file,
        event_path=event_path,
        pr_number=pr_number,
        repository=repository,
        fetch=not no_fetch,
        from_reports=from_reports,
        conversation_file=conversation_file,
        walkthrough=not no_walkthrough,
    )
    with Progress(console(stderr=True), enabled=not no_progress) as progress:
        code, _ = host("github").run_ci(
            repo,
            run,
            env,
            echo=click.echo,
            warn=lambda line: click.echo(line, err=True),
            events=progress,
        )
    return code


def _refuse_reports_on_stdout(json_file: Path | None, sarif_file: Path | None) -> None:
    """A UsageError for ``--json -`` or ``--sarif -``: stdout carries the annotations."""
    from orch_review.errors import UsageError

    for flag, value in (("--json", json_file), ("--sarif", sarif_file)):
        if value is not None and str(value) == "-":
            raise UsageError(
                f"{flag} -: `orch-review github` prints annotations on stdout; write the "
                "report to a file."
            )
