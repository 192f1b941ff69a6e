"""The command line: a thin click layer over the core in :mod:`orch_review.review`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from orch_review import __version__
from orch_review.errorhandler import handle_errors

EFFORTS = ("low", "medium", "high", "xhigh", "max")
LEVELS = ("high", "medium", "low", "info", "never")

EXIT_CODES_HELP = """\b
Exit codes:
  0  no confirmed finding at or above --fail-on
  1  confirmed findings at or above --fail-on
  2  usage or configuration error
  3  review incomplete (API failure, budget cap, agent failure)
  4  internal error (a crash log is written)
  130 interrupted"""


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
      orch-review --all                 review every tracked file
      orch-review --all src/            only files under src/
      orch-review --all --json out.json also write a JSON report
      orch-review journal stats         what the resume journal holds

    Needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL pointing at a compatible server).
    Settings come from [tool.orch-review] in pyproject.toml or .orch-review.toml,
    then ORCH_REVIEW_* environment variables, then flags.
    """


def _overrides(**flags: Any) -> dict[str, object]:
    return {name: value for name, value in flags.items() if value is not None}


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--all", "review_all", is_flag=True, help="Review every tracked file (a full audit).")
@click.option("--model", help="Model for the main agent [default: claude-opus-5-5].")
@click.option("--subagent-model", help="Model for subagents and verifiers [default: --model].")
@click.option("--effort", type=click.Choice(EFFORTS), help="Effort level on every request [xhigh].")
@click.option(
    "--fail-on", type=click.Choice(LEVELS), help="Exit 1 at this severity or above [high]."
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
    "--json",
    "json_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the JSON report to this file.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="What to print on stdout.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the findings.")
@click.option("--no-progress", is_flag=True, help="Do not show live progress on stderr.")
@handle_errors
def review(
    paths: tuple[str, ...],
    review_all: bool,
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
    json_file: Path | None,
    output_format: str,
    quiet: bool,
    no_progress: bool,
) -> None:
    """Review code and print verified findings, most severe first.

    PATHS narrow the review to these files or directories (git pathspecs).
    """
    from rich.console import Console

    from orch_review.config import load_config
    from orch_review.git import open_repo, work_tree
    from orch_review.progress import Progress
    from orch_review.reporters import json_report
    from orch_review.reporters.terminal import print_report
    from orch_review.review import review as run_review
    from orch_review.scope import resolve_all

    if not review_all:
        raise click.UsageError(
            "this version reviews whole repositories only: add --all "
            "(reviews of the current change, --staged and --base are coming)."
        )
    env = dict(os.environ)
    repo = open_repo(Path.cwd(), env)
    root = work_tree(repo)
    config = load_config(
        root,
        env,
        _overrides(
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
        ),
    )
    scope = resolve_all(repo, config, _relative_to_top(paths, root))
    stderr = Console(stderr=True)
    with Progress(stderr, enabled=not no_progress and not quiet) as progress:
        report = run_review(config, scope, env, events=progress)
    if json_file is not None:
        json_file.write_text(json_report.render(report), encoding="utf-8")
    if output_format == "json":
        click.echo(json_report.render(report), nl=False)
    else:
        print_report(report, Console(), quiet=quiet)
    sys.exit(int(report.exit_code(config.fail_on)))


def _relative_to_top(paths: tuple[str, ...], root: Path) -> tuple[str, ...]:
    """Pathspecs given relative to the current directory, rewritten relative to the top."""
    cwd = Path.cwd().resolve()
    out = []
    for raw in paths:
        full = (cwd / raw).resolve()
        try:
            relative = full.relative_to(root.resolve())
        except ValueError:
            raise click.BadParameter(f"{raw} is outside the repository {root}") from None
        out.append(str(relative) if str(relative) != "." else ".")
    return tuple(out)


@main.group()
def journal() -> None:
    """Inspect or clear the journal that lets an interrupted review resume."""


def _journal_path() -> Path:
    from orch_review.config import load_config
    from orch_review.engine.journal import default_journal_path
    from orch_review.git import git_dir, open_repo, work_tree

    env = dict(os.environ)
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
