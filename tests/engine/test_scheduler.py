"""The worker pool: verifiers before waiting subagents, and never more workers than allowed.

Jobs block on events the test controls, so every ordering is forced, never timed; the
timeouts below are upper bounds for a loaded machine, not waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait

import pytest

from orch_review.engine.scheduler import REVIEW, VERIFY, PriorityPool

BOUND = 60.0  # seconds; only reached when the pool is broken


class Gate:
    """Jobs that say when they start, then wait for the test to release them."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.started: list[str] = []
        self.running = 0
        self.peak = 0
        self._released: set[str] = set()
        self._all = False

    def job(self, name: str) -> Callable[[], str]:
        def run() -> str:
            with self._changed:
                self.started.append(name)
                self.running += 1
                self.peak = max(self.peak, self.running)
                self._changed.notify_all()
                released = self._changed.wait_for(
                    lambda: self._all or name in self._released, timeout=BOUND
                )
                self.running -= 1
            if not released:
                raise TimeoutError(f"{name} was never released")
            return name

        return run

    def wait_started(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.started) >= count, timeout=BOUND)

    def release(self, name: str) -> None:
        with self._changed:
            self._released.add(name)
            self._changed.notify_all()

    def release_all(self) -> None:
        with self._changed:
            self._all = True
            self._changed.notify_all()


@pytest.fixture
def gate() -> Iterator[Gate]:
    gate = Gate()
    yield gate
    gate.release_all()  # never leave a worker blocked, whatever the test did


def _done(futures: list[Future[str]]) -> list[str]:
    _, pending = wait(futures, timeout=BOUND)
    assert not pending
    return [f.result() for f in futures]


def test_a_freed_worker_takes_verification_before_waiting_reviews(gate: Gate) -> None:
    pool = PriorityPool(1)
    busy = pool.submit(REVIEW, gate.job("busy"))
    gate.wait_started(1)
    queued = [
        pool.submit(REVIEW, gate.job("review-1")),
        pool.submit(REVIEW, gate.job("review-2")),
        pool.submit(VERIFY, gate.job("verify-1")),
        pool.submit(VERIFY, gate.job("verify-2")),
    ]

    gate.release_all()

    _done([busy, *queued])
    # Verifiers first, each kind in the order it was queued.
    assert gate.started == ["busy", "verify-1", "verify-2", "review-1", "review-2"]
    pool.shutdown()


def test_with_every_worker_busy_the_first_one_freed_runs_the_verifiers(gate: Gate) -> None:
    pool = PriorityPool(3)
    busy = [pool.submit(REVIEW, gate.job(f"busy-{n}")) for n in range(3)]
    gate.wait_started(3)
    queued = [pool.submit(REVIEW, gate.job("review")), pool.submit(VERIFY, gate.job("verify"))]

    gate.release("busy-0")
    gate.wait_started(4)

    assert gate.started[3] == "verify"
    gate.release_all()
    _done(busy + queued)
    pool.shutdown()


def test_never_more_jobs_at_once_than_workers(gate: Gate) -> None:
    pool = PriorityPool(3, name="capped-pool")
    futures = [pool.submit(REVIEW, gate.job(f"job-{n}")) for n in range(10)]
    # Workers start inside submit(), so they all exist now; wait until each has taken a job.
    workers = [t for t in threading.enumerate() if t.name.startswith("capped-pool-")]
    gate.wait_started(len(workers))

    assert len(workers) == 3
    assert gate.peak == 3

    gate.release_all()
    assert sorted(_done(futures)) == sorted(f"job-{n}" for n in range(10))
    assert gate.peak == 3
    pool.shutdown()


def test_work_queued_after_cancel_pending_never_runs(gate: Gate) -> None:
    pool = PriorityPool(1)
    busy = pool.submit(REVIEW, gate.job("busy"))
    gate.wait_started(1)
    waiting = pool.submit(VERIFY, gate.job("waiting"))

    pool.cancel_pending()
    late = pool.submit(VERIFY, gate.job("late"))
    gate.release_all()

    assert busy.result(timeout=BOUND) == "busy"
    pool.shutdown()  # the worker has gone through the whole queue
    assert waiting.cancelled() and late.cancelled()
    assert gate.started == ["busy"]
