"""The command line: a thin click layer over the core in :mod:`orch_review.engine.review`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from orch_review import __version__
from orch_review.cli.exits import handle_errors
from orch_review.config.choices import EFFORTS, FAIL_ON_LEVELS, FILTER_MODES, SANDBOX_MODES
from orch_review.scope.pathspecs import from_cwd

if TYPE_CHECKING:
    import git

    from orch_review.config.choices import FilterMode
    from orch_review.config.settings import Config
    from orch_review.scope.resolve import Scope, ScopeRequest


EXIT_CODES_HELP = """\b
Exit codes:
  0  no confirmed finding at or above --fail-on
  1  confirmed findings at or above --fail-on
  2  usage or configuration error
  3  review incomplete (API failure, budget cap, agent failure)
  4  internal error (a crash log is written)
  130 interrupted (Ctrl-C), 143 terminated (SIGTERM): run again to resume"""


class DefaultGroup(click.Group):
    """A group that runs ``review`` when the first argument is not a subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (
            args[0] not in self.commands and args[0] not in {"--help", "-h", "--version"}
        ):
            args = ["review", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="orch-review")
def main() -> None:
    """Review code with Claude the way a careful senior team would.

    orch-review scouts the change, splits it into concerns, reviews each concern with a
    parallel agent, has a second agent try to refute every finding, and reports only what
    survives, ranked by severity.

    \b
    Examples:
      orch-review                       review your branch's changes (committed or not)
      orch-review --staged              review exactly what `git commit` would record
      orch-review --base origin/main --head HEAD    review a pull request
      orch-review --all src/            audit every file under src/
      orch-review plan                  show what would be reviewed, without any API call
      orch-review ask "why is 1 a bug?" a follow-up question about the last review
      orch-review journal stats         what the resume journal holds

    Needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL pointing at a compatible server).
    Settings come from [tool.orch-review] in pyproject.toml or .orch-review.toml,
    then ORCH_REVIEW_* environment variables, then flags.
    """


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


def _scope_request(
    paths: tuple[str, ...],
    staged: bool,
    base: str | None,
    head: str | None,
    review_all: bool,
    root: Path,
) -> ScopeRequest:
    from orch_review.scope.resolve import ScopeRequest

    flags = (("--staged", staged), ("--base", base), ("--all", review_all))
    chosen = [name for name, on in flags if on]
    if len(chosen) > 1:
        raise click.UsageError(f"{' and '.join(chosen)} cannot be combined: choose one scope.")
    if head is not None and base is None:
        raise click.UsageError("--head needs --base (the branch the change will merge into).")
    pathspecs = from_cwd(paths, Path.cwd(), root)
    if staged:
        return ScopeRequest("staged", pathspecs=pathspecs)
    if review_all:
        return ScopeRequest("all", pathspecs=pathspecs)
    if base is not None:
        return ScopeRequest("base" if head else "change", base=base, head=head, pathspecs=pathspecs)
    return ScopeRequest("change", pathspecs=pathspecs)


def _prepare(
    paths: tuple[str, ...],
    staged: bool,
    base: str | None,
    head: str | None,
    review_all: bool,
    exclude: tuple[str, ...],
    overrides: dict[str, object],
) -> tuple[git.Repo, Config, Scope, dict[str, str]]:
    from orch_review.config.from_revision import settings_and_scope
    from orch_review.scope.git import open_repo, work_tree

    env = _take_environment()
    repo = open_repo(Path.cwd(), env)
    request = _scope_request(paths, staged, base, head, review_all, work_tree(repo))
    config, scope = settings_and_scope(repo, request, env, overrides, exclude)
    return repo, config, scope, env


# Rows of each table `plan` prints for people: a 100,000-file audit is for --json.
PLAN_ROWS = 1000
SECRET_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")


def _take_environment() -> dict[str, str]:
    """The environment, for the core to read; the secrets in it are then removed from this
    process's own environment, so no child process (git, an agent's shell) inherits them."""
    env = dict(os.environ)
    for name in SECRET_VARIABLES:
        os.environ.pop(name, None)
    return env


