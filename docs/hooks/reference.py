"""mkdocs hook: the settings reference and the price table, generated from the code.

Pages hold a marker (``<!-- generated: settings -->``, ``<!-- generated: prices -->``) that
this hook replaces when the site is built, so the reference cannot drift from
``orch_review.config.settings`` (the keys, their defaults, variables and documentation), the
flags of the commands that set them, and ``orch_review.config.pricing``. The tests import
the same functions (tests/docs/test_settings_reference.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from orch_review.cli import main
from orch_review.config import pricing, settings

MARKERS = {
    "<!-- generated: settings -->": lambda: settings_reference(),
    "<!-- generated: prices -->": lambda: prices_table(),
}
# The commands whose flags set a setting for one run, in the order they are named.
FLAG_COMMANDS = ("review", "hook")
LONG_LIST = 4  # a default list longer than this is listed below the table


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each marker on a page by what it stands for."""
    for marker, render in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, render())
    return markdown


def command_paths(group: click.Group | None = None, prefix: str = "orch-review") -> list[str]:
    """Every command and subcommand, named as mkdocs-click names its heading."""
    group = group or main
    paths = []
    for name, command in sorted(group.commands.items()):
        path = f"{prefix}-{name}"
        paths.append(path)
        if isinstance(command, click.Group):
            paths += command_paths(command, path)
    return paths


def on_post_build(config: Any, **_: Any) -> None:
    """Fail the build when the generated CLI reference lacks a command."""
    from mkdocs.exceptions import PluginError  # mkdocs is there only when the site is built

    page = Path(config["site_dir"]) / "reference" / "cli" / "index.html"
    html = page.read_text(encoding="utf-8")
    missing = [path for path in command_paths() if f'id="{path}"' not in html]
    if missing:
        raise PluginError(f"the CLI reference lacks {', '.join(missing)}")


def _options(command: str) -> Iterator[click.Option]:
    for param in main.commands[command].params:
        if isinstance(param, click.Option):
            yield param


def setting_of(param: click.Option) -> str | None:
    """The setting (snake_case) a command's option sets, if any."""
    names = {key.name for key in settings._KEYS}
    name = param.name or ""
    if name in names:
        return name
    if name.removeprefix("no_") in names:
        return name.removeprefix("no_")
    return None


def flags() -> dict[str, list[str]]:
    """Setting (kebab-case) -> the flags that set it, from the first command that has any."""
    found: dict[str, list[str]] = {}
    for command in FLAG_COMMANDS:
        here: dict[str, list[str]] = {}
        for param in _options(command):
            key = setting_of(param)
            if key is not None:
                here.setdefault(key.replace("_", "-"), []).extend(
                    [*param.opts, *param.secondary_opts]
                )
        for key, names in here.items():
            if key not in found:
                prefix = "" if command == "review" else f"{command} "
                found[key] = [prefix + names[0], *names[1:]]
    return found


def _value(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return f"`{int(value)}`"
    if isinstance(value, tuple | list):
        if len(value) > LONG_LIST:
            return f"{len(value)} built-in patterns (listed below)"
        return "`[" + ", ".join(f'"{item}"' for item in value) + "]`"
    if isinstance(value, Path):
        return f"`{value}`"
    if isinstance(value, int | float | str):
        return f"`{value}`"
    return "built-in estimates (the price table below)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rows() -> list[dict[str, str]]:
    """One row per configuration key: key, default, variable, flags, accepted, meaning."""
    by_flag = flags()
    kinds = {key.kebab: key.kind for key in settings._KEYS}
    out = []
    for key in settings.CONFIG_KEYS:
        kind = kinds.get(key.key)
        variable = f"`{key.env_var}`" if key.env_var else "—"
        if kind is not None and kind.from_text is settings._globs_from_text:
            variable += " (comma-separated)"
        named = by_flag.get(key.key, [])
        out.append(
            {
                "key": key.key,
                "default": _value(key.default),
                "environment": variable,
                "flag": " / ".join(f"`{f}`" for f in named) or "—",
                "accepts": kind.expected if kind is not None else "a table (see the meaning)",
                "meaning": key.doc,
            }
        )
    return out


def settings_reference() -> str:
    """The Markdown table of every setting, and the long default lists after it."""
    lines = [
        "| key | default | environment | flag | accepts | meaning |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows():
        cells = [f"`{row['key']}`", *(row[c] for c in ("default", "environment", "flag"))]
        cells += [row["accepts"], row["meaning"]]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    for key in settings.CONFIG_KEYS:
        default = key.default
        if isinstance(default, tuple) and len(default) > LONG_LIST:
            lines += ["", f"The default of `{key.key}`:", ""]
            lines += [f"- `{item}`" for item in default]
    return "\n".join(lines) + "\n"


def prices_table() -> str:
    """The built-in price estimates, USD per million tokens of each kind."""
    lines = [
        "| model | input | output | cache write | cache read |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for model, price in pricing.DEFAULT_PRICES.items():
        figures = (price.input, price.output, price.cache_write, price.cache_read)
        lines.append(f"| `{model}` | " + " | ".join(f"{f:g}" for f in figures) + " |")
    return "\n".join(lines) + "\n"
