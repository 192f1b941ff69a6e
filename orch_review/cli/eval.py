"""``orch-review eval``: measure recall, precision, noise and cost on labelled changes.

``eval CASES.jsonl`` (the ``run`` subcommand) reviews every case; ``eval --mutate N`` plants
N defects in the current repository first; ``eval import FORMAT SOURCE`` turns a public
benchmark into cases.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import model_options, overrides
from orch_review.errors import ExitCode, UsageError
from orch_review.wording import counted, usd

if TYPE_CHECKING:
    from orch_review.config.settings import Config
    from orch_review.eval.budget import CasesEstimate
    from orch_review.eval.cases import Case

EVAL_EXIT_CODES = """\b
Exit codes:
  0  every threshold met (or none given)
  1  a --min-recall or --max-fp threshold not met
  2  usage or configuration error (a malformed case file)
  3  a case could not be reviewed, or its review was incomplete (listed)
  4  internal error (a crash log is written)"""


class EvalGroup(click.Group):
    """``eval ARGS`` runs ``eval run ARGS`` unless the first argument is a subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in {"--help", "-h"}):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(
    "eval", cls=EvalGroup, short_help="Measure a review's recall, noise and cost on known bugs."
)
def eval_group() -> None:
    """Measure how many real bugs a review catches, how much noise it makes, and its cost.

    \b
    Examples:
      orch-review eval cases.jsonl --json results.json
      orch-review eval cases.jsonl --min-recall 0.6 --max-fp 0.5
      orch-review eval --mutate 10 --seed 1
      orch-review eval cases.jsonl --matrix verifiers=on,off model=A,B
      orch-review eval import swr-bench swr_datasets_d5c5.jsonl -o cases.jsonl
    """


def _split_axes(
    arguments: tuple[str, ...], matrix: tuple[str, ...]
) -> tuple[Path | None, list[str]]:
    """The case file and the matrix axes: ``--matrix a=1,2 b=x,y`` leaves ``b=x,y`` among
    the positional arguments, so those with ``=`` are axes when --matrix is given."""
    axes = list(matrix)
    files = []
    for argument in arguments:
        if matrix and "=" in argument and not Path(argument).exists():
            axes.append(argument)
        else:
            files.append(argument)
    if len(files) > 1:
        raise UsageError(f"give one case file, not {len(files)}: {' '.join(files)}")
    return (Path(files[0]) if files else None), axes


@eval_group.command(
    "run", epilog=EVAL_EXIT_CODES, short_help="Review every case and score the reviews."
)
@click.argument("arguments", nargs=-1, metavar="[CASES.jsonl]")
@click.option(
    "--json",
    "json_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every figure, per case and overall, to this JSON file.",
)
@click.option("--min-recall", type=click.FloatRange(0, 1), help="Exit 1 when recall is lower.")
@click.option(
    "--max-fp",
    type=click.FloatRange(0),
    help="Exit 1 when false positives per clean change are higher.",
)
@click.option(
    "--mutate",
    type=click.IntRange(1, 1000),
    metavar="N",
    help="Plant N known defects in this repository's code, one per change, and review each.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --mutate.")
