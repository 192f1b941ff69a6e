"""A second copy of a straggling request: hedged requests.

With heavy-tailed latency a few slow requests hold up the whole review: a chain of requests
waits on each of them. When a fan-out agent's request has been outstanding as long as its
role's 95th percentile (of this review's own replies, once :data:`MIN_SAMPLE` of that role
have come back), the same request is sent once more and the first answer is the reply; the
other is cancelled: its response is closed through the SDK as soon as there is one. At most
one hedge per request.

While a request slot is free and no request waits for one (the end of a review, when only
the last chains are left), a copy takes nothing from anyone but a request: a request is then
hedged once outstanding as long as its role's 75th percentile. While requests wait, a copy
would take a slot from one of them, and only the 95th percentile's stragglers, whose copies
save more slot time than they take, are copied.

A hedge is a request like any other: it waits at the pool's gate for a request slot (first in
line: the chain behind it is waiting), and reserves what it may cost under the caps; but it is
sent only while the spend and the reservations stay far from every cap
(:meth:`orch_review.engine.api.budget.Budget.reserve_hedge`), so near a cap nothing is hedged.

What a cancelled copy costs is not documented for the Messages API. It is counted as charged
for its whole input, estimated from the prompt's length and priced as uncached input, and no
output (none of it was read): ``docs/performance.md``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol, cast

from orch_review.engine.api.budget import nearest_rank
from orch_review.engine.api.scheduler import AGENTS_AFTER, Rank

if TYPE_CHECKING:
    from orch_review.engine.api.client import Reply

# A request is hedged once outstanding as long as this percentile of its role's replies...
HEDGE_PERCENTILE = 0.95
# ... or this one while a request slot is free and no request waits for one.
IDLE_HEDGE_PERCENTILE = 0.75
# Replies of a role seen before its requests are hedged.
MIN_SAMPLE = 20
# Replies per role the percentile is taken from (the latest ones).
LATENCIES_KEPT = 200
# How long a waiting request sleeps before it looks at its role's percentile again.
POLL_SECONDS = 0.05

# A hedge goes ahead of every waiting request: its chain is already late.
HEDGE_RANK: Rank = (-(max(AGENTS_AFTER.values()) + 1), 0, 0)


class AttemptAborted(Exception):
    """An attempt was cancelled: the other copy of its request answered first."""

    def __init__(self) -> None:
        super().__init__("cancelled: the other copy of the request answered first")


class Abort:
    """Stops one attempt of a request: before it is sent, or by closing its response."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fired = False
        self._close: Callable[[], object] | None = None

    @property
    def fired(self) -> bool:
        """Whether the attempt was cancelled."""
        with self._lock:
            return self._fired

    def fire(self) -> None:
        """Cancel the attempt: close its response if it has one (else it closes it when its
        response begins)."""
        with self._lock:
            if self._fired:
                return
            self._fired = True
            close = self._close
        if close is not None:
            _quietly(close)

    def attach(self, close: Callable[[], object]) -> None:
        """The attempt's response began; ``close`` ends it. Raises :class:`AttemptAborted`
        (after closing it) when the attempt was already cancelled."""
        with self._lock:
            if not self._fired:
                self._close = close
                return
        _quietly(close)
        raise AttemptAborted


def _quietly(close: Callable[[], object]) -> None:
    # Closing a response another thread reads may fail there: it is over either way.
    with contextlib.suppress(Exception):
        close()


class Clock(Protocol):
    """Time for the hedging decision (tests inject a manual one)."""

    def now(self) -> float:
        """Seconds on a monotonic clock."""
        ...

    def wait(self, changed: threading.Condition, until: float | None) -> None:
        """Called holding ``changed``: return when notified, at ``until``, or after a short
        while (the caller looks again)."""
        ...


