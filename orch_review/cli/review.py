"""``orch-review review`` (the default command): review and print verified findings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import (
    EXIT_CODES_HELP,
    config_option,
    fail_on_option,
    format_option,
    model_options,
    overrides,
    read_intent,
    report_file_options,
    scope_options,
    warn,
)
from orch_review.config.choices import FILTER_MODES, PROVE_LEVELS, SANDBOX_MODES, FilterMode
from orch_review.errors import ExitCode

if TYPE_CHECKING:
    from rich.console import Console

    from orch_review import core
    from orch_review.findings.report import Report


@click.command(
    "review", epilog=EXIT_CODES_HELP, short_help="Review and print verified findings (the default)."
)
@scope_options
@model_options
@fail_on_option()
@click.option("--max-concurrent", type=int, help="Agents' model requests in flight at once [10].")
@click.option("--max-agents", type=int, help="Hard cap on agents started in this review.")
@click.option("--max-total-tokens", type=int, help="Hard cap on tokens used in this review.")
@click.option("--max-cost-usd", type=float, help="Hard cap on estimated cost in USD.")
@click.option(
    "--confirm-above-usd",
    type=float,
    metavar="USD",
    help="In a terminal, ask before a review estimated above this [5.0].",
)
@click.option("-y", "--yes", is_flag=True, help="Never ask before starting a costly review.")
@click.option(
    "--request-timeout",
    type=float,
    metavar="SECONDS",
    help="Give up on one API request after this long (it is retried) [600].",
)
@click.option(
    "--journal",
    "journal_path",
    type=click.Path(path_type=Path),
    help="Where to keep the resume journal file [.git/orch-review/journal.sqlite3].",
)
@click.option("--no-journal", is_flag=True, help="Neither reuse nor store agent results.")
@click.option(
    "--sandbox",
    type=click.Choice(SANDBOX_MODES),
    help="Where agents' commands run: auto takes the strongest that works here (bubblewrap, "
    "then Landlock, then no shell), on refuses to run without a sandboxed shell, tools gives "
    "agents no shell, off an unsandboxed one [auto].",
)
@click.option(
    "--bwrap-path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The bwrap executable to use [found on PATH]; 0.11 or later shows a large change "
    "as one overlay instead of a link per file.",
)
@report_file_options
@format_option
@config_option
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
@click.option(
    "--prove",
    type=click.Choice(PROVE_LEVELS),
    is_flag=False,
    flag_value="high",
    help="Try to show confirmed findings (high, or all) with a failing test that orch-review "
    "runs in the sandbox; --prove alone is --prove=high [high where a runner is found].",
)
@click.option(
    "--prove-timeout",
    type=float,
    metavar="SECONDS",
    help="Once verification has ended, wait this long for proofs still running; those not "
    "finished are reported not-proven [120].",
)
@click.option(
    "--write-proofs",
    "proofs_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Save the tests that proved findings under this folder, at their paths.",
)
@click.option(
    "--fix",
    is_flag=True,
    help="Apply verified patches to the working tree (never to a commit or the index) "
    "where the file still has the reviewed lines, and list them on stderr.",
)
@click.option(
    "--intent",
    "intent_file",
    metavar="FILE",
    help="A description of what the change should do (- for stdin): an intent concern "
    "checks the change against it.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the findings.")
@click.option(
    "-v", "--verbose", is_flag=True, help="Also print refuted findings and their verdicts."
)
@click.option("--no-progress", is_flag=True, help="Do not show live progress on stderr.")
@handle_errors
def review_command(
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
    confirm_above_usd: float | None,
    yes: bool,
    request_timeout: float | None,
    journal_path: Path | None,
    no_journal: bool,
    sandbox: str | None,
    bwrap_path: Path | None,
    json_file: Path | None,
    sarif_file: Path | None,
    output_format: str,
    config_file: Path | None,
    critic: bool | None,
    filter_mode: FilterMode | None,
    baseline: Path | None,
    shard: str | None,
    prove: str | None,
    prove_timeout: float | None,
    proofs_dir: Path | None,
    fix: bool,
    intent_file: str | None,
    quiet: bool,
    verbose: bool,
    no_progress: bool,
) -> ExitCode:
    """Review code and print verified findings, most severe first.

    By default the change on your branch is reviewed: committed and uncommitted changes
    (and new untracked files) against the merge-base with the default branch. PATHS narrow
    any scope to these files or directories (git pathspecs).
    """
    from orch_review import core
    from orch_review.cli.consoles import console
    from orch_review.cli.output import check_stdout
    from orch_review.cli.stdout import check_stdout_open
    from orch_review.reporters.files import report_files
    from orch_review.scope.resolve import NothingToReview

    options = core.ReviewOptions(
        staged=staged,
        base=base,
        head=head,
        all_files=review_all,
        paths=paths,
        exclude=exclude,
        settings=overrides(
            model=model,
            subagent_model=subagent_model,
            effort=effort,
            fail_on=fail_on,
            max_concurrent=max_concurrent,
            max_agents=max_agents,
            max_total_tokens=max_total_tokens,
            max_cost_usd=max_cost_usd,
            confirm_above_usd=confirm_above_usd,
            request_timeout=request_timeout,
            journal_path=journal_path.resolve() if journal_path else None,
            journal=False if no_journal else None,
            sandbox=sandbox,
            bwrap_path=bwrap_path.resolve() if bwrap_path else None,
            filter_mode=filter_mode,
            critic=critic,
            prove=prove,
            prove_timeout=prove_timeout,
        ),
        baseline=baseline,
        json_file=json_file,
        sarif_file=sarif_file,
        shard=shard,
        config_file=config_file,
        intent=read_intent(intent_file) if intent_file is not None else None,
    )
    stdout_taken = check_stdout(report_files(json_file, sarif_file), output_format)
    check_stdout_open(report_files(json_file, sarif_file), output_format, quiet)
    env = core.take_environment()
    try:
        prepared = core.prepare(Path.cwd(), options, env, cwd=Path.cwd(), warn=warn)
    except NothingToReview as exc:
        core.write_empty_reports(options, str(exc))
        raise
    from orch_review.cli.confirm import confirm_cost

    confirm_cost(prepared, assume_yes=yes)  # before any request
    stderr = console(stderr=True)
    # People read paths from where they ran orch-review; machine formats keep them
    # repository-relative, as documented.
    prefix = core.cwd_prefix(prepared, Path.cwd())
    shown = _Shown(output_format, quiet, verbose, stdout_taken, prefix)
    report = _run_and_show(prepared, shown, stderr, progress=not no_progress and not quiet)
    if proofs_dir is not None:
        from orch_review.reporters.proofs import write_proofs

        for line in write_proofs(report.findings, proofs_dir):
            stderr.print(line, markup=False, highlight=False)
    if fix:
        _apply_fixes(prepared, report, stderr, prefix)
    return report.exit_code(prepared.config.fail_on)


@dataclass(frozen=True)
class _Shown:
    """How the report is shown: ``--format``, ``--quiet``, ``--verbose``, whether a report
    file takes stdout, and the prefix that makes paths relative to where orch-review runs."""

    output_format: str
    quiet: bool
    verbose: bool
    stdout_taken: bool
    prefix: str


def _run_and_show(
    prepared: core.PreparedReview, shown: _Shown, stderr: Console, *, progress: bool
) -> Report:
    """Run the prepared review with live progress on stderr, then show its report; a report
    that was paid for is shown even when a report file could not be written."""
    from orch_review import core
    from orch_review.cli.output import print_report_as
    from orch_review.cli.progress import Progress
    from orch_review.cli.stdout import ReaderGone, StdoutUnwritable
    from orch_review.findings.relative import seen_from
    from orch_review.reporters.files import ReportNotWritten
    from orch_review.scope.git import work_tree

    files = (work_tree(prepared.repo), prepared.env)

    def show(done: Report) -> None:
        print_report_as(
            seen_from(done, shown.prefix) if shown.output_format == "text" else done,
            shown.output_format,
            quiet=shown.quiet,
            verbose=shown.verbose,
            files=files,
            stdout_taken=shown.stdout_taken,
        )

    try:
        with Progress(stderr, enabled=progress) as live:
            report = core.run(
                prepared,
                events=live,
                notices=lambda text: stderr.print(text, style="bold yellow", highlight=False),
            )
    except ReportNotWritten as exc:  # paid for: shown all the same, then the error
        show(exc.report)
        raise
    try:
        show(report)
    except StdoutUnwritable as exc:  # paid for: kept where show-report finds it
        raise core.unshown(prepared, report, exc) from None
    except ReaderGone:
        pass  # `| head`: the exit status still says what the review found
    return report


def _apply_fixes(
    prepared: core.PreparedReview, report: Report, stderr: Console, prefix: str
) -> None:
    """Apply the report's verified patches and list what became of each, its place relative
    to the directory orch-review runs in (``prefix``)."""
    from dataclasses import replace

    from orch_review.findings.relative import shown_path
    from orch_review.fixes import apply_fixes
    from orch_review.sanitize import line
    from orch_review.scope.git import work_tree
    from orch_review.wording import counted

    outcomes = apply_fixes(work_tree(prepared.repo), report.confirmed)
    if not outcomes:
        stderr.print("--fix: no verified patch to apply.", highlight=False)
        return
    applied = sum(1 for o in outcomes if o.applied)
    stderr.print(
        f"--fix: applied {applied} of {counted(len(outcomes), 'verified patch')}:",
        highlight=False,
    )
    for outcome in outcomes:
        finding = outcome.finding
        where = line(replace(finding, path=shown_path(finding.path, prefix)).location)
        if outcome.applied:
            stderr.print(f"  applied      {where}", highlight=False, markup=False)
        else:
            stderr.print(
                f"  not applied  {where}: {line(outcome.reason)}", highlight=False, markup=False
            )