# --model, --subagent-model and --effort, shared by the commands that review.
model_options = option_group(
    click.option("--model", help="Model for the main agent [default: claude-opus-5-5]."),
    click.option("--subagent-model", help="Model for subagents and verifiers [default: --model]."),
    click.option(
        "--effort", type=click.Choice(EFFORTS), help="Effort level on every request [xhigh]."
    ),
)

# --json FILE and --sarif FILE, the report files `review` and `github` can write.
report_file_options = option_group(
    click.option(
        "--json",
        "json_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Also write the JSON report to this file.",
    ),
    click.option(
        "--sarif",
        "sarif_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Also write a SARIF 2.1.0 report (for code scanning) to this file.",
    ),
)


def _overrides(**flags: Any) -> dict[str, object]:
    return {name: value for name, value in flags.items() if value is not None}


@main.command(epilog=EXIT_CODES_HELP)
@scope_options
@model_options
@click.option(
    "--fail-on", type=click.Choice(FAIL_ON_LEVELS), help="Exit 1 at this severity or above [high]."
)
@click.option("--max-concurrent", type=int, help="Agents running at once [10].")
@click.option("--max-agents", type=int, help="Hard cap on agents started in this review.")
@click.option("--max-total-tokens", type=int, help="Hard cap on tokens used in this review.")
@click.option("--max-cost-usd", type=float, help="Hard cap on estimated cost in USD.")
@click.option(
    "--journal",
    "journal_path",
    type=click.Path(path_type=Path),
    help="Journal file [default: .git/orch-review/journal.sqlite3].",
)
@click.option("--no-journal", is_flag=True, help="Neither reuse nor store agent results.")
@click.option(
    "--sandbox",
    type=click.Choice(SANDBOX_MODES),
    help="Run agents' commands under bubblewrap: auto falls back with a warning, on "
    "refuses to run without it [auto].",
)
@click.option(
    "--bwrap-path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The bwrap executable to use [found on PATH].",
)
@report_file_options
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "sarif", "github"]),
    default="text",
    show_default=True,
    help="What to print on stdout (github: workflow-command annotations).",
)
@click.option(
    "--critic/--no-critic",
    default=None,
    help="Run the completeness critic after the first wave [on for --all and large changes].",
)
@click.option(
    "--filter-mode",
    type=click.Choice(FILTER_MODES),
    help="Which findings to report: on added lines, in diff hunks, in changed files, "
    "or all [added; nofilter for --all].",
)
@click.option(
    "--baseline",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A previous JSON report: findings already in it are suppressed.",
)
@click.option(
    "--shard",
    metavar="K/N",
    help="Review shard K of N: a deterministic, size-balanced 1/N of the files (for a CI "
    "matrix; combine the JSON reports with `orch-review merge`).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the findings.")
@click.option(
    "-v", "--verbose", is_flag=True, help="Also print refuted findings and their verdicts."
)
@click.option("--no-progress", is_flag=True, help="Do not show live progress on stderr.")
@handle_errors
def review(
    paths: tuple[str, ...],
    staged: bool,
    base: str | None,
    head: str | None,
    review_all: bool,
    exclude: tuple[str, ...],
    model: str | None,
    subagent_model: str | None,
    effort: str | None,
    fail_on: str | None,
    max_concurrent: int | None,
    max_agents: int | None,
    max_total_tokens: int | None,
    max_cost_usd: float | None,
    journal_path: Path | None,
    no_journal: bool,
    sandbox: str | None,
    bwrap_path: Path | None,
    json_file: Path | None,
    sarif_file: Path | None,
    output_format: str,
    critic: bool | None,
    filter_mode: FilterMode | None,
    baseline: Path | None,
    shard: str | None,
    quiet: bool,
    verbose: bool,
    no_progress: bool,
) -> None:
    """Review code and print verified findings, most severe first.

    By default the change on your branch is reviewed: committed and uncommitted changes
    (and new untracked files) against the merge-base with the default branch. PATHS narrow
    any scope to these files or directories (git pathspecs).
    """
    from rich.console import Console

    from orch_review.cli.progress import Progress
    from orch_review.engine.review import ReportOptions
    from orch_review.engine.review import review as run_review
    from orch_review.findings.triage import load_baseline

    overrides = _overrides(
        model=model,
        subagent_model=subagent_model,
        effort=effort,
        fail_on=fail_on,
        max_concurrent=max_concurrent,
        max_agents=max_agents,
        max_total_tokens=max_total_tokens,
        max_cost_usd=max_cost_usd,
        journal_path=journal_path.resolve() if journal_path else None,
        journal=False if no_journal else None,
        sandbox=sandbox,
        bwrap_path=bwrap_path.resolve() if bwrap_path else None,
        filter_mode=filter_mode,
        critic=critic,
    )
    _, config, scope, env = _prepare(paths, staged, base, head, review_all, exclude, overrides)
    if shard is not None:
        from orch_review.scope.shard import parse_shard, shard_scope

        scope = shard_scope(scope, parse_shard(shard))
    options = ReportOptions(
        filter_mode=config.filter_mode,
        baseline=load_baseline(baseline) if baseline is not None else frozenset(),
    )
    stderr = Console(stderr=True)
    with Progress(stderr, enabled=not no_progress and not quiet) as progress:
        report = run_review(
            config,
            scope,
            env,
            events=progress,
            options=options,
            notices=lambda text: stderr.print(text, style="bold yellow", highlight=False),
        )
    _emit(report, json_file, sarif_file, output_format, quiet=quiet, verbose=verbose)
    sys.exit(int(report.exit_code(config.fail_on)))