class MonotonicClock:
    """The process's monotonic clock."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, changed: threading.Condition, until: float | None) -> None:
        timeout = POLL_SECONDS if until is None else min(max(0.0, until - self.now()), 1.0)
        changed.wait(timeout)


class Latencies:
    """Seconds this review's requests took to answer, per role (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_role: dict[str, deque[float]] = {}

    def learn(self, role: str, seconds: float) -> None:
        """A request of ``role`` was answered in ``seconds``."""
        with self._lock:
            self._by_role.setdefault(role, deque(maxlen=LATENCIES_KEPT)).append(seconds)

    def hedge_after(self, role: str, idle: bool = False) -> float | None:
        """Seconds a request of ``role`` may be outstanding before it is hedged (``idle``:
        while a copy would take a slot no request waits for); None while fewer than
        :data:`MIN_SAMPLE` of its replies were seen."""
        with self._lock:
            seen = list(self._by_role.get(role, ()))
        if len(seen) < MIN_SAMPLE:
            return None
        return nearest_rank(seen, IDLE_HEDGE_PERCENTILE if idle else HEDGE_PERCENTILE)


# charge(input, output, cache_write, cache_read, requests): count what a copy that was not the
# reply cost.
Charge = Callable[[int, int, int, int, int], None]


class _Race:
    """The attempts of one request and what came back (guarded by ``changed``)."""

    def __init__(self, charge: Charge) -> None:
        self.changed = threading.Condition()
        self.reply: Reply | None = None
        self.winner = -1
        self.errors: dict[int, BaseException] = {}
        self.ended: set[int] = set()  # attempts that answered, failed or were not sent
        self.started = 0
        self.late: dict[int, Reply] = {}  # answers after the first, before it was taken
        # The reply was taken (or the request failed): no copy is sent any more, and later
        # answers are charged as they come.
        self.taken = False
        self.charge = charge

    def end(self, attempt: int, reply: Reply | None, error: BaseException | None) -> bool:
        """Attempt ``attempt`` ended; True when its ``reply`` is the first answer."""
        with self.changed:
            self.ended.add(attempt)
            first = reply is not None and self.reply is None
            if first:
                self.reply, self.winner = reply, attempt
            elif reply is not None and not self.taken:
                self.late[attempt] = reply
            if error is not None:
                self.errors[attempt] = error
            self.changed.notify_all()
            late_after_taken = reply is not None and not first and self.taken
        if late_after_taken and reply is not None:
            # Its input was charged when it was cancelled; what it wrote was paid for too.
            self.charge(0, reply.output_tokens, 0, 0, 0)
        return first

    @property
    def over(self) -> bool:
        return self.reply is not None


# send(abort) -> the reply to one attempt of the request.
Send = Callable[[Abort], "Reply"]
# The hedge's gate: a request slot and a reservation; yields whether it may be sent.
HedgeGate = Callable[[], AbstractContextManager[bool]]


