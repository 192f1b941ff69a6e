"""The report people read: a header with counts, confirmed findings grouped by severity with
their code, then coverage, usage and cost.

On a terminal it wraps to the width, highlights code and draws rules and table borders; off a
terminal (pipes, CI logs, ``render``) it is plain text, one line per line, no boxes. Colour
follows the console, which honours ``NO_COLOR``.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast
from urllib.parse import quote

from rich import box
from rich.cells import chop_cells
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.rule import Rule
from rich.style import Style
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from orch_review.findings.patches import diff_of_lines, replacement_lines
from orch_review.findings.records import Finding, Severity, Status
from orch_review.findings.report import Report
from orch_review.findings.snippets import Snippet, cap_line, cap_lines
from orch_review.findings.usage import Usage
from orch_review.quoting import quote_path
from orch_review.reporters.proof_text import proof_line
from orch_review.reporters.sentences import guidance_line, incomplete_reasons, unreadable_note
from orch_review.sanitize import CommandSafeStream
from orch_review.sanitize import line as safe_line
from orch_review.sanitize import terminal as safe
from orch_review.wording import counted, noun_for, unit_noun, usd

SEVERITY_STYLE = {
    Severity.HIGH: "bold red",
    Severity.MEDIUM: "bold yellow",
    Severity.LOW: "bold cyan",
    Severity.INFO: "bold blue",
}
INDENT = "   "
#: Width of the plain ``render`` (the registry's "text" format).
TEXT_WIDTH = 100
_NOT_SHOWN = (Status.REFUTED, Status.UNVERIFIED, Status.FILTERED, Status.SUPPRESSED)


@dataclass(frozen=True, slots=True)
class _Style:
    terminal: bool  # wrap, rules and table borders
    color: bool  # syntax-highlighted code
    quiet: bool
    verbose: bool
    link_root: Path | None = None  # a real terminal: locations are OSC 8 links under it


def _one_line(text: str) -> str:
    return safe_line(text)


def _plain_code(snippet: Snippet, finding: Finding, lines: Sequence[str] | None = None) -> Text:
    width = len(str(snippet.end))
    text = Text()
    for number, line in enumerate(snippet.lines if lines is None else lines, snippet.start):
        flagged = finding.start_line <= number <= finding.end_line
        if number > snippet.start:
            text.append("\n")
        text.append(f"{'>' if flagged else ' '} {number:>{width}} |", "dim")
        if line.strip():
            text.append(" " + safe(line.expandtabs(4).rstrip()), "bold" if flagged else "")
    return text


def _cut(line: str, room: int) -> str:
    """``line`` cut to ``room`` cells, an ellipsis saying so."""
    text = Text(line)
    text.truncate(max(room, 2), overflow="ellipsis")
    return text.plain


@dataclass(frozen=True, slots=True)
class _CutToWidth:
    """Code lines laid out by ``build``, each cut with an ellipsis to the width left of the
    ``gutter`` (line numbers) when the report is rendered: a cut line says it was cut."""

    lines: tuple[str, ...]
    gutter: int
    build: Callable[[list[str]], RenderableType]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        room = options.max_width - self.gutter
        yield self.build([_cut(line, room) for line in self.lines])


def _code(report: Report, finding: Finding, style: _Style) -> RenderableType | None:
    snippet = report.snippets.get(finding.fingerprint) if finding.fingerprint else None
    if snippet is None or not snippet.lines:
        return None
    if not style.terminal:
        return _plain_code(snippet, finding)
    lines = tuple(safe(line.expandtabs(4).rstrip()) for line in snippet.lines)
    digits = len(str(snippet.start + len(lines) - 1))
    if not style.color:  # "> 12 | code"
        return _CutToWidth(lines, digits + 5, lambda cut: _plain_code(snippet, finding, cut))

    def syntax(cut: list[str]) -> Syntax:
        code = "\n".join(cut)
        return Syntax(
            code,
            Syntax.guess_lexer(finding.path, code),
            theme="ansi_dark",
            background_color="default",
            line_numbers=True,
            start_line=snippet.start,
            highlight_lines=set(range(finding.start_line, finding.end_line + 1)),
        )

    return _CutToWidth(lines, digits + 3, syntax)  # "❱ 12 code"


def _old_lines(report: Report, finding: Finding) -> list[str] | None:
    """The flagged lines as reviewed, when the snippet holds all of them."""
    snippet = report.snippets.get(finding.fingerprint) if finding.fingerprint else None
    if snippet is None or snippet.start > finding.start_line or snippet.end < finding.end_line:
        return None
    return list(
        snippet.lines[finding.start_line - snippet.start : finding.end_line - snippet.start + 1]
    )


@dataclass(frozen=True, slots=True)
class _Diff:
    """A patch on a terminal: its title, then each diff line wrapped to the width with its
    ``+``, ``-`` or blank marker repeated on every piece, so a wrapped line still says which
    side it is on."""

    title: Text
    lines: tuple[tuple[str, str], ...]  # (line, style)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.title
        room = max(options.max_width - 1, 8)
        for line, colour in self.lines:
            marker, body = (line[:1], line[1:]) if line[:1] in "+- " else ("", line)
            for piece in chop_cells(body, room if marker else room + 1) or [""]:
                yield Text(marker + piece, colour, no_wrap=True, overflow="crop", end="\n")


def _patch(report: Report, finding: Finding, style: _Style) -> RenderableType | None:
    """The verified patch as a small unified diff; with --verbose, why a replacement is not
    one."""
    if finding.replacement is None:
        return None
    if finding.verified_patch is None:
        if not style.verbose or finding.patch_check is None:
            return None
        return _labelled("patch not verified: ", finding.patch_check.reason)
    new = [cap_line(line) for line in replacement_lines(finding.replacement)]
    old = _old_lines(report, finding)
    text = Text("patch (verified; `orch-review --fix` applies it):", "dim")
    if old is None:  # a range longer than the snippet shows: the new lines alone
        diff = [f"@@ -{finding.start_line},{finding.end_line - finding.start_line + 1} @@"]
        diff += [f"+{line}" for line in new]
    else:
        diff = diff_of_lines(finding.path, finding.start_line, old, new).splitlines()[2:]
    lines = []
    for line in diff:
        colour = {"-": "red", "+": "green"}.get(line[:1], "dim")
        lines.append((safe(line.expandtabs(4).rstrip()), colour if style.color else ""))
    if style.terminal:
        return _Diff(text, tuple(lines))
    for shown, colour in lines:
        text.append("\n")
        text.append(shown, colour)
    return text


def _labelled(label: str, value: str) -> Text:
    return Text.assemble((label, "dim"), safe(cap_lines(value.strip())))


def _finding(number: int, finding: Finding, report: Report, style: _Style) -> RenderableType:
    where = Style(bold=True, underline=True)
    if style.link_root is not None:
        where += Style(link=file_url(style.link_root, finding.path))
    head = Text.assemble(
        (f"{number}. ", "bold"),
        (f"{finding.severity.value.upper():<6}", SEVERITY_STYLE[finding.severity]),
        " ",
        (safe_line(finding.location), where),
        (f"  [{safe_line(finding.category)}]", "dim"),
    )
    fields = [("", finding.claim), ("evidence: ", finding.evidence)]
    tail = []
    if finding.suggestion:
        tail.append(("fix: ", finding.suggestion))
    if finding.verdict is not None:
        label = f"verified ({finding.verdict.confidence} confidence): "
        tail.append((label, finding.verdict.reason))
    if len(finding.all_concerns) > 1:
        tail.append(("reported by: ", "; ".join(_one_line(c) for c in finding.all_concerns)))
    proof = finding.proof
    if proof is not None:
        if proof.proven and proof.test_code is not None:
            ran = f" ({proof.test_path}, run with `{proof.command}`)"
            tail.append(("", proof_line(proof) + ran))
            tail.append(("test: ", proof.test_code))
        else:
            tail.append(("", proof_line(proof)))
    code = _code(report, finding, style)
    patch = _patch(report, finding, style)
    if style.terminal:
        rows: list[RenderableType] = [_labelled(label, value) for label, value in fields]
        rows += [code] if code is not None else []
        rows += [_labelled(label, value) for label, value in tail]
        rows += [patch] if patch is not None else []
        return Group(head, Padding(Group(*rows), (0, 0, 0, len(INDENT)), expand=False))
    # Plain: continuation lines of a value line up under its first line.
    text = head
    shown = [("", code)] if code is not None else []
    after = [("", patch)] if patch is not None else []
    for label, value in [*fields, *shown, *tail, *after]:
        body = _labelled(label, value) if isinstance(value, str) else value
        assert isinstance(body, Text)  # plain code is Text
        text.append("\n" + INDENT)
        text.append_text(_indented(body, INDENT + " " * len(label)))
    return text


def file_url(root: Path, path: str) -> str:
    """The ``file://`` URL of ``path`` (hostile: any bytes, escapes included) under ``root``,
    percent-encoded so that nothing in it ends the OSC 8 sequence it goes in."""
    return "file://" + quote(os.fsencode(root / path), safe="/")


def _indented(text: Text, prefix: str) -> Text:
    """``text`` with every line after the first prefixed (plain mode keeps the indent)."""
    lines = text.split("\n", allow_blank=True)
    return Text("\n" + prefix).join(lines)


def _title(concern: str, limit: int = 100) -> str:
    """A concern's first line, cut at a word boundary near ``limit`` characters."""
    first = concern.splitlines()[0] if concern else ""
    if len(first) <= limit:
        return first
    cut = first[: limit - 1].rsplit(" ", 1)[0] if " " in first[: limit - 1] else first[: limit - 1]
    return cut.rstrip(" ,;:") + "…"