def _emit(
    report: Any,
    json_file: Path | None,
    sarif_file: Path | None,
    output_format: str,
    *,
    quiet: bool = False,
    verbose: bool = False,
) -> None:
    """Write the report files asked for and print the report in ``output_format``."""
    from rich.console import Console

    from orch_review.reporters import registry
    from orch_review.reporters.terminal import print_report

    renderers = registry()
    for path, name in ((json_file, "json"), (sarif_file, "sarif")):
        if path is not None:
            path.write_text(renderers[name](report), encoding="utf-8")
    if output_format == "text":
        print_report(report, Console(), quiet=quiet, verbose=verbose)
    else:
        click.echo(renderers[output_format](report), nl=False)


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("reports", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON_LEVELS),
    default="high",
    show_default=True,
    help="Exit 1 at this severity or above.",
)
@report_file_options
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "sarif", "github"]),
    default="text",
    show_default=True,
    help="What to print on stdout (github: workflow-command annotations).",
)
@handle_errors
def merge(
    reports: tuple[Path, ...],
    fail_on: str,
    json_file: Path | None,
    sarif_file: Path | None,
    output_format: str,
) -> None:
    """Combine the JSON reports of `--shard K/N` reviews into one report.

    Coverage is summed, duplicate findings merged by fingerprint; a shard whose report is
    missing or unreadable makes the result incomplete (exit 3).
    """
    from orch_review.errors import ConfigError
    from orch_review.findings.merge import merge_files

    try:
        report = merge_files(list(reports))
    except ValueError as exc:
        raise ConfigError(f"orch-review merge: {exc}") from None
    _emit(report, json_file, sarif_file, output_format)
    sys.exit(int(report.exit_code(fail_on)))