@click.option(
    "--write-cases",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --mutate: also write the generated cases to this JSONL file.",
)
@click.option(
    "--matrix",
    multiple=True,
    metavar="SETTING=V1,V2",
    help="Run under every combination of these settings, e.g. --matrix model=A,B "
    "effort=high,xhigh verifiers=on,off.",
)
@model_options
@click.option(
    "--jobs",
    type=click.IntRange(1, 32),
    default=2,
    show_default=True,
    help="Cases reviewed at once (each gets max-concurrent / jobs requests in flight).",
)
@click.option(
    "--tolerance",
    type=click.IntRange(0, 1000),
    default=3,
    show_default=True,
    help="Lines a finding may be off from an expected issue's location and match.",
)
@click.option(
    "--judge-model", help="Model matching issues that have no location [claude-sonnet-5]."
)
@click.option(
    "--judge-prompt",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A file with the judge's system prompt (replaces the built-in one).",
)
@click.option("--max-cost-usd", type=float, help="Hard cap on estimated cost per review.")
@click.option(
    "--max-total-cost-usd",
    type=float,
    help="Hard cap on estimated cost of all the cases together [eval-max-total-cost-usd].",
)
@click.option("-y", "--yes", is_flag=True, help="Do not ask before an expensive run.")
@click.option("--no-journal", is_flag=True, help="Neither reuse nor store agent or judge results.")
@handle_errors
def run_command(
    arguments: tuple[str, ...],
    json_file: Path | None,
    min_recall: float | None,
    max_fp: float | None,
    mutate: int | None,
    seed: int,
    write_cases: Path | None,
    matrix: tuple[str, ...],
    model: str | None,
    subagent_model: str | None,
    effort: str | None,
    jobs: int,
    tolerance: int,
    judge_model: str | None,
    judge_prompt: Path | None,
    max_cost_usd: float | None,
    max_total_cost_usd: float | None,
    yes: bool,
    no_journal: bool,
) -> ExitCode:
    """Review every case of CASES.jsonl (or --mutate N changes) and report how it did."""
    from orch_review.core import take_environment
    from orch_review.eval.matching import DEFAULT_JUDGE_MODEL, DEFAULT_JUDGE_PROMPT
    from orch_review.eval.matrix import matrix_markdown, parse_axis, run_matrix
    from orch_review.eval.render import summary_markdown
    from orch_review.eval.runner import EvalSettings, run_cases
    from orch_review.eval.sources import cache_dir
    from orch_review.eval.summary import summarize

    case_file, axis_texts = _split_axes(arguments, matrix)
    if (case_file is None) == (mutate is None):
        raise UsageError("give a case file, or --mutate N to plant defects in this repository")
    if write_cases is not None and mutate is None:
        raise UsageError("--write-cases goes with --mutate")
    axes = [parse_axis(text) for text in axis_texts]
    env = take_environment()
    money = _money(env, max_total_cost_usd, max_cost_usd)
    cases, base_dir = _cases(case_file, mutate, seed, write_cases)
    settings = EvalSettings(
        cache=cache_dir(env),
        base_dir=base_dir,
        settings=overrides(
            model=model,
            subagent_model=subagent_model,
            effort=effort,
            max_cost_usd=max_cost_usd,
            journal=False if no_journal else None,
        ),
        jobs=jobs,
        tolerance=tolerance,
        judge_model=judge_model or DEFAULT_JUDGE_MODEL,
        judge_prompt=judge_prompt.read_text("utf-8") if judge_prompt else DEFAULT_JUDGE_PROMPT,
        journal=not no_journal,
        max_total_cost_usd=money.eval_max_total_cost_usd,
    )

    def announce(text: str) -> None:
        click.echo(f"orch-review eval: {text}", err=True)

    def before(estimated: CasesEstimate) -> None:
        _say_estimate(estimated, settings.max_total_cost_usd, announce)
        _confirm(estimated, money.confirm_above_usd, yes, env)

    if axes:
        rows = run_matrix(
            cases, settings, axes, env, announce=lambda label: announce(f"running {label}")
        )
        summaries = [summary for _, summary in rows]
        click.echo(matrix_markdown(rows), nl=False)
        written: object = {"matrix": [{"settings": label, **summary} for label, summary in rows]}
    else:
        result = run_cases(
            cases,
            settings,
            env,
            progress=lambda r: announce(f"{r.case.id}: {r.error or 'scored'}"),
            notice=announce,
            before=before,
        )
        summary = summarize(result)
        summaries = [summary]
        click.echo(summary_markdown(summary), nl=False)
        written = summary
    if json_file is not None:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(json.dumps(written, indent=2, sort_keys=True) + "\n", "utf-8")
    return _verdict(summaries, min_recall, max_fp)


def _money(env: Mapping[str, str], total: float | None, per_review: float | None) -> Config:
    """The money settings of this run: the configuration where eval runs (its file and
    ``ORCH_REVIEW_*``), then the flags; each cap a number greater than 0."""
    from orch_review.config.settings import load_config

    for flag, value in (("--max-total-cost-usd", total), ("--max-cost-usd", per_review)):
        if value is not None and not value > 0:
            raise UsageError(f"{flag} must be a number greater than 0, got {value:g}")
    return load_config(Path.cwd(), env, {"eval_max_total_cost_usd": total})


def _say_estimate(
    estimated: CasesEstimate, cap: float | None, announce: Callable[[str], None]
) -> None:
    """The estimate of every case, before any request; and the cap, if any."""
    cost = estimated.cost
    left_out = estimated.cases - estimated.estimated
    unknown = f" ({left_out} not estimated: patches and unreadable cases)" if left_out else ""
    capped = f"; total cap {usd(cap, exact=True)} (no case starts beyond it)" if cap else ""
    announce(
        f"estimated {usd(cost.low_usd)}-{usd(cost.high_usd)} for "
        f"{counted(estimated.cases, 'case')}{unknown}{capped}."
    )


