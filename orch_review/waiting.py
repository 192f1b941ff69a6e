"""Waiting on the main thread so that a signal is never lost behind a blocked wait.

Python runs a signal's handler on the main thread, between bytecodes. When the kernel
delivers SIGTERM or SIGHUP to another thread (one blocked in a socket read, say), that
thread only marks the signal; a main thread blocked for good in ``Future.result()`` never
looks at the mark, and the review hangs instead of stopping. Waiting in short slices brings
the main thread back to Python code often enough to run the handler.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, wait
from typing import TypeVar

_T = TypeVar("_T")

#: How long the main thread waits at a time before it looks at pending signals.
SIGNAL_CHECK_SECONDS = 0.2


def result(future: Future[_T]) -> _T:
    """``future.result()``; on the main thread, waited for in slices of
    :data:`SIGNAL_CHECK_SECONDS`, so that a signal any thread caught is handled at once."""
    if threading.current_thread() is threading.main_thread():
        while not future.done():
            wait([future], timeout=SIGNAL_CHECK_SECONDS)
    return future.result()