@main.command()
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (every file).")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=PLAN_ROWS,
    show_default=True,
    metavar="N",
    help="List at most N files to review, and N skipped ones (0: all).",
)
@click.option(
    "--count-tokens",
    is_flag=True,
    help="Count the prompt's tokens with the API (needs a key) instead of estimating.",
)
@handle_errors
def plan(
    paths: tuple[str, ...],
    staged: bool,
    base: str | None,
    head: str | None,
    review_all: bool,
    exclude: tuple[str, ...],
    as_json: bool,
    limit: int,
    count_tokens: bool,
) -> None:
    """Show what a review would cover, without calling the API.

    Prints the scope, the files to review with their changed lines, the skipped files with
    the reason for each, and an estimate of the first prompt's size. Takes the same scope
    flags as the review.
    """
    import json

    from rich.console import Console

    from orch_review.scope.plan import plan_data, print_plan

    _, config, scope, env = _prepare(paths, staged, base, head, review_all, exclude, {})
    counted = _count_tokens(config, scope, env) if count_tokens else None
    data = plan_data(scope, counted)
    if as_json:
        # Compact: the C encoder is an order of magnitude faster on a 100,000-file plan.
        click.echo(json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
    else:
        print_plan(data, Console(), limit=limit or None)


def _count_tokens(config: Config, scope: Scope, env: dict[str, str]) -> int:
    from orch_review.engine.opening import new_client
    from orch_review.engine.prompts import MAIN_SYSTEM
    from orch_review.scope.prescout import task_text

    client = new_client(config, env)
    try:
        return client.count_tokens(
            model=config.model,
            system=MAIN_SYSTEM,
            messages=[{"role": "user", "content": task_text(scope)}],
        )
    finally:
        client.close()


@main.command(context_settings={"ignore_unknown_options": True}, epilog=EXIT_CODES_HELP)
@click.argument("files", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--fail-on", type=click.Choice(FAIL_ON_LEVELS), help="Block at this severity or above [high]."
)
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
) -> None:
    """Review what is about to be committed: the entry of the pre-commit hook.

    FILES are the staged files pre-commit passes; the staged change is reviewed once,
    narrowed to them. In the pre-push stage the pushed commits are reviewed instead.
    """
    from rich.console import Console

    from orch_review.cli.progress import Progress
    from orch_review.config.from_revision import settings_and_scope
    from orch_review.engine.client import has_credentials
    from orch_review.engine.review import review as run_review
    from orch_review.hook import HookRequest, missing_key
    from orch_review.reporters.terminal import print_report, render_compact
    from orch_review.scope.git import open_repo
    from orch_review.scope.resolve import NothingToReview

    env = _take_environment()
    repo = open_repo(Path.cwd(), env)
    request = HookRequest.from_env(files, env).scope_request()
    try:
        config, scope = settings_and_scope(
            repo, request, env, _overrides(fail_on=fail_on, max_cost_usd=max_cost_usd)
        )
    except NothingToReview:
        sys.exit(0)  # nothing reviewable staged: no API call, no key needed
    if not has_credentials(env):
        line, code = missing_key(require_key or config.require_key)
        click.echo(line, err=True)
        sys.exit(int(code))
    with Progress(Console(stderr=True), enabled=verbose) as progress:
        report = run_review(config, scope, env, events=progress)
    if verbose:
        print_report(report, Console(), verbose=True)
    else:
        click.echo(render_compact(report), nl=False)
    sys.exit(int(report.exit_code(config.fail_on)))


def _follow_up() -> Any:
    from rich.console import Console

    from orch_review.config.settings import load_config
    from orch_review.engine.followup import FollowUp
    from orch_review.scope.git import open_repo, work_tree

    env = _take_environment()
    repo = open_repo(Path.cwd(), env)
    config = load_config(work_tree(repo), env, {})
    stderr = Console(stderr=True)
    return FollowUp(config, repo, env, notices=lambda text: stderr.print(text, style="bold yellow"))


def _print_answer(answer: Any) -> None:
    from orch_review.engine.workflow import describe

    click.echo(answer.text)
    if answer.outcomes:
        click.echo("\nReviewed for this answer:\n" + describe(list(answer.outcomes)))


@main.command()
@click.argument("question")
@click.option(
    "--orchestrate",
    is_flag=True,
    help="Switch orchestration mode back on: the model may fan out through Workflow.",
)
@handle_errors
def ask(question: str, orchestrate: bool) -> None:
    """Ask a follow-up question about the last review.

    The review's conversation continues with orchestration mode off: the model answers on
    its own, checking facts in the same content it reviewed. Example:
    orch-review ask "why is finding 1 a problem?"
    """
    with _follow_up() as follow_up:
        _print_answer(follow_up.ask(question, orchestrate=orchestrate))


@main.command()
@handle_errors
def chat() -> None:
    """Talk about the last review interactively.

    Type a question and press Enter. /mode on lets the model fan out through Workflow again,
    /mode off returns to solo answers, /quit (or Ctrl-D) ends the chat.
    """
    from rich.console import Console
    from rich.prompt import Prompt

    console = Console()
    orchestrate = False
    with _follow_up() as follow_up:
        console.print(f"Chatting about the review of {follow_up.scope}. /quit to end.")
        while True:
            try:
                line = Prompt.ask("[bold]you[/bold]", console=console).strip()
            except EOFError:
                break
            if line in {"/quit", "/exit"}:
                break
            if line in {"/mode on", "/mode off"}:
                orchestrate = line == "/mode on"
                console.print(f"orchestration mode {'on' if orchestrate else 'off'}")
                continue
            if line:
                _print_answer(follow_up.ask(line, orchestrate=orchestrate))


