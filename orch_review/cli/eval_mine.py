"""``orch-review eval mine``: a case file from the repository's own bug fixes."""

from __future__ import annotations

from pathlib import Path

import click

from orch_review.cli.eval import eval_group
from orch_review.cli.exits import handle_errors
from orch_review.errors import ExitCode


@eval_group.command("mine", short_help="Turn this repository's bug fixes into eval cases.")
@click.option("--since", metavar="DATE", help="Only commits after DATE (as git log --since).")
@click.option(
    "--limit", type=click.IntRange(min=1), metavar="N", help="Examine the newest N fixes."
)
@click.option(
    "--paths",
    "paths",
    multiple=True,
    metavar="PATHSPEC",
    help="Only history touching these paths (repeatable).",
)
@click.option(
    "--pattern",
    metavar="REGEX",
    help="What marks a fix commit's message (default: fix, bug, regression, revert, hotfix).",
)
@click.option(
    "--clean",
    type=click.IntRange(min=0),
    metavar="N",
    help="Clean cases to add (default: as many as bug cases).",
)
@click.option(
    "--horizon",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    metavar="N",
    help="A clean case is a commit no fix blamed with at least N newer commits.",
)
@click.option(
    "--max-origin-lines",
    type=click.IntRange(min=1),
    default=400,
    show_default=True,
    metavar="N",
    help="Drop origins that change more lines than this (imports, reformats).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the cases to this file instead of stdout.",
)
@handle_errors
def mine_command(
    since: str | None,
    limit: int | None,
    paths: tuple[str, ...],
    pattern: str | None,
    clean: int | None,
    horizon: int,
    max_origin_lines: int,
    output: Path | None,
) -> ExitCode:
    """Turn this repository's history into eval cases (the SZZ approach).

    Fix commits are found by their message; `git blame` in each fix's parent names the
    commits that wrote the lines the fix deleted or changed. Each such commit becomes a
    case (the commit against its parent) expecting findings on those lines, the fix's
    message as the claim. Commits no fix blamed become clean cases, which measure noise.
    Whitespace and comment lines, refactoring moves, large origins, merges and root
    commits are dropped, and counted. Then: orch-review eval cases.jsonl
    """
    from orch_review.eval.cases import dump_cases
    from orch_review.eval.mine import FIX_PATTERN, MineOptions, mine, summary_lines
    from orch_review.scope.git import open_repo, work_tree

    top = Path(work_tree(open_repo(Path.cwd())))
    options = MineOptions(
        since=since,
        limit=limit,
        paths=paths,
        pattern=pattern or FIX_PATTERN,
        max_origin_lines=max_origin_lines,
        horizon=horizon,
        clean=clean,
    )
    result = mine(top, options)
    lines = "".join(line + "\n" for line in dump_cases(result.cases))
    if output is None:
        click.echo(lines, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(lines, encoding="utf-8")
    for line in summary_lines(result):
        click.echo(f"orch-review eval mine: {line}" if not line.startswith(" ") else line, err=True)
    return ExitCode.CLEAN
