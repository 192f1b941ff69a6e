"""Hedged requests: a late fan-out request is sent once more and the first answer wins.

Real client, real SDK, the fake Messages API over HTTP. Time is a manual clock the test
moves: the request under test is held by the fake (no answer until released), so whether a
hedge goes out depends only on where the test has put the clock.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from orch_review.config.settings import load_config
from orch_review.engine.agents.gated_client import GatedClient, RequestBudget
from orch_review.engine.agents.session_setup import hedging_for
from orch_review.engine.api.budget import Budget, Caps
from orch_review.engine.api.client import ModelClient, Reply
from orch_review.engine.api.hedging import MIN_SAMPLE, Hedging, Latencies
from orch_review.engine.api.scheduler import PriorityPool
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.messages_api import Reply as FakeReply

KEY = "sk-ant-test-key-0123"
PROMPT = "Review this change."
LATE = 10.0  # seconds after which the tests' requests are hedged
EARLY = 4.0  # and after which they are while a request slot is free (where a test says so)
DEADLINE = 20.0  # real seconds any wait for the fake or a thread may take


def _cost(model: str, inp: int, out: int, write: int, read: int) -> tuple[float, bool]:
    """$1 per million input tokens, $5 per million output tokens."""
    return (inp + 5 * out + 2 * write + 0.1 * read) / 1e6, True


class ManualClock:
    """A clock that moves only when told; :meth:`advance` returns once every waiter has
    looked at the new time."""

    def __init__(self) -> None:
        self._now = 0.0
        self._looks = itertools.count()
        self._seen = 0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def wait(self, changed: threading.Condition, until: float | None) -> None:
        with self._lock:
            self._seen = next(self._looks)
        changed.wait(0.005)  # the caller looks again: at the time, and at what came back

    def advance(self, seconds: float, *, settle: bool = True) -> None:
        """Move the clock; with ``settle``, return once the waiter (which must still be
        waiting then) has looked at the new time."""
        with self._lock:
            self._now += seconds
            before = self._seen
        if settle:  # two more looks: at least one after the move
            _until(lambda: self._seen >= before + 2)


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.002)


@pytest.fixture
def numbered(fake_api: FakeMessagesAPI) -> FakeMessagesAPI:
    """Each answer says the order in which the fake answered."""
    counter = itertools.count(1)
    lock = threading.Lock()

    def policy(request: Any) -> FakeReply:
        with lock:
            return FakeReply.text(f"answer {next(counter)}")

    fake_api.policy = policy
    return fake_api


@pytest.fixture
def client(fake_api: FakeMessagesAPI, numbered: FakeMessagesAPI) -> Iterator[ModelClient]:
    """A client that has met the API already (as the main agent's requests do before any
    fan-out request), its first request answered before the test's policy is set."""
    policy = numbered.policy
    fake_api.policy = lambda request: FakeReply.text("first contact")
    client = ModelClient(
        {"ANTHROPIC_BASE_URL": numbered.base_url, "ANTHROPIC_API_KEY": KEY},
        max_retries=0,
        request_timeout=120,
        max_output_tokens=1000,
        effort="high",
    )
    client.complete(
        model="claude-test", system="system", tools=[], messages=[{"role": "user", "content": "hi"}]
    )
    fake_api.reset()
    fake_api.policy = policy
    yield client
    client.close()


