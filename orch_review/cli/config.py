"""``orch-review config``: every effective setting, its value and where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import click

from orch_review.cli.exits import handle_errors
from orch_review.cli.options import config_option, fail_on_option, model_options, overrides, warn


@click.command("config", short_help="Show every effective setting and where it came from.")
@click.option(
    "--base",
    metavar="REF",
    help="Read the configuration from REF, as a review with --base REF does.",
)
@config_option
@model_options
@fail_on_option(text="As the review's flag.")
@click.option("--max-cost-usd", type=float, help="As the review's flag.")
@click.option(
    "--json",
    "json_file",
    type=click.Path(dir_okay=False, path_type=Path),
    is_flag=False,
    flag_value="-",
    help="Write the settings as JSON to this file instead (- or no file: stdout).",
)
@handle_errors
def config(
    base: str | None,
    config_file: Path | None,
    model: str | None,
    subagent_model: str | None,
    effort: str | None,
    fail_on: str | None,
    max_cost_usd: float | None,
    json_file: Path | None,
) -> None:
    """Show every effective setting with its value and its origin, like
    `git config --show-origin`: the default, the configuration file (.orch-review.toml,
    pyproject.toml's [tool.orch-review] or --config FILE), an ORCH_REVIEW_* environment
    variable, or a flag. Warns about configuration that is ignored.
    """
    from orch_review import core
    from orch_review.config.from_revision import explain_settings
    from orch_review.config.settings import CONFIG_KEYS
    from orch_review.sanitize import line
    from orch_review.scope.git import open_repo, work_tree
    from orch_review.scope.resolve import ScopeRequest

    env = core.take_environment()
    repo = open_repo(Path.cwd(), env)
    request = ScopeRequest("change", base=base)
    settings = overrides(
        model=model,
        subagent_model=subagent_model,
        effort=effort,
        fail_on=fail_on,
        max_cost_usd=max_cost_usd,
    )
    explained = explain_settings(repo, request, env, settings, config_file)
    for warning in explained.warnings:
        warn(warning)
    values = {
        key.key: _shown_value(getattr(explained.config, key.key.replace("-", "_")))
        for key in CONFIG_KEYS
    }
    origins = {key.key: explained.origins[key.key.replace("-", "_")] for key in CONFIG_KEYS}
    source = explained.config.source
    file = (
        str(source.relative_to(work_tree(repo)))
        if source and source.is_relative_to(work_tree(repo))
        else (str(source) if source else None)
    )
    if json_file is not None:
        from orch_review.reporters.files import STDOUT, check_writable_path, write_text

        data = {
            "file": file,
            "settings": {k: {"value": values[k], "origin": origins[k]} for k in values},
        }
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        if json_file == STDOUT:
            click.echo(text, nl=False)
            return
        check_writable_path(json_file, "the settings")
        core.remember_reports(repo, [(json_file, write_text(json_file, text, "the settings"))])
        return
    click.echo(f"# configuration file: {line(file) if file else 'none (defaults)'}")
    width = max(len(origin) for origin in origins.values())
    for key, value in values.items():
        shown = json.dumps(value, ensure_ascii=False)
        click.echo(f"{line(origins[key]):<{width}}  {key} = {line(shown)}")


def _shown_value(value: object) -> object:
    """A setting as JSON-ready data: paths as text, tuples as lists, tables summarised."""
    from collections.abc import Mapping

    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return sorted(value)  # prices: the models priced
    if isinstance(value, tuple):
        return [_shown_value(item) for item in value]
    if hasattr(value, "_asdict"):
        return dict(value._asdict())
    return value
