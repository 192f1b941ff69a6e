"""A fixed-size worker pool that runs higher-priority work first.

Verifiers get priority over subagents that have not started yet: a finished subagent's
findings are verified while the queue of concerns drains, so no wave waits for another.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

VERIFY = 0
REVIEW = 1

_STOP = (1 << 30, 0, None, None)  # after all queued work


class PriorityPool:
    """``workers`` daemon threads taking (priority, fifo order) work items."""

    def __init__(self, workers: int, name: str = "orch-review") -> None:
        self._queue: queue.PriorityQueue[tuple[int, int, Any, Any]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._cancelled = threading.Event()
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, priority: int, fn: Callable[[], T]) -> Future[T]:
        """Queue ``fn``; lower ``priority`` runs first, ties in submission order."""
        future: Future[T] = Future()
        if self._cancelled.is_set():
            future.cancel()
            return future
        self._queue.put((priority, next(self._order), fn, future))
        return future

    def _work(self) -> None:
        while True:
            _, _, fn, future = self._queue.get()
            if fn is None:
                return
            if self._cancelled.is_set() or not future.set_running_or_notify_cancel():
                if not future.cancelled():
                    future.cancel()
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

    def cancel_pending(self) -> None:
        """Cancel everything not yet started (running work finishes)."""
        self._cancelled.set()

    def shutdown(self, wait: bool = True) -> None:
        """Stop the workers once the queued work is done (skipped if cancelled)."""
        for _ in self._threads:
            self._queue.put(_STOP)
        if wait:
            for thread in self._threads:
                thread.join()
