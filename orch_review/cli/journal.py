"""``orch-review journal``: inspect or clear the journal that lets a review resume."""

from __future__ import annotations

from pathlib import Path

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import format_option
from orch_review.wording import counted


@click.group(short_help="Inspect or clear the resume journal.")
def journal() -> None:
    """Inspect or clear the journal that lets an interrupted review resume."""


def _journal_path() -> tuple[Path, Path]:
    """The configured journal, else the one in ``.git``, else (a read-only checkout) the one
    in the user's cache directory when only that exists; and the working tree."""
    from orch_review.config.settings import load_config
    from orch_review.core import take_environment
    from orch_review.engine.memory.journal import cache_journal_path, default_journal_path
    from orch_review.scope.git import git_dir, open_repo, work_tree

    env = take_environment()
    repo = open_repo(Path.cwd(), env)
    config = load_config(work_tree(repo), env, {})
    top = work_tree(repo)
    if config.journal_path is not None:
        return config.journal_path, top
    path = default_journal_path(git_dir(repo))
    fallback = cache_journal_path(git_dir(repo), env)
    if not path.exists() and fallback is not None and fallback.exists():
        return fallback, top
    return path, top


@journal.command()
@handle_errors
def stats() -> None:
    """Show how many agent results the journal holds."""
    import datetime

    from orch_review.engine.memory.journal import Journal

    path, top = _journal_path()
    if not path.exists():
        click.echo(f"journal: {path} (empty: no review has run here yet)")
        return
    with Journal(path, signer=None, checkout=top) as store:
        info = store.stats()
    click.echo(f"journal: {info.path}")
    click.echo(f"entries: {info.entries:,} ({counted(info.total_bytes, 'byte')})")
    for kind, count in sorted(info.by_kind.items()):
        click.echo(f"  {kind}: {count}")
    if info.newest is not None:
        newest = datetime.datetime.fromtimestamp(info.newest).isoformat(timespec="seconds")
        click.echo(f"newest: {newest}")


@journal.command(short_help="Forget every stored result: the next review pays in full.")
@handle_errors
def clear() -> None:
    """Forget every stored agent result (the next review pays in full)."""
    from orch_review.engine.memory.journal import (
        Journal,
        JournalError,
        check_own_path,
        delete_journal_files,
    )

    path, top = _journal_path()
    check_own_path(path, top)  # before the files are removed, through a link or not
    try:
        with Journal(path, signer=None, checkout=top) as store:
            removed = store.clear()
    except JournalError:
        # An unreadable journal is exactly what `clear` is for: remove the files.
        delete_journal_files(path)
        click.echo(f"removed the unreadable journal {path}")
        return
    click.echo(f"removed {counted(removed, 'entry')}")


@journal.command("show-report", short_help="Show the last review's report again.")
@format_option
@handle_errors
def show_report(output_format: str) -> None:
    """Show the report of the last review in this working tree again (also when its report
    files could not be written)."""
    from orch_review.cli.output import print_report_as
    from orch_review.config.settings import load_config
    from orch_review.core import take_environment
    from orch_review.engine.agents.session_setup import open_journal
    from orch_review.engine.memory.last_report import load_report
    from orch_review.scope.git import git_dir, open_repo, work_tree

    env = take_environment()
    repo = open_repo(Path.cwd(), env)
    config = load_config(work_tree(repo), env, {})
    with open_journal(config, git_dir(repo), env, checkout=work_tree(repo)) as store:
        report = load_report(store, work_tree(repo))
    print_report_as(report, output_format)
