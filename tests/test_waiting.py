"""A signal that another thread caught still stops a main thread waiting on a future."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future

import pytest

from orch_review import waiting


class Stopped(Exception):
    pass


@pytest.fixture
def raising_on_usr1() -> Iterator[None]:
    def handler(signum: int, frame: object) -> None:
        raise Stopped

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGUSR1, previous)


def _waiting_in_result(ident: int) -> bool:
    """Whether the thread ``ident`` is blocked inside a wait for a future's result."""
    frame = sys._current_frames().get(ident)
    names = set()
    while frame is not None:
        names.add(frame.f_code.co_name)
        frame = frame.f_back
    return "result" in names and "wait" in names


def test_a_signal_delivered_to_another_thread_interrupts_the_wait(
    raising_on_usr1: None,
) -> None:
    """The kernel may hand a process's SIGTERM to any thread; here it goes to a worker, on
    purpose. The future completes only much later: a wait that never looks up returns its
    value instead of stopping."""
    future: Future[str] = Future()
    signalled = threading.Event()

    def worker() -> None:
        while not _waiting_in_result(main) and not done.wait(0.005):
            pass
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)  # caught on this thread
        signalled.set()
        if not done.wait(10):
            future.set_result("the wait outlasted the signal")

    done = threading.Event()
    main = threading.get_ident()
    thread = threading.Thread(target=worker)
    thread.start()
    try:
        with pytest.raises(Stopped):
            waiting.result(future)
        assert not future.done()  # stopped by the signal, not once the result came
    finally:
        done.set()
        thread.join()
    assert signalled.is_set()


def test_the_result_and_the_exception_are_the_future_s_own() -> None:
    done: Future[int] = Future()
    done.set_result(3)
    assert waiting.result(done) == 3
    failed: Future[int] = Future()
    failed.set_exception(TimeoutError("the request timed out"))
    with pytest.raises(TimeoutError, match="the request timed out"):
        waiting.result(failed)


def test_off_the_main_thread_it_is_a_plain_wait() -> None:
    future: Future[str] = Future()
    got: list[str] = []
    thread = threading.Thread(target=lambda: got.append(waiting.result(future)))
    thread.start()
    future.set_result("landed")
    thread.join()
    assert got == ["landed"]
