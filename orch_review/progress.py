"""Live progress of a review on stderr: one line per running agent, then totals.

On a terminal it is a rich ``Live`` table; elsewhere (CI logs, pipes) plain log lines for
agents starting and finishing, so a long review never looks hung.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from orch_review.engine.agent import AgentEvent

_FINAL = {"done", "failed", "cached", "skipped"}


class Progress:
    """An event sink for :class:`AgentEvent`, safe to call from many threads."""

    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self._console = console
        self._enabled = enabled
        self._lock = threading.Lock()
        self._running: dict[str, tuple[AgentEvent, float]] = {}
        self._finished: dict[str, int] = {}
        self._live: Live | None = None

    def __enter__(self) -> Progress:
        if self._enabled and self._console.is_terminal:
            self._live = Live(
                self._table(),
                console=self._console,
                refresh_per_second=4,
                transient=True,
                get_renderable=self._table,
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
        with self._lock:
            if event.state == "started":
                self._running[event.agent_id] = (event, time.monotonic())
            elif event.state == "turn" and event.agent_id in self._running:
                self._running[event.agent_id] = (event, self._running[event.agent_id][1])
            elif event.state in _FINAL:
                self._running.pop(event.agent_id, None)
                key = f"{event.role} {event.state}"
                self._finished[key] = self._finished.get(key, 0) + 1
        if self._enabled and self._live is None and event.state != "turn":
            self._log(event)

    def _log(self, event: AgentEvent) -> None:
        label = " ".join(event.label.split())[:80]
        detail = f" ({event.detail})" if event.detail else ""
        self._console.print(
            f"[{event.role} {event.agent_id}] {event.state}: {label}{detail}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )

    def _table(self) -> Table:
        table = Table(box=None, show_header=True, pad_edge=False)
        for column in ("agent", "concern", "turns", "tokens", "elapsed"):
            table.add_column(column, justify="right" if column in {"turns", "tokens"} else "left")
        now = time.monotonic()
        with self._lock:
            running = sorted(self._running.items())
            finished = dict(self._finished)
        for agent_id, (event, since) in running:
            table.add_row(
                f"{event.role} {agent_id}",
                Text(" ".join(event.label.split())[:60], overflow="ellipsis", no_wrap=True),
                str(event.turns),
                f"{event.tokens:,}",
                f"{now - since:.0f}s",
            )
        totals = ", ".join(f"{n} {k}" for k, n in sorted(finished.items())) or "starting"
        table.caption = f"{len(running)} running · {totals}"
        return table