def _counts(report: Report) -> Text:
    text = Text("confirmed findings: ")
    confirmed = report.confirmed
    for severity in Severity:
        count = sum(1 for f in confirmed if f.severity is severity)
        text.append(f"{count} {severity.value}", SEVERITY_STYLE[severity] if count else "dim")
        text.append("  ")
    others = [(s, len(report.with_status(s))) for s in _NOT_SHOWN]
    if any(n for _, n in others):
        text.append("· not shown: " + ", ".join(f"{n} {s.value}" for s, n in others if n), "dim")
    text.rstrip()
    return text


def _heading(severity: Severity, count: int, style: _Style) -> RenderableType:
    title = f"{severity.value.upper()} ({count})"
    if style.terminal:
        return Rule(Text(title, SEVERITY_STYLE[severity]), align="left", style="dim")
    return Text(title, SEVERITY_STYLE[severity])


def _not_shown(report: Report) -> Iterator[RenderableType]:
    yield Text("Not reported", "bold")
    for status in _NOT_SHOWN:
        for finding in report.with_status(status):
            if status is Status.FILTERED:
                why = f"filtered: {finding.filtered}"
            elif status is Status.SUPPRESSED:
                why = f"suppressed: {finding.suppressed}"
            elif finding.verdict is not None:
                why = f"verifier ({finding.verdict.confidence}): {finding.verdict.reason}"
            else:
                why = "no verdict: its verifier failed or did not run"
            yield Text.assemble(
                (f"{status.value.upper():<10}", "bold"),
                f" {finding.severity.value:<6} ",
                (safe_line(finding.location), "underline"),
                (f"  [{safe_line(finding.category)}] ", "dim"),
                _one_line(finding.claim),
                ("\n" + INDENT + _one_line(why), "dim"),
            )
    yield Text()