class Agent:
    """One agent's ranked client with hedging, asking one question on a thread."""

    def __init__(
        self,
        client: ModelClient,
        hedging: Hedging,
        budget: Budget | None = None,
        pool: PriorityPool | None = None,
    ) -> None:
        self.budget = budget or Budget(Caps(), _cost)
        self.pool = pool or PriorityPool(4)
        self.ranked = GatedClient(
            client,
            self.pool,
            threading.Event(),
            "subagent",
            1,
            RequestBudget(self.budget, 1000),
            hedging,
        )
        self.replies: list[Reply] = []
        self.errors: list[BaseException] = []
        self.thread = threading.Thread(target=self._ask, daemon=True)

    def _ask(self) -> None:
        try:
            reply = self.ranked.complete(
                model="claude-test",
                system="system",
                tools=[],
                messages=[{"role": "user", "content": PROMPT}],
            )
        except BaseException as exc:
            self.errors.append(exc)
            return
        self.budget.record(
            "subagent",
            "claude-test",
            reply.input_tokens,
            reply.output_tokens,
            reply.cache_write_tokens,
            reply.cache_read_tokens,
        )
        self.replies.append(reply)

    def start(self) -> Agent:
        self.thread.start()
        return self

    def answered(self) -> Reply:
        self.thread.join(DEADLINE)
        assert not self.errors, self.errors
        assert self.replies, "no reply"
        return self.replies[0]


def _hedging(
    clock: ManualClock, after: float | None = LATE, idle_after: float | None = None
) -> Hedging:
    """Hedging at ``after`` seconds, or at ``idle_after`` while a request slot is free."""
    return Hedging(
        after=lambda role, idle: idle_after if idle and idle_after is not None else after,
        clock=clock,
    )


def test_a_late_request_is_sent_again_after_the_threshold_and_the_first_answer_wins(
    numbered: FakeMessagesAPI, client: ModelClient
) -> None:
    held = numbered.add_fault("held")  # the first request gets no answer until released
    clock = ManualClock()
    hedging = _hedging(clock)
    agent = Agent(client, hedging).start()
    _until(lambda: held.held == 1)

    clock.advance(LATE - 0.1)
    assert len(numbered.message_requests) == 1  # not late yet: no copy

    clock.advance(0.2, settle=False)
    reply = agent.answered()
    # The copy answered while the first request was still held: its answer is the reply.
    assert held.held == 1
    assert reply.text == "answer 1"
    assert (hedging.hedges, hedging.won) == (1, 1)
    copies = numbered.message_requests
    assert len(copies) == 2 and copies[0].body == copies[1].body  # the same request twice

    held.release()  # the first request's answer begins: its response is closed unread
    _until(lambda: client.in_flight == 0)
    # Both copies are paid for: the answered one as answered, the cancelled one its input.
    usage = agent.budget.report().by_role["subagent"]
    assert usage.requests == 2
    assert usage.input_tokens > reply.input_tokens
    assert usage.output_tokens == reply.output_tokens


def test_a_request_is_hedged_at_most_once(numbered: FakeMessagesAPI, client: ModelClient) -> None:
    held = numbered.add_fault("held", times=2)  # neither the request nor its copy answers
    clock = ManualClock()
    hedging = _hedging(clock)
    agent = Agent(client, hedging).start()
    _until(lambda: held.held == 1)
    clock.advance(LATE + 1, settle=False)
    _until(lambda: held.held == 2)
    for _ in range(3):
        clock.advance(10 * LATE)
    assert len(numbered.message_requests) == 2

    held.release()
    agent.answered()
    _until(lambda: client.in_flight == 0)
    assert len(numbered.message_requests) == 2
    assert hedging.hedges == 1
    assert agent.budget.report().by_role["subagent"].requests == 2


def test_the_first_answer_wins_when_it_is_the_original(
    numbered: FakeMessagesAPI, client: ModelClient
) -> None:
    first = numbered.add_fault("held")
    copy = numbered.add_fault("held")
    clock = ManualClock()
    hedging = _hedging(clock)
    agent = Agent(client, hedging).start()
    _until(lambda: first.held == 1)
    clock.advance(LATE + 1, settle=False)
    _until(lambda: copy.held == 1)
    first.release()
    assert agent.answered().text == "answer 1"
    assert (hedging.hedges, hedging.won) == (1, 0)
    copy.release()  # the copy's answer begins: it is closed unread
    _until(lambda: client.in_flight == 0)
    usage = agent.budget.report().by_role["subagent"]
    assert (usage.requests, len(numbered.message_requests)) == (2, 2)


