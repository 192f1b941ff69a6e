"""The worker pool: verifiers before waiting subagents, and never more workers than allowed.

Jobs block on events the test controls, so every ordering is forced, never timed; the
timeouts below are upper bounds for a loaded machine, not waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait

import pytest

from orch_review.engine.api.scheduler import (
    AGENTS_PER_SLOT,
    REVIEW,
    VERIFY,
    PriorityPool,
    request_rank,
)

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
    pool = PriorityPool(1, agents=1)
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
    pool = PriorityPool(3, agents=3)
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
    pool = PriorityPool(3, name="capped-pool", agents=3)
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
    pool = PriorityPool(1, agents=1)
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


class Requests:
    """Threads that each send one "request" through the pool's gate and say when they got
    their slot; each keeps it until the test lets it go."""

    def __init__(self, pool: PriorityPool) -> None:
        self.pool = pool
        self.sent: list[str] = []
        self.in_flight = 0
        self.peak = 0
        self._changed = threading.Condition()
        self._finished: set[str] = set()
        self._all = False
        self._threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []  # raised in a thread: re-raised in the test

    def send(self, name: str, rank: tuple[int, int, int]) -> None:
        def run() -> None:
            try:
                with self.pool.request_slot(rank), self._changed:
                    self.sent.append(name)
                    self.in_flight += 1
                    self.peak = max(self.peak, self.in_flight)
                    self._changed.notify_all()
                    let_go = self._changed.wait_for(
                        lambda: self._all or name in self._finished, timeout=BOUND
                    )
                    self.in_flight -= 1
                if not let_go:
                    raise AssertionError(f"{name} was never let go")
            except BaseException as exc:
                with self._changed:
                    self.errors.append(exc)
                raise

        thread = threading.Thread(target=run, daemon=True)
        self._threads.append(thread)
        thread.start()

    def wait_waiting(self, count: int) -> None:
        """Until ``count`` requests wait at the gate."""
        assert _wait_until(lambda: self.pool.waiting_requests() >= count)

    def wait_sent(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.sent) >= count, timeout=BOUND)

    def finish(self, name: str) -> None:
        with self._changed:
            self._finished.add(name)
            self._changed.notify_all()

    def finish_all(self) -> None:
        """Let every request go, wait for their threads, and fail with what failed in one."""
        with self._changed:
            self._all = True
            self._changed.notify_all()
        for thread in self._threads:
            thread.join(timeout=BOUND)
        assert not [t for t in self._threads if t.is_alive()], "a request thread is stuck"
        if self.errors:
            raise self.errors[0]


def _wait_until(condition: Callable[[], bool]) -> bool:
    done = threading.Event()
    for _ in range(int(BOUND * 100)):
        if condition():
            return True
        done.wait(0.01)  # polling a condition, with an upper bound; not a timing assertion
    return False


def test_a_freed_slot_goes_to_the_request_with_the_longest_chain_behind_it() -> None:
    pool = PriorityPool(1)
    requests = Requests(pool)
    requests.send("holder", request_rank("subagent", 0, 0))
    requests.wait_sent(1)
    waiting = {
        "verifier 3, turn 0": request_rank("verifier", 0, 3),
        "subagent 1, turn 1": request_rank("subagent", 1, 1),
        "subagent 5, turn 0": request_rank("subagent", 0, 5),
        "subagent 2, turn 0": request_rank("subagent", 0, 2),
        "critic, turn 4": request_rank("critic", 4, -1),
        "verifier 0, turn 2": request_rank("verifier", 2, 0),
    }
    for number, (name, rank) in enumerate(waiting.items(), 1):
        requests.send(name, rank)
        requests.wait_waiting(number)

    for number in range(1, len(waiting) + 1):
        requests.finish(requests.sent[-1])
        requests.wait_sent(number + 1)
    requests.finish_all()

    assert requests.sent[1:] == [
        "critic, turn 4",  # its concerns' subagents and verifiers are still to come
        "subagent 2, turn 0",  # fewest turns done first, then the earlier concern
        "subagent 5, turn 0",
        "subagent 1, turn 1",
        "verifier 3, turn 0",
        "verifier 0, turn 2",
    ]
    assert requests.peak == 1


def test_never_more_requests_in_flight_than_slots_whatever_the_agents() -> None:
    pool = PriorityPool(2)
    requests = Requests(pool)
    for n in range(6):
        requests.send(f"r{n}", request_rank("subagent", 0, n))
    requests.wait_sent(2)
    requests.wait_waiting(4)

    assert requests.in_flight == 2
    requests.finish("r0")
    requests.wait_sent(3)
    assert requests.sent[2] == "r2" and requests.in_flight == 2
    requests.finish_all()
    assert requests.peak == 2


def test_a_slot_is_free_only_while_one_is_unheld_and_no_request_waits() -> None:
    pool = PriorityPool(2)
    requests = Requests(pool)
    assert pool.free_slot()
    requests.send("r0", request_rank("subagent", 0, 0))
    requests.wait_sent(1)
    assert pool.free_slot()  # one of two held
    requests.send("r1", request_rank("subagent", 0, 1))
    requests.wait_sent(2)
    assert not pool.free_slot()
    requests.send("r2", request_rank("subagent", 0, 2))
    requests.wait_waiting(1)
    requests.finish("r0")  # its slot goes to the waiting request at once
    requests.wait_sent(3)
    assert not pool.free_slot()
    requests.finish("r1")
    assert _wait_until(pool.free_slot)  # nobody waits for the slot r1 gave back
    requests.finish_all()
    assert pool.free_slot()


def test_cancel_pending_lets_every_waiting_request_through() -> None:
    pool = PriorityPool(1)
    requests = Requests(pool)
    requests.send("holder", request_rank("subagent", 0, 0))
    requests.wait_sent(1)
    requests.send("waiter", request_rank("subagent", 0, 1))
    requests.wait_waiting(1)

    pool.cancel_pending()  # its caller checks the cancellation and sends nothing

    requests.wait_sent(2)
    requests.finish_all()


def test_agents_beyond_the_request_slots_are_admitted() -> None:
    # Agents wait at the gate between requests: the pool runs more agents than slots.
    gate = Gate()
    pool = PriorityPool(1, name="agents-pool")
    futures = [pool.submit(REVIEW, gate.job(f"agent-{n}")) for n in range(6)]
    gate.wait_started(AGENTS_PER_SLOT)

    assert gate.peak == AGENTS_PER_SLOT
    gate.release_all()
    _done(futures)
    pool.shutdown()
