"""Where a review's agents wait their turn: a pool of agent threads and a gate on requests.

The concurrency cap is on model requests in flight, and the gate hands a free slot to the
waiting request with the longest chain of work still behind it: the completeness critic (its
concerns' subagents and verifiers come after it), then subagents (a verifier comes after
them), then verifiers; among equals, the agent with the fewest turns done, then the earliest
concern. An agent gives its slot back while its tools run, so the slot serves the request the
whole review waits on most. A simulation of this policy on heavy-tailed latencies
(``bench/workload.py``) finishes sooner than keeping a slot per agent, verifiers first.

Agents wait at the gate on threads of a :class:`PriorityPool`, which admits at most
``AGENTS_PER_SLOT`` agents per request slot (each holds a shell): the critic first, then a
started concern's verifier, then concerns in the order they came.
"""

from __future__ import annotations

import heapq
import itertools
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar

_T = TypeVar("_T")

# Admission order of agents into the pool.
MAIN = -2
CRITIC = -1
VERIFY = 0
REVIEW = 1

# Agents still to come in a chain after an agent of each role.
AGENTS_AFTER = {"critic": 2, "subagent": 1, "verifier": 0, "prover": 0}

AGENTS_PER_SLOT = 4

_STOP = (1 << 30, 0, None, None)  # after all queued work

Rank = tuple[int, int, int]


def request_rank(role: str, turns_done: int, order: int) -> Rank:
    """The gate's order for one request (lower goes first): longest remaining chain first."""
    return (-AGENTS_AFTER[role], turns_done, order)


class PriorityPool:
    """Agent threads taking (priority, fifo order) work items, and a gate on requests.

    At most ``requests`` requests pass :meth:`request_slot` at once; at most ``agents``
    (default ``AGENTS_PER_SLOT * requests``) daemon threads run work. Threads start on
    demand, as in :class:`concurrent.futures.ThreadPoolExecutor`: a review whose main agent
    never fans out should not pay for them up front.
    """

    def __init__(self, requests: int, name: str = "orch-review", agents: int | None = None) -> None:
        if requests < 1:
            raise ValueError(f"requests must be at least 1, got {requests}")
        self._queue: queue.PriorityQueue[tuple[int, int, Any, Any]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._cancelled = threading.Event()
        self._workers = agents if agents is not None else AGENTS_PER_SLOT * requests
        self._name = name
        self._lock = threading.Lock()
        self._idle = threading.Semaphore(0)
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._running = 0
        self._slots = requests
        self._in_flight = 0
        self._waiting: list[tuple[Rank, int, threading.Event]] = []
        self._gate = threading.Lock()

    @property
    def requests(self) -> int:
        """How many requests may be in flight at once."""
        return self._slots

    def submit(self, priority: int, fn: Callable[[], _T]) -> Future[_T]:
        """Queue ``fn``; lower ``priority`` runs first, ties in submission order."""
        future: Future[_T] = Future()
        if self._cancelled.is_set():
            future.cancel()
            return future
        self._queue.put((priority, next(self._order), fn, future))
        self._add_worker_if_needed()
        return future

    @contextmanager
    def request_slot(self, rank: Rank) -> Iterator[None]:
        """Hold one of the request slots; waiters are served lowest ``rank`` first, ties in
        arrival order. Once the pool is cancelled, nobody waits (the caller must not send)."""
        with self._gate:
            ticket = None
            if self._cancelled.is_set() or (self._in_flight < self._slots and not self._waiting):
                self._in_flight += 1
            else:
                ticket = threading.Event()
                heapq.heappush(self._waiting, (rank, next(self._order), ticket))
        if ticket is not None:
            ticket.wait()  # set with the slot handed over, or on cancellation
        try:
            yield
        finally:
            self._release_slot()

    def _release_slot(self) -> None:
        """Hand the slot to the first waiter (waking only that one), or free it."""
        with self._gate:
            if self._waiting:
                _, _, ticket = heapq.heappop(self._waiting)
                ticket.set()
            else:
                self._in_flight -= 1

    def free_slot(self) -> bool:
        """True while a request slot is free, hence no request waits for one (a slot given
        back goes to a waiting request at once)."""
        with self._gate:
            return self._in_flight < self._slots

    def waiting_requests(self) -> int:
        """How many requests wait for a slot."""
        with self._gate:
            return len(self._waiting)

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
        """Cancel everything not yet started (running work finishes); release the gate."""
        self._cancelled.set()
        with self._gate:
            self._in_flight += len(self._waiting)  # each lets its slot go when it is done
            for _, _, ticket in self._waiting:
                ticket.set()
            self._waiting.clear()

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