def test_the_cancelled_copy_is_closed_while_it_streams(
    numbered: FakeMessagesAPI, client: ModelClient
) -> None:
    # The first request's answer begins and then sends nothing but pings, for ever.
    numbered.add_fault("pings", delay=0.05)
    clock = ManualClock()
    hedging = _hedging(clock)
    agent = Agent(client, hedging).start()
    _until(lambda: len(numbered.message_requests) == 1)
    clock.advance(LATE + 1, settle=False)
    assert agent.answered().text == "answer 1"
    # Its response was closed under it: nothing of it is in flight any more.
    _until(lambda: client.in_flight == 0)


def test_no_hedge_before_the_role_has_enough_replies(
    numbered: FakeMessagesAPI, client: ModelClient
) -> None:
    held = numbered.add_fault("held")
    clock = ManualClock()
    latencies = Latencies()
    hedging = Hedging(latencies, clock=clock)
    agent = Agent(client, hedging).start()
    _until(lambda: held.held == 1)
    for _ in range(MIN_SAMPLE - 1):
        latencies.learn("subagent", 1.0)
    clock.advance(100.0)
    assert len(numbered.message_requests) == 1
    latencies.learn("subagent", 1.0)  # enough replies now: 1 s is late, 100 s more so
    _until(lambda: len(numbered.message_requests) == 2)
    agent.answered()
    held.release()


def test_the_threshold_is_the_roles_95th_percentile_or_75th_while_a_slot_is_free() -> None:
    latencies = Latencies()
    for seconds in range(1, MIN_SAMPLE + 1):
        latencies.learn("verifier", float(seconds))
    latencies.learn("subagent", 1000.0)
    assert latencies.hedge_after("verifier") == 19.0
    assert latencies.hedge_after("verifier", idle=True) == 15.0  # the 75th
    assert latencies.hedge_after("subagent") is None
    assert latencies.hedge_after("subagent", idle=True) is None


@pytest.mark.parametrize(("cap", "copies"), [(1.0, 2), (0.004, 1)])
def test_nothing_is_hedged_near_the_cap(
    numbered: FakeMessagesAPI, client: ModelClient, cap: float, copies: int
) -> None:
    budget = Budget(Caps(max_cost_usd=cap), _cost)
    # One reply of 100 output tokens teaches what a reply writes; $0.0025 spent.
    budget.record("subagent", "claude-test", 2000, 100, 0, 0)
    held = numbered.add_fault("held")
    clock = ManualClock()
    hedging = _hedging(clock)
    agent = Agent(client, hedging, budget).start()
    _until(lambda: held.held == 1)
    clock.advance(LATE + 1, settle=False)
    _until(lambda: hedging.hedges + hedging.declined == 1)
    _until(lambda: len(numbered.message_requests) == copies)
    assert (hedging.hedges, hedging.declined) == (copies - 1, 2 - copies)
    held.release()
    agent.answered()


class Holder:
    """A thread that holds one reservation until told to give it back."""

    def __init__(self, reserve: Callable[[], Any]) -> None:
        self.result: list[Any] = []
        self._done = threading.Event()
        self._ready = threading.Event()
        self._reserve = reserve
        self._budget_release: Callable[[], None] | None = None
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(DEADLINE)

    def _run(self) -> None:
        self.result.append(self._reserve())
        self._ready.set()
        self._done.wait(DEADLINE)
        if self._budget_release is not None:
            self._budget_release()

    def give_back(self, release: Callable[[], None]) -> None:
        self._budget_release = release
        self._done.set()


