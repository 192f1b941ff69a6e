"""Live progress of a review on stderr: one line per running agent, then totals.

On a terminal it is a rich ``Live`` table (agent, concern, turns, tokens, elapsed) with a
totals line, laid out for 80 columns first: only the concern is shortened. Elsewhere (CI logs,
pipes, ``TERM=dumb``) plain log lines for agents starting and finishing, each finish with the
totals so far, so a long review never looks hung.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from orch_review.events import AgentEvent
from orch_review.sanitize import line as safe_line
from orch_review.wording import counted, usd

_FINAL = ("done", "failed", "cached", "skipped")
#: Roles counted in the totals line, and what their work is called there.
_TOTALS = (("subagent", "subagents"), ("verifier", "verifications"))
_LABEL_CHARS = 80
#: The live table cuts a concern to the room its column has; this only bounds the work.
_CELL_CHARS = 500


@dataclass(slots=True)
class _Running:
    role: str
    label: str
    since: float
    order: int
    turns: int = 0
    tokens: int = 0


def _label(text: str, limit: int = _LABEL_CHARS) -> str:
    """A subtask title (model text) on one safe line, cut short between words."""
    return cut_words(safe_line(text), limit)


def cut_words(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` cells: cut after the last word that fits, with an
    ellipsis (inside a word only when the first word alone is too long)."""
    if cell_len(text) <= limit:
        return text
    room = max(limit - 1, 0)
    head = set_cell_size(text, room).rstrip()
    if " " in head and text[len(head) : len(head) + 1] not in (" ", ""):
        head = head.rsplit(" ", 1)[0]  # the last word was cut: leave it out
    return head.rstrip(" ,;:-\u2013\u2014") + "…" if room else "…"[:limit]


class _Concern:
    """A concern's title in the live table, cut between words to its column's width."""

    def __init__(self, text: str) -> None:
        self._text = text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(10, cell_len(self._text)), cell_len(self._text))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(cut_words(self._text, options.max_width), no_wrap=True, overflow="crop")


def _elapsed(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    """An event sink for :class:`AgentEvent`, safe to call from many threads; a context
    manager that shows the live table while the review runs."""

    def __init__(
        self,
        console: Console,
        *,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._console = console
        self._enabled = enabled
        self._clock = clock
        self._lock = threading.Lock()
        self._running: dict[str, _Running] = {}
        self._finished: Counter[tuple[str, str]] = Counter()
        self._ended: set[str] = set()  # agents whose last event was final
        self._started = 0
        self._cost: float | None = None  # the review's cost so far, as the events tell it
        self._covered: tuple[int, int] | None = None  # files covered, of the total
        self._live: Live | None = None

    def __enter__(self) -> Progress:
        console = self._console
        if self._enabled and console.is_terminal and not console.is_dumb_terminal:
            self._live = Live(
                self.renderable(),
                console=self._console,
                refresh_per_second=4,
                transient=True,
                get_renderable=self.renderable,
            )
            self._live.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def __call__(self, event: AgentEvent) -> None:
        now = self._clock()
        with self._lock:
            if event.state in _FINAL and event.agent_id in self._ended:
                return  # its end was told already
            agent = self._update(event, now)
            self._count(event)
            totals = self._totals_locked() if event.state in _FINAL else ""
            # Printed under the lock: lines from different threads keep the order their
            # totals were counted in, so the counts never go backwards.
            if self._enabled and self._live is None and event.state != "turn":
                self._log(event, agent, now, totals)

    def _update(self, event: AgentEvent, now: float) -> _Running | None:
        agent = self._running.get(event.agent_id)
        if event.state == "started":
            self._ended.discard(event.agent_id)
            self._started += 1
            agent = _Running(event.role, event.label, now, self._started)
            self._running[event.agent_id] = agent
        elif agent is not None and event.state == "turn":
            agent.turns, agent.tokens = event.turns, event.tokens
        elif event.state in _FINAL:
            self._ended.add(event.agent_id)
            self._running.pop(event.agent_id, None)
            self._finished[(event.role, event.state)] += 1
        return agent

    def _count(self, event: AgentEvent) -> None:
        # Events from several threads may arrive out of order: both figures only grow.
        if event.cost_usd is not None:
            self._cost = max(self._cost or 0.0, event.cost_usd)
        if event.files_covered is not None and event.files_total is not None:
            before = self._covered[0] if self._covered else 0
            self._covered = (max(before, event.files_covered), event.files_total)

    def _log(self, event: AgentEvent, agent: _Running | None, now: float, totals: str) -> None:
        line = f"[{event.role} {event.agent_id}] {event.state}: {_label(event.label)}"
        facts = []
        if agent is not None and event.state in _FINAL:
            facts.append(_elapsed(now - agent.since))
            if agent.turns:
                facts.append(f"{counted(agent.turns, 'turn')}, {counted(agent.tokens, 'token')}")
        if event.detail and event.state != "done":
            facts.append(safe_line(event.detail))
        if facts:
            line += f" ({'; '.join(facts)})"
        if totals:
            line += f" — {totals}"
        self._console.print(line, markup=False, highlight=False, soft_wrap=True)

    def totals(self) -> str:
        """``N running · subagents: 3 done, 1 failed · verifications: 2 done · $0.42 so far ·
        3/10 files covered``."""
        with self._lock:
            return self._totals_locked()

    def _totals_locked(self) -> str:
        parts = [f"{len(self._running)} running"]
        for role, name in _TOTALS:
            counts = [
                f"{self._finished[(role, s)]} {s}" for s in _FINAL if self._finished[(role, s)]
            ]
            if counts:
                parts.append(f"{name}: {', '.join(counts)}")
        if self._cost is not None:
            parts.append(f"{usd(self._cost)} so far")
        if self._covered is not None:
            parts.append(f"{self._covered[0]:,}/{self._covered[1]:,} files covered")
        return " · ".join(parts)

    def renderable(self) -> Group:
        """The live view: a table of running agents and the totals line."""
        table = Table(box=None, show_header=True, pad_edge=False, expand=True)
        table.add_column("agent", no_wrap=True)
        table.add_column("concern", no_wrap=True, overflow="ellipsis", ratio=1, min_width=10)
        table.add_column("turns", justify="right", no_wrap=True)
        table.add_column("tokens", justify="right", no_wrap=True)
        table.add_column("elapsed", justify="right", no_wrap=True)
        now = self._clock()
        with self._lock:
            running = sorted(self._running.items(), key=lambda item: item[1].order)
            rows = [
                (
                    _agent_name(a.role, agent_id),
                    _label(a.label, _CELL_CHARS),
                    a.turns,
                    a.tokens,
                    now - a.since,
                )
                for agent_id, a in running
            ]
            totals = self._totals_locked()
        for name, label, turns, tokens, elapsed in rows:
            # Not a str: a cell string would be parsed as rich markup ("[link=...]").
            table.add_row(name, _Concern(label), str(turns), _tokens(tokens), _elapsed(elapsed))
        return Group(table, Text(totals, "dim", overflow="fold"))


def _agent_name(role: str, agent_id: str) -> str:
    """``s3 review``, ``v3 verify``, ``main``: short enough for 80 columns."""
    short = {"subagent": "review", "verifier": "verify"}.get(role)
    return f"{agent_id} {short}" if short else agent_id


def _tokens(count: int) -> str:
    """``950``, ``12.3k``, ``1.2M``: at most six characters."""
    if count < 1000:
        return str(count)
    if count < 999_950:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"