def _confirm(
    estimated: CasesEstimate, limit: float, assume_yes: bool, env: Mapping[str, str]
) -> None:
    """Ask in a terminal, as a review does, when the estimate's high end is above
    `confirm-above-usd`; ReviewDeclined unless the answer is yes."""
    from orch_review.cli.confirm import interactive
    from orch_review.cli.consoles import in_ci
    from orch_review.errors import ReviewDeclined

    if assume_yes or in_ci(env) or not interactive() or estimated.cost.high_usd <= limit:
        return
    click.echo(
        f"Estimated up to {usd(estimated.cost.high_usd)} for these cases, above "
        f"confirm-above-usd ({usd(limit, exact=True)}). Continue? [y/N] ",
        err=True,
        nl=False,
    )
    if sys.stdin.readline().strip().lower() not in {"y", "yes"}:
        raise ReviewDeclined(
            "eval not started: answer y to start it, or pass --yes, or raise "
            "confirm-above-usd, or set --max-total-cost-usd."
        )


def _cases(
    case_file: Path | None, mutate: int | None, seed: int, write_cases: Path | None
) -> tuple[list[Case], Path]:
    """The cases to review (``mutate`` defects planted in this repository, saved to
    ``write_cases`` when given, or those of ``case_file``) and the directory their paths are
    relative to."""
    from orch_review.eval.cases import dump_cases, load_cases
    from orch_review.eval.mutate import plant

    if mutate is None:
        assert case_file is not None
        return load_cases(case_file), case_file.resolve().parent
    cases = plant(Path.cwd(), mutate, seed)
    if len(cases) < mutate:
        click.echo(
            f"orch-review: only {counted(len(cases), 'defect site')} found; planted those.",
            err=True,
        )
    if write_cases is not None:
        write_cases.write_text("".join(line + "\n" for line in dump_cases(cases)), "utf-8")
    return cases, Path.cwd()


def _verdict(
    summaries: list[dict[str, object]], min_recall: float | None, max_fp: float | None
) -> ExitCode:
    """3 when a case was not scored; 1 when a threshold is missed in any run; else 0.
    A threshold that cannot be measured (no expected issue, no clean change) is missed."""
    missed = []
    for summary in summaries:
        overall = summary["overall"]
        assert isinstance(overall, dict)
        if overall["failed"]:
            return ExitCode.INCOMPLETE
        recall, fp = overall["recall"], overall["false_positives_per_clean_change"]
        if min_recall is not None:
            if recall is None:
                missed.append("recall cannot be measured: no case expects an issue")
            elif recall < min_recall:
                missed.append(f"recall {recall} is below --min-recall {min_recall}")
        if max_fp is not None:
            if fp is None:
                missed.append("false positives per clean change cannot be measured: no clean case")
            elif fp > max_fp:
                missed.append(f"{fp} false positives per clean change exceed --max-fp {max_fp}")
    for reason in missed:
        click.echo(f"orch-review eval: {reason}", err=True)
    return ExitCode.FINDINGS if missed else ExitCode.CLEAN


IMPORT_FORMATS = ("swr-bench", "swe-prbench", "code-review-bench", "aacr-bench", "bc-bench")


@eval_group.command("import", short_help="Turn a public benchmark into a case file.")
@click.argument("data_format", metavar="FORMAT", type=click.Choice(IMPORT_FORMATS))
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the cases to this file instead of stdout.",
)
@handle_errors
def import_command(data_format: str, source: Path, output: Path | None) -> ExitCode:
    """Turn a public benchmark into a case file (JSONL) for `orch-review eval`.

    \b
    FORMAT and SOURCE:
      swr-bench          data/swr_datasets_d5c5.jsonl of
                         github.com/ZZR0/SWRench (MIT)
      swe-prbench        the folder of
                         huggingface.co/datasets/foundry-ai/swe-prbench
                         (prs.jsonl and annotations/; CC BY 4.0)
      code-review-bench  offline/golden_comments/ of
                         github.com/withmartian/code-review-benchmark (MIT)
      aacr-bench         dataset/ (positive_samples.json) of
                         github.com/alibaba/aacr-bench (Apache-2.0)
      bc-bench           dataset/codereview.jsonl of
                         github.com/microsoft/BC-Bench (MIT)

    Nothing is downloaded here; the repositories are cloned when the cases run.
    """
    from orch_review.eval.cases import dump_cases
    from orch_review.eval.importers import IMPORTERS

    cases = IMPORTERS[data_format](source)
    lines = "".join(line + "\n" for line in dump_cases(cases))
    if output is None:
        click.echo(lines, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(lines, encoding="utf-8")
    clean = sum(case.clean for case in cases)
    issues = sum(len(case.expected) for case in cases)
    click.echo(
        f"orch-review eval: {counted(len(cases), 'case')}, {clean} clean, "
        f"{counted(issues, 'expected issue')}.",
        err=True,
    )
    return ExitCode.CLEAN