def test_a_hedges_reservation_counts_against_the_cap() -> None:
    budget = Budget(Caps(max_cost_usd=0.55), _cost)
    budget.record("subagent", "m", 10, 20_000, 0, 0)  # a reply writes 20,000 tokens: $0.10
    stop = threading.Event()
    stop.set()
    # A request of 50,000 input tokens reserves $0.05 + $0.10; far from the cap means within
    # 80 % of it ($0.44).
    request = Holder(lambda: budget.reserve(("subagent", 1), "m", 50_000, 100_000, stop))
    copy = Holder(lambda: budget.reserve_hedge(("subagent", 1), "m", 50_000, 100_000))
    assert (request.result, copy.result) == ([None], [True])  # $0.10 + $0.30 held
    # A second copy would bring it to $0.55: near the cap, not sent.
    second = Holder(lambda: budget.reserve_hedge(("subagent", 2), "m", 50_000, 100_000))
    assert second.result == [False]
    copy.give_back(budget.release)
    _until(
        lambda: (
            Holder(lambda: budget.reserve_hedge(("subagent", 2), "m", 50_000, 100_000)).result
            == [True]
        )
    )
    request.give_back(budget.release)


def test_a_cancelled_copy_counts_its_input_in_the_totals() -> None:
    budget = Budget(Caps(), _cost)
    budget.charge_unused(("verifier", 3), "verifier", "m", 4000, 0, 0, 0, 1)
    usage = budget.report().by_role["verifier"]
    assert (usage.requests, usage.input_tokens, usage.output_tokens) == (1, 4000, 0)
    assert usage.cost_usd == pytest.approx(0.004)


def test_without_hedging_a_late_request_is_sent_once(
    numbered: FakeMessagesAPI, client: ModelClient
) -> None:
    held = numbered.add_fault("held")
    clock = ManualClock()
    hedging = _hedging(clock, after=None)  # as with `hedge = false`: never late
    agent = Agent(client, hedging).start()
    _until(lambda: held.held == 1)
    clock.advance(1000 * LATE)
    assert len(numbered.message_requests) == 1
    held.release()
    assert agent.answered().text == "answer 1"


def test_no_copy_is_sent_for_a_request_that_failed_while_its_copy_waited_for_a_slot(
    numbered: FakeMessagesAPI, client: ModelClient
) -> None:
    # The request holds the only slot; no answer, then its connection is closed.
    numbered.add_fault("hang", delay=1.0)
    clock = ManualClock()
    hedging = _hedging(clock)
    pool = PriorityPool(1)
    agent = Agent(client, hedging, pool=pool).start()
    _until(lambda: len(numbered.message_requests) == 1)
    clock.advance(LATE + 1, settle=False)
    _until(lambda: pool.waiting_requests() == 1)  # the copy waits for the slot
    agent.thread.join(DEADLINE)
    assert agent.errors  # the request failed (no retries here)
    _until(lambda: hedging.declined == 1)  # the copy got the slot, and was not sent
    assert len(numbered.message_requests) == 1