#: Entries shown per reason before "…"; --verbose lists every one.
GROUP_SHOWN = 3


def _grouped(
    label: str, style: str, noun: str, entries: list[tuple[str, str]], verbose: bool
) -> Iterator[Text]:
    """``label name — reason`` lines; unless ``verbose``, one line per reason when several
    entries share it: its count, the first few names and how to see them all."""
    if verbose:
        for name, reason in entries:
            yield Text.assemble((label, style), _one_line(name), (f" — {_one_line(reason)}", "dim"))
        return
    by_reason: dict[str, list[str]] = {}
    for name, reason in entries:
        by_reason.setdefault(reason, []).append(name)
    for reason, names in sorted(by_reason.items(), key=lambda item: -len(item[1])):
        if len(names) == 1:
            yield Text.assemble(
                (label, style), _one_line(names[0]), (f" — {_one_line(reason)}", "dim")
            )
            continue
        shown = ", ".join(_one_line(n) for n in names[:GROUP_SHOWN])
        more = f", … (--verbose lists all {len(names)})" if len(names) > GROUP_SHOWN else ""
        yield Text.assemble(
            (label, style),
            f"{len(names)} {noun} — ",
            (_one_line(reason), "dim"),
            f": {shown}{more}",
        )


def _file_coverage(report: Report, verbose: bool) -> Iterator[Text]:
    coverage = report.coverage
    if coverage is None:
        return
    yield Text(coverage.headline() + ".", "bold" if coverage.complete else "bold red")
    uncovered = [(quote_path(f.path), f.reason) for f in coverage.uncovered]
    yield from _grouped("NOT COVERED ", "bold red", "files", uncovered, verbose)
    skipped = coverage.skipped
    if skipped:
        yield Text(f"Skipped before the review: {counted(len(skipped), 'file')}.", "dim")
    entries = [(quote_path(s.path), s.reason) for s in skipped]
    yield from _grouped("SKIPPED ", "dim", "files", entries, verbose)


