"""How ``orch-review plan`` shows a plan: rich tables on a terminal, plain lines when piped."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from orch_review.quoting import quote_path
from orch_review.sanitize import terminal
from orch_review.wording import counted, usd


def print_plan(data: dict[str, Any], console: Console, limit: int | None = None) -> None:
    """The human-readable plan; each table lists at most ``limit`` rows (None: all).

    On a terminal, rich tables; piped (a CI log, a file, ``grep``), plain lines with full
    paths, written in one go: rich would squeeze them to 80 columns, and take seconds to lay
    out a 100,000-row table.
    """
    if not console.is_terminal:
        console.file.write("".join(plain_plan(data, limit)))
        console.file.flush()
        return
    scope = data["scope"]
    console.print(Text.assemble(("scope", "bold"), f": {_shown(scope['description'])}"))
    count = len(data["files"])
    console.print(Text(f"{count:,} file{'' if count == 1 else 's'} to review", style="bold"))
    table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False)
    for column in ("file", "status", "+", "-", "bytes", "hunks"):
        table.add_column(column, justify="right" if column in {"+", "-", "bytes"} else "left")
    for f in data["files"][:limit]:
        hunks = ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in (f["hunks"] or []))
        status = f["status"] or ""
        if f["replaced"]:
            status = f"{status} (was a {f['replaced']})"
        if f["old_path"]:
            status = f"renamed from {_shown(f['old_path'])}"
        # Text, not str: a file named "[red]x" is a name, not markup.
        table.add_row(
            Text(_shown(f["path"])),
            Text(status),
            "" if f["additions"] is None else str(f["additions"]),
            "" if f["deletions"] is None else str(f["deletions"]),
            f"{f['size']:,}",
            hunks,
        )
    console.print(table)
    _more(console, count, limit)
    skipped_count = len(data["skipped"])
    if skipped_count:
        console.print(Text(f"{skipped_count:,} skipped", style="bold"))
        skipped = Table(box=box.SIMPLE, show_edge=False, pad_edge=False)
        skipped.add_column("file")
        skipped.add_column("reason")
        for s in data["skipped"][:limit]:
            skipped.add_row(Text(_shown(s["path"])), Text(_shown(s["reason"])))
        console.print(skipped)
        _more(console, skipped_count, limit)
    if data["nothing_to_review"]:
        console.print(Text(terminal(data["nothing_to_review"]), style="bold"))
    console.print(Text(_token_line(data["tokens"])))
    for text in cost_lines(data["cost"]):
        console.print(Text(text))


def _token_line(tokens: dict[str, Any]) -> str:
    """The first prompt's size: exact when the API counted it, else an estimate."""
    if tokens["counted"] is not None:
        figure = f"{tokens['counted']:,}"
    else:
        figure = f"~{tokens['estimate']:,}"
    return f"pre-scout prompt: {figure} input tokens ({tokens['method']})"


def _span(low: float, high: float, show: Callable[[float], str] = str) -> str:
    return show(low) if show(low) == show(high) else f"{show(low)}-{show(high)}"


def cost_lines(cost: dict[str, Any] | None) -> list[str]:
    """The estimated cost: the total range, one line per role (model, effort, agents,
    dollars), and the calibration it rests on. Model names come from configuration."""
    if cost is None:
        return []
    lines = [
        f"estimated cost: {_span(cost['low_usd'], cost['high_usd'], usd)} "
        f"({counted(cost['files'], 'file')}, {counted(cost['changed_lines'], 'changed line')}, "
        f"{_span(*cost['concerns'])} concerns)"
    ]
    for role in cost["roles"]:
        agents = _span(*role["agents"])
        lines.append(
            f"  {role['role']:<10} {terminal(role['model'])} (effort {role['effort']}), "
            f"{agents} agent{'' if agents == '1' else 's'}: "
            f"{_span(role['low_usd'], role['high_usd'], usd)}"
        )
    for model in cost["unknown_price_models"]:
        lines.append(f"  no price for {terminal(model)}: priced as the dearest known model")
    calibration = cost["calibration"]
    # Wrapped to fit 80 columns: the basis is a sentence.
    lines += textwrap.wrap(
        calibration["calibrated_on"], 78, initial_indent="  ", subsequent_indent="    "
    )
    lines += textwrap.wrap(
        f"input tokens per agent, from {calibration['source']} on {calibration['date']}:",
        78,
        initial_indent="  ",
        subsequent_indent="    ",
    )
    lines += [f"    {figure}" for figure in calibration["input_tokens"]]
    return lines


def _shown(name: str) -> str:
    """A file name (hostile) on one line, no escape sequence, no CI log command."""
    return terminal(quote_path(name))


def plain_plan(data: dict[str, Any], limit: int | None = None) -> list[str]:
    """The plan as plain lines, full paths, columns aligned. No line starts with a name from
    the repository (a CI log must not take one for a command)."""
    scope = data["scope"]
    lines = [f"scope: {_shown(scope['description'])}\n"]
    files = data["files"]
    count = len(files)
    lines.append(f"{count:,} file{'' if count == 1 else 's'} to review\n")
    rows = [("status", "+", "-", "bytes", "file", "hunks")] if files else []
    for f in files[:limit]:
        status = f["status"] or ""
        if f["replaced"]:
            status = f"{status} (was a {f['replaced']})"
        if f["old_path"]:
            status = f"renamed from {_shown(f['old_path'])}"
        rows.append(
            (
                status,
                "" if f["additions"] is None else str(f["additions"]),
                "" if f["deletions"] is None else str(f["deletions"]),
                f"{f['size']:,}",
                _shown(f["path"]),
                ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in (f["hunks"] or [])),
            )
        )
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(4)]
    for status, plus, minus, size, path, hunks in rows:
        lines.append(
            f"{status:<{widths[0]}}  {plus:>{widths[1]}}  {minus:>{widths[2]}}  "
            f"{size:>{widths[3]}}  {path}{'  ' + hunks if hunks else ''}\n"
        )
    lines += _plain_more(count, limit)
    skipped = data["skipped"]
    if skipped:
        lines.append(f"{len(skipped):,} skipped\n")
        lines += [
            f"skipped: {_shown(s['path'])} ({_shown(s['reason'])})\n" for s in skipped[:limit]
        ]
        lines += _plain_more(len(skipped), limit)
    if data["nothing_to_review"]:
        lines.append(terminal(data["nothing_to_review"]) + "\n")
    lines.append(_token_line(data["tokens"]) + "\n")
    lines += [text + "\n" for text in cost_lines(data["cost"])]
    return lines


def _plain_more(count: int, limit: int | None) -> list[str]:
    if limit is not None and count > limit:
        return [f"... and {count - limit:,} more (--limit 0 lists them all; so does --json)\n"]
    return []


def _more(console: Console, count: int, limit: int | None) -> None:
    if limit is not None and count > limit:
        console.print(
            Text(f"... and {count - limit:,} more (--limit 0 lists them all; so does --json)")
        )