@main.group()
def journal() -> None:
    """Inspect or clear the journal that lets an interrupted review resume."""


def _journal_path() -> Path:
    from orch_review.config.settings import load_config
    from orch_review.engine.journal import default_journal_path
    from orch_review.scope.git import git_dir, open_repo, work_tree

    env = _take_environment()
    repo = open_repo(Path.cwd(), env)
    config = load_config(work_tree(repo), env, {})
    return config.journal_path or default_journal_path(git_dir(repo))


def _open_journal(path: Path) -> Any:
    from orch_review.engine.journal import Journal

    return Journal(path)


@journal.command()
@handle_errors
def stats() -> None:
    """Show how many agent results the journal holds."""
    import datetime

    path = _journal_path()
    if not path.exists():
        click.echo(f"journal: {path} (empty: no review has run here yet)")
        return
    with _open_journal(path) as store:
        info = store.stats()
    click.echo(f"journal: {info.path}")
    click.echo(f"entries: {info.entries} ({info.total_bytes:,} bytes)")
    for kind, count in sorted(info.by_kind.items()):
        click.echo(f"  {kind}: {count}")
    if info.newest is not None:
        newest = datetime.datetime.fromtimestamp(info.newest).isoformat(timespec="seconds")
        click.echo(f"newest: {newest}")


@journal.command()
@handle_errors
def clear() -> None:
    """Forget every stored agent result (the next review pays in full)."""
    from orch_review.engine.journal import JournalError, delete_journal_files

    path = _journal_path()
    try:
        with _open_journal(path) as store:
            removed = store.clear()
    except JournalError:
        # An unreadable journal is exactly what `clear` is for: remove the files.
        delete_journal_files(path)
        click.echo(f"removed the unreadable journal {path}")
        return
    click.echo(f"removed {removed} entries")


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--comment-mode",
    type=click.Choice(["review", "summary", "annotations", "none"]),
    default="review",
    show_default=True,
    help="review: inline comments and a summary comment; summary: the summary comment only; "
    "annotations: workflow-command annotations, no comments; none: post nothing.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON_LEVELS),
    default="never",
    show_default=True,
    help="Exit 1 at this severity or above.",
)
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
@report_file_options
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
@click.option(
    "--from-reports",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Post these shard JSON reports (`--shard K/N --json`), merged, instead of reviewing "
    "(repeatable).",
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
    from_reports: tuple[Path, ...],
) -> None:
    """Review a pull request in GitHub Actions and comment on it.

    Reads the pull request from $GITHUB_EVENT_PATH (or --pr with --repo), reviews its head
    against the merge-base with its base (the same review as --base BASE --head HEAD), then
    posts inline comments on diff lines and one summary comment, edited in place on re-runs.
    A token that may not comment (pull requests from forks) falls back to annotations and
    the job summary. Needs GITHUB_TOKEN; writes $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY.
    """
    from typing import cast

    from rich.console import Console

    from orch_review.cli.progress import Progress
    from orch_review.github.publish import CommentMode
    from orch_review.github.run import GitHubRun, run_github
    from orch_review.scope.git import open_repo, work_tree

    env = _take_environment()
    repo = open_repo(Path.cwd(), env)
    run = GitHubRun(
        comment_mode=cast(CommentMode, comment_mode),
        fail_on=fail_on,
        pathspecs=from_cwd(paths, Path.cwd(), work_tree(repo)),
        exclude=exclude,
        overrides=_overrides(
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
    )
    with Progress(Console(stderr=True), enabled=not no_progress) as progress:
        code = run_github(
            repo,
            run,
            env,
            echo=click.echo,
            warn=lambda line: click.echo(line, err=True),
            events=progress,
        )
    sys.exit(int(code))