def _coverage(report: Report, verbose: bool) -> Iterator[Text]:
    yield from _file_coverage(report, verbose)
    total = len(report.concerns)
    reviewed = sum(1 for c in report.concerns if c.status == "reviewed")
    covered = sum(1 for c in report.concerns if c.covered)
    line = f"{reviewed} of {total} {noun_for(total, 'concern')} reviewed ({covered} fully verified)"
    for status in ("failed", "skipped"):
        count = sum(1 for c in report.concerns if c.status == status)
        if count:
            line += f", {count} {status}"
    yield Text(line + ".", "dim")
    for note in report.notes:
        yield Text(safe(note), "dim")
    guidance = guidance_line(report)
    if guidance:
        yield Text(safe(guidance), "dim")
    counts = report.counts()
    refuted = counts["refuted"]
    parts = [f"{counted(refuted, 'finding')} refuted by verifiers"] * bool(refuted)
    if counts["unverified"]:
        parts.append(f"{counts['unverified']} unverified")
    if counts["filtered"]:
        parts.append(f"{counts['filtered']} filtered out (--filter-mode {report.filter_mode})")
    if counts["suppressed"]:
        parts.append(f"{counts['suppressed']} suppressed")
    if parts:
        yield Text("Not shown: " + ", ".join(parts) + ".", "dim")
    concerns = [
        (
            f"[{o.index + 1}] {_title(o.concern)}",
            o.error or "some findings were not verified",
        )
        for o in report.uncovered
    ]
    # Coverage is counted in files; a concern that did not finish is named as such, and
    # says whether its files were covered all the same (by other concerns or the sweep).
    complete = report.coverage is not None and report.coverage.complete
    yield from _grouped(
        "UNFINISHED ", "yellow" if complete else "bold red", "concerns", concerns, verbose
    )
    if concerns and complete:
        yield Text("Their files were covered all the same, by other verified reviews.", "dim")


_SUMMARY_HEADING = "Reviewer's summary (unverified; the findings above are what was verified)"
_WITHHELD_HEADING = "Reviewer's summary (unverified; it may name findings under Not reported)"
_WITHHELD = (
    "Reviewer's summary not shown: it was written before {} dropped,\n"
    "so it may mention what the report left out (--verbose shows it)."
)


def _usage_table(report: Report, boxed: bool) -> Table:
    table = Table(box=box.SIMPLE if boxed else None, show_edge=False, pad_edge=False)
    for column in ("role", "agents", "requests", "input", "cache read", "output", "cost"):
        table.add_column(column, justify="left" if column == "role" else "right")
    usage = report.usage
    for role, used in usage.by_role.items():
        reused = usage.agents_from_journal.get(role, 0)
        if role == "critic" and not (used.requests or reused):
            continue  # the critic is optional: no row when it did not run
        started = usage.agents_started.get(role, 0)
        if role == "main" and used.requests:
            started = max(started, 1)  # one main agent, never counted against --max-agents
        agents = str(started) + (f" (+{reused} journal)" if reused else "")
        table.add_row(role, agents, *_usage_cells(used))
    table.add_row("total", "", *_usage_cells(usage.total), style="bold")
    return table


def _usage_cells(used: Usage) -> list[str]:
    return [
        str(used.requests),
        f"{used.input_tokens + used.cache_write_tokens:,}",
        f"{used.cache_read_tokens:,}",
        f"{used.output_tokens:,}",
        usd(used.cost_usd),
    ]


def _incomplete(report: Report) -> Text:
    missing = len(report.uncovered)
    why = f"{counted(missing, 'concern')} not covered" if missing else ""
    coverage = report.coverage
    if coverage is not None:
        files = [quote_path(f.path) for f in coverage.uncovered]
        total = len(coverage.files)
        why = (
            f"{len(files)} of {total} {unit_noun(total, coverage.unit)} not covered"
            if files
            else ""
        )
        if files:
            shown = ", ".join(_one_line(p) for p in files[:5])
            why += f" ({shown}{', …' if len(files) > 5 else ''})"
        why = "; ".join(filter(None, [why, *coverage.notes]))
    if report.usage.cap_reached:
        why = ", ".join(filter(None, [why, report.usage.cap_reached]))
    if not report.concerns and coverage is None:
        why = "no review workflow ran"
    why = ", ".join(filter(None, [why, unreadable_note(report)]))
    return Text(f"The review is INCOMPLETE: {why}.", "bold red")