class Hedging:
    """Hedged requests for one review session (shared by its agents)."""

    def __init__(
        self,
        latencies: Latencies | None = None,
        *,
        after: Callable[[str, bool], float | None] | None = None,
        clock: Clock | None = None,
    ) -> None:
        """``after(role, idle)``: the hedging threshold in seconds, None for no hedge, while
        the request slots are busy and while one is idle (default: ``latencies``'
        percentiles); ``clock``: where time comes from."""
        self.latencies = latencies if latencies is not None else Latencies()
        self._after = after if after is not None else self.latencies.hedge_after
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self._lock = threading.Lock()
        self.hedges = 0  # hedges sent
        self.won = 0  # hedges that answered first
        self.declined = 0  # hedges due but not sent: near a cap, or answered meanwhile

    def complete(
        self,
        role: str,
        send: Send,
        gate: HedgeGate,
        charge: Charge,
        estimate: int,
        idle: Callable[[], bool] = lambda: False,
    ) -> Reply:
        """One request of an agent of ``role``: ``send`` it, hedge it through ``gate`` once
        it is late, return the first reply. ``idle()``: a request slot is free and no
        request waits for one (the earlier threshold applies). ``charge`` counts the other
        copy: its usage if it answered too, else ``estimate`` input tokens (and what it
        wrote, should its answer still come). Raises the first attempt's error when no
        attempt answers."""
        race = _Race(charge)
        aborts = [Abort(), Abort()]
        clock = self._clock
        started = clock.now()
        self._start(race, 0, lambda: send(aborts[0]), role, started)
        hedged = False
        with race.changed:
            while not race.over:
                # Failed, and no copy on the way (one waiting for a slot is not sent now).
                if 0 in race.errors and (race.started < 2 or 1 in race.ended):
                    race.taken = True
                    race.changed.notify_all()
                    raise race.errors[0]
                due, until = (False, None) if hedged else self._due(role, started, idle)
                if due:
                    hedged = True
                    threading.Thread(
                        target=self._hedge,
                        args=(race, role, send, aborts[1], gate),
                        name="orch-review-hedge",
                        daemon=True,
                    ).start()
                    continue
                clock.wait(race.changed, until)
            race.taken = True
            race.changed.notify_all()
            winner, reply = race.winner, race.reply
            loser = 1 - winner
            late = race.late.get(loser)
            unfinished = loser < race.started and loser not in race.ended
        if late is not None:
            race.charge(
                late.input_tokens,
                late.output_tokens,
                late.cache_write_tokens,
                late.cache_read_tokens,
                1,
            )
        elif unfinished:
            aborts[loser].fire()
            race.charge(estimate, 0, 0, 0, 1)
        if winner == 1:
            with self._lock:
                self.won += 1
        return cast("Reply", reply)

    def _due(
        self, role: str, started: float, idle: Callable[[], bool]
    ) -> tuple[bool, float | None]:
        """Whether a request of ``role`` sent at ``started`` is to be hedged now, and else
        when to look again (None: after a short while)."""
        now = self._clock.now()
        busy = self._after(role, False)
        if busy is None:
            return False, None
        if now >= started + busy:
            return True, None
        quiet = self._after(role, True)
        if quiet is None or quiet >= busy:
            return False, started + busy
        if now < started + quiet:
            return False, started + quiet
        if idle():
            return True, None
        # Late for an idle pool, not for a busy one: look again soon, a slot may free up.
        return False, min(started + busy, now + POLL_SECONDS)

    def _start(
        self, race: _Race, attempt: int, call: Callable[[], Reply], role: str, t0: float
    ) -> None:
        with race.changed:
            race.started = attempt + 1
        threading.Thread(
            target=self._attempt,
            args=(race, attempt, call, role, t0),
            name=f"orch-review-attempt-{attempt}",
            daemon=True,
        ).start()

    def _attempt(
        self, race: _Race, attempt: int, call: Callable[[], Reply], role: str, t0: float
    ) -> None:
        try:
            reply = call()
        except BaseException as exc:
            race.end(attempt, None, exc)
            return
        if race.end(attempt, reply, None):
            self.latencies.learn(role, self._clock.now() - t0)

    def _hedge(self, race: _Race, role: str, send: Send, abort: Abort, gate: HedgeGate) -> None:
        """The hedge's thread: wait for a slot, then send the copy unless it is too late, and
        hold the slot until the copy is answered, fails, or loses."""
        try:
            with gate() as allowed:
                with race.changed:
                    go = allowed and not (race.over or race.taken)
                    if go:
                        race.started = 2
                if not go:
                    with self._lock:
                        self.declined += 1
                    race.end(1, None, None)
                    return
                with self._lock:
                    self.hedges += 1
                self._start(race, 1, lambda: send(abort), role, self._clock.now())
                # The slot and the reservation are held while the copy may still be the
                # answer: a cancelled copy gives them back at once, as its request does.
                with race.changed:
                    while not (race.taken or 1 in race.ended):
                        race.changed.wait(POLL_SECONDS)
        except BaseException as exc:  # the gate failed: as if the hedge was never sent
            race.end(1, None, exc)
