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
    """At most ``workers`` daemon threads taking (priority, fifo order) work items.

    Threads start on demand, one per submission that finds no idle worker, as in
    :class:`concurrent.futures.ThreadPoolExecutor`: starting a thread takes milliseconds,
    and a review whose main agent never fans out should not pay for ten of them up front.
    """

    def __init__(self, workers: int, name: str = "orch-review") -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self._queue: queue.PriorityQueue[tuple[int, int, Any, Any]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._cancelled = threading.Event()
        self._workers = workers
        self._name = name
        self._lock = threading.Lock()
        self._idle = threading.Semaphore(0)
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._running = 0

    def submit(self, priority: int, fn: Callable[[], T]) -> Future[T]:
        """Queue ``fn``; lower ``priority`` runs first, ties in submission order."""
        future: Future[T] = Future()
        if self._cancelled.is_set():
            future.cancel()
            return future
        self._queue.put((priority, next(self._order), fn, future))
        self._add_worker_if_needed()
        return future

    def _add_worker_if_needed(self) -> None:
        if self._idle.acquire(blocking=False):
            return  # an idle worker will take the item
        with self._lock:
            if self._closed or len(self._threads) >= self._workers:
                return
            thread = threading.Thread(
                target=self._work, name=f"{self._name}-{len(self._threads)}", daemon=True
            )
            self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        while True:
            _, _, fn, future = self._queue.get()
            if fn is None:
                return
            if self._cancelled.is_set() or not future.set_running_or_notify_cancel():
                if not future.cancelled():
                    future.cancel()
            else:
                with self._lock:
                    self._running += 1
                try:
                    future.set_result(fn())
                except BaseException as exc:
                    future.set_exception(exc)
                finally:
                    with self._lock:
                        self._running -= 1
            self._idle.release()

    def busy(self) -> bool:
        """True while some work is running."""
        with self._lock:
            return self._running > 0

    def cancel_pending(self) -> None:
        """Cancel everything not yet started (running work finishes)."""
        self._cancelled.set()

    def shutdown(self, wait: bool = True) -> None:
        """Stop the workers once the queued work is done (skipped if cancelled)."""
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        for _ in threads:
            self._queue.put(_STOP)
        if wait:
            for thread in threads:
                thread.join()