@pytest.mark.parametrize("cap", [Caps(max_cost_usd=5.0), Caps(max_total_tokens=1_000_000)])
def test_with_hedges_the_spend_passes_a_cap_by_no_more_than_without(cap: Caps) -> None:
    """Eight request slots sending requests and, every other time, a hedge (charged in full
    when sent), until the budget refuses: the spend ends within the cap plus one request,
    the bound without hedges (tests/engine/api/test_budget.py)."""
    budget = Budget(cap, _cost)
    budget.record("subagent", "m", 20_000, 10_000, 0, 0)  # what a reply writes is known
    biggest = _cost("m", 20_000, 10_000, 0, 0)[0], 30_000
    stop = threading.Event()
    hedges = itertools.count()

    def slot() -> None:
        for turn in range(500):  # far more requests than either cap allows
            if turn % 2:
                if budget.reserve_hedge(("subagent", 1), "m", 20_000, 10_000):
                    next(hedges)
                    budget.charge_unused(("subagent", 1), "subagent", "m", 20_000, 10_000, 0, 0, 1)
                    budget.release()
                continue
            if budget.reserve(("subagent", 1), "m", 20_000, 10_000, stop) is not None:
                return
            budget.record("subagent", "m", 20_000, 10_000, 0, 0)

    threads = [threading.Thread(target=slot) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
    stop.set()
    assert not any(thread.is_alive() for thread in threads)
    total = budget.report().total
    assert next(hedges) > 0  # some were sent, far from the cap
    if cap.max_cost_usd is not None:
        assert cap.max_cost_usd <= total.cost_usd <= cap.max_cost_usd + biggest[0]
    else:
        assert cap.max_total_tokens is not None
        assert cap.max_total_tokens <= total.total_tokens <= cap.max_total_tokens + biggest[1]


def test_a_cancelled_copy_gives_its_slot_back_at_once(
    numbered: FakeMessagesAPI, client: ModelClient
) -> None:
    first = numbered.add_fault("held")
    copy = numbered.add_fault("held")
    clock = ManualClock()
    hedging = _hedging(clock)
    pool = PriorityPool(2)
    agent = Agent(client, hedging, pool=pool).start()
    _until(lambda: first.held == 1)
    clock.advance(LATE + 1, settle=False)
    _until(lambda: copy.held == 1)
    first.release()
    agent.answered()
    # The copy's answer has not begun, but neither slot is taken: two more requests go.
    others = [Agent(client, hedging, pool=pool).start() for _ in range(2)]
    for other in others:
        other.answered()
    assert copy.held == 1 and len(numbered.message_requests) == 4
    copy.release()


def test_hedge_false_in_the_configuration_turns_hedging_off(tmp_path: Path) -> None:
    assert isinstance(hedging_for(load_config(tmp_path, {}, {})), Hedging)  # on by default
    (tmp_path / ".orch-review.toml").write_text("hedge = false\n", encoding="utf-8")
    assert hedging_for(load_config(tmp_path, {}, {})) is None


def test_while_a_request_slot_is_free_a_request_is_hedged_at_the_earlier_threshold(
    numbered: FakeMessagesAPI, client: ModelClient
) -> None:
    held = numbered.add_fault("held")
    clock = ManualClock()
    hedging = _hedging(clock, idle_after=EARLY)
    pool = PriorityPool(2)  # the request holds one slot; the other is free
    agent = Agent(client, hedging, pool=pool).start()
    _until(lambda: held.held == 1)
    clock.advance(EARLY - 0.1)
    assert len(numbered.message_requests) == 1
    clock.advance(0.2, settle=False)
    assert agent.answered().text == "answer 1"  # the copy's, long before LATE
    assert (hedging.hedges, hedging.won) == (1, 1)
    held.release()
    _until(lambda: client.in_flight == 0)


def test_while_every_slot_is_busy_the_earlier_threshold_waits_for_a_free_one(
    numbered: FakeMessagesAPI, client: ModelClient
) -> None:
    first = numbered.add_fault("held")
    other = numbered.add_fault("held")
    clock = ManualClock()
    hedging = _hedging(clock, idle_after=EARLY)
    pool = PriorityPool(2)
    agent = Agent(client, hedging, pool=pool).start()
    _until(lambda: first.held == 1)
    busy = Agent(client, hedging, pool=pool).start()  # takes the other slot
    _until(lambda: other.held == 1)
    clock.advance(EARLY + 1)
    for _ in range(3):  # every waiter has looked at the time since
        clock.advance(0.0)
    # Late for a free slot, not for a busy pool: no copy waits for a slot, none is sent.
    assert pool.waiting_requests() == 0
    assert len(numbered.message_requests) == 2 and hedging.hedges == 0

    other.release()  # the other request answers: its slot is free, and the copy takes it
    busy.answered()
    assert agent.answered().text == "answer 2"
    assert first.held == 1 and (hedging.hedges, hedging.won) == (1, 1)
    assert len(numbered.message_requests) == 3
    first.release()
    _until(lambda: client.in_flight == 0)