def _renderables(report: Report, style: _Style) -> Iterator[RenderableType]:
    confirmed = report.confirmed
    if not style.quiet:
        yield Text.assemble(("orch-review", "bold"), "  ", safe_line(report.scope))
        if report.incomplete:
            reasons = "; ".join(_one_line(r) for r in incomplete_reasons(report))
            yield Text(f"INCOMPLETE: {reasons}", "bold red")
        yield _counts(report)
        yield Text()
    number = 0
    for severity in Severity:
        group = [f for f in confirmed if f.severity is severity]
        if not group:
            continue
        yield _heading(severity, len(group), style)
        for finding in group:
            number += 1
            yield _finding(number, finding, report, style)
            yield Text()
    if style.quiet:
        if report.incomplete:
            yield _incomplete(report)
        return
    if not confirmed:
        if report.incomplete:
            yield Text("No confirmed findings in what was covered.", "yellow")
        else:
            yield Text("No confirmed findings.", "green")
        yield Text()
    if style.verbose and any(report.with_status(s) for s in _NOT_SHOWN):
        yield from _not_shown(report)
    yield from _coverage(report, style.verbose)
    summary = report.reviewer_summary
    if summary and report.summary_withheld and not style.verbose:
        dropped = len(report.dropped)
        was = "was" if dropped == 1 else "were"
        yield Text(_WITHHELD.format(f"{counted(dropped, 'finding')} {was}"), "dim")
    elif summary:
        yield Text()
        yield Text(_WITHHELD_HEADING if report.summary_withheld else _SUMMARY_HEADING, "bold")
        lines = Text(safe(summary)).split("\n", allow_blank=True)
        yield Text("\n").join(
            Text(INDENT) + line if line.plain.strip() else Text() for line in lines
        )
    yield Text()
    yield _usage_table(report, style.terminal)
    yield Text(
        f"wall time {report.wall_seconds:.1f}s · model {report.model}"
        + (f" · agents {report.agent_model}" if report.agent_model != report.model else ""),
        "dim",
    )
    share = report.usage.verified_share
    if report.usage.cap_reached and share is not None:
        yield Text(
            f"{report.usage.cap_reached}: {share:.0%} of the spend ended in verified coverage",
            "dim",
        )
    for warning in report.warnings:
        yield Text.assemble(("warning: ", "yellow"), safe(warning))
    if report.incomplete:
        yield _incomplete(report)


def _write(console: Console, report: Report, style: _Style) -> None:
    for renderable in _renderables(report, style):
        # Off a terminal: one line per line (no wrapping), so logs stay greppable.
        console.print(renderable, soft_wrap=not style.terminal, highlight=False)


def print_report(
    report: Report,
    console: Console,
    *,
    quiet: bool = False,
    verbose: bool = False,
    link_root: Path | None = None,
) -> None:
    """Write the report to ``console``: plain text when it is not a terminal, code
    highlighted only when it has colour (``NO_COLOR`` unset); with ``link_root`` (for a real
    terminal only: see :func:`orch_review.cli.consoles.shows_links`), each finding's
    ``path:line`` links to its file there."""
    terminal = console.is_terminal
    color = terminal and not console.no_color and console.color_system is not None
    links = link_root if terminal else None
    _write(console, report, _Style(terminal, color, quiet, verbose, links))


def render_terminal(
    report: Report, *, color: bool, width: int, quiet: bool = False, verbose: bool = False
) -> str:
    """The report as a string: with ``color``, as a colour terminal of ``width`` shows it;
    without, as plain text."""
    buffer = io.StringIO()
    console = Console(
        file=cast(IO[str], CommandSafeStream(buffer)),
        width=width,
        height=25,
        force_terminal=color,
        force_jupyter=False,
        force_interactive=False,
        no_color=not color,
        color_system="standard" if color else None,
        legacy_windows=False,
        highlight=False,
        emoji=False,
        markup=False,
    )
    print_report(report, console, quiet=quiet, verbose=verbose)
    return buffer.getvalue()


def render(report: Report) -> str:
    """Plain text (the registry's "text" format)."""
    return render_terminal(report, color=False, width=TEXT_WIDTH)


def render_compact(report: Report) -> str:
    """For hooks: one line per confirmed finding, the first one's evidence under it."""
    lines = []
    for index, finding in enumerate(report.confirmed):
        lines.append(
            f"{finding.severity.value.upper()} {safe_line(finding.location)} "
            f"[{safe_line(finding.category)}] {_one_line(finding.claim)}"
        )
        if index == 0:
            evidence = [line.rstrip() for line in safe(finding.evidence.strip()).splitlines()]
            lines.extend(
                f"  evidence: {line}" if i == 0 else f"            {line}"
                for i, line in enumerate(evidence)
            )
    if report.incomplete:
        lines.append(_incomplete(report).plain)
    return "".join(line + "\n" for line in lines)
