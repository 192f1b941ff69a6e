"""The session's budget: usage summed per role, and each cap refusing new agents once reached."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

from orch_review.engine.api.admission import Amount
from orch_review.engine.api.budget import ROLES, Budget, Caps
from orch_review.findings.usage import Usage

T = TypeVar("T")


def _cost(model: str, inp: int, out: int, write: int, read: int) -> tuple[float, bool]:
    """Per million tokens: $1 input, $5 output, $2 cache write, $0.10 cache read.
    Models named ``unknown-*`` have no known price."""
    if model.startswith("unknown"):
        return 0.0, False
    return (inp + 5 * out + 2 * write + 0.1 * read) / 1e6, True


def test_usage_is_summed_per_role_with_the_cost_of_each_request() -> None:
    budget = Budget(Caps(), _cost)

    one = budget.record("subagent", "m", 1_000_000, 200_000, 500_000, 1_000_000)
    budget.record("subagent", "m", 10, 20, 3, 4)
    budget.record("verifier", "m", 5, 6, 7, 8)

    assert one == Usage(1_000_000, 200_000, 500_000, 1_000_000, pytest.approx(3.1), 1)
    report = budget.report()
    assert report.by_role["subagent"] == Usage(
        1_000_010, 200_020, 500_003, 1_000_004, pytest.approx(3.1 + 116.4e-6), 2
    )
    assert report.by_role["verifier"] == Usage(5, 6, 7, 8, pytest.approx(49.8e-6), 1)
    assert report.by_role["main"] == Usage() and report.by_role["critic"] == Usage()
    assert report.cap_reached is None and report.unknown_price_models == ()


def test_models_without_a_price_are_listed_once_sorted() -> None:
    budget = Budget(Caps(), _cost)
    for model in ("unknown-b", "m", "unknown-a", "unknown-b"):
        budget.record("main", model, 1, 1, 0, 0)
    assert budget.report().unknown_price_models == ("unknown-a", "unknown-b")


def test_agents_started_and_reused_are_counted_per_role() -> None:
    budget = Budget(Caps(), _cost)
    assert budget.start_agent("main") and budget.start_agent("subagent")
    assert budget.start_agent("subagent")
    budget.reused("verifier")
    budget.reused("verifier")
    report = budget.report()
    assert report.agents_started == {"main": 1, "subagent": 2, "verifier": 0, "critic": 0}
    assert report.agents_from_journal == {"main": 0, "subagent": 0, "verifier": 2, "critic": 0}
    assert set(ROLES) - {"prover"} == set(report.by_role)  # no prover asked for: not listed
    assert budget.start_agent("prover")
    assert budget.report().agents_started["prover"] == 1
    assert set(ROLES) == set(budget.report().by_role)


def test_the_agent_cap_counts_agents_of_every_role() -> None:
    budget = Budget(Caps(max_agents=3), _cost)
    assert [budget.start_agent(r) for r in ("main", "subagent", "verifier")] == [True] * 3
    assert budget.over_budget() == "agent cap reached (3 agents)"

    assert not budget.start_agent("subagent")

    report = budget.report()
    assert sum(report.agents_started.values()) == 3  # the refused agent is not counted
    assert report.cap_reached == "agent cap reached (3 agents)"


def test_the_token_cap_counts_every_token_of_every_role() -> None:
    budget = Budget(Caps(max_total_tokens=1000), _cost)
    assert budget.start_agent("main")
    budget.record("main", "m", 400, 100, 0, 0)
    budget.record("subagent", "m", 100, 100, 100, 199)  # cache tokens count: 999 in all
    assert budget.over_budget() is None and budget.start_agent("subagent")

    budget.record("verifier", "m", 0, 0, 0, 1)  # 1000: the cap is reached, not exceeded

    assert budget.over_budget() == "token cap reached (1,000 tokens)"
    assert not budget.start_agent("verifier")
    assert budget.report().agents_started["verifier"] == 0
    assert budget.report().cap_reached == "token cap reached (1,000 tokens)"


def test_the_cost_cap_stops_new_agents_once_the_estimate_reaches_it() -> None:
    budget = Budget(Caps(max_cost_usd=1.5), _cost)
    assert budget.start_agent("main")
    budget.record("main", "m", 1_000_000, 0, 0, 0)  # $1.00
    assert budget.over_budget() is None and budget.start_agent("subagent")

    budget.record("subagent", "m", 0, 100_000, 0, 0)  # + $0.50

    assert budget.over_budget() == "cost cap reached ($1.50)"
    assert not budget.start_agent("verifier")
    report = budget.report()
    assert report.agents_started == {"main": 1, "subagent": 1, "verifier": 0, "critic": 0}
    assert report.cap_reached == "cost cap reached ($1.50)"


def test_a_refused_start_alone_reports_the_cap() -> None:
    budget = Budget(Caps(max_agents=1), _cost)
    assert budget.start_agent("main")
    assert budget.report().cap_reached is None
    assert not budget.start_agent("subagent")  # nobody asked over_budget()
    assert budget.report().cap_reached == "agent cap reached (1 agent)"


def test_over_budget_alone_reports_the_cap() -> None:
    budget = Budget(Caps(max_total_tokens=10), _cost)
    assert budget.over_budget() is None and budget.report().cap_reached is None
    budget.record("main", "m", 10, 0, 0, 0)
    assert budget.over_budget() == "token cap reached (10 tokens)"
    assert budget.report().cap_reached == "token cap reached (10 tokens)"


def test_the_first_cap_reached_is_the_one_reported() -> None:
    budget = Budget(Caps(max_total_tokens=2_000_000, max_cost_usd=1.0), _cost)
    budget.record("main", "m", 0, 200_000, 0, 0)  # $1.00 in 200,000 tokens
    assert budget.over_budget() == "cost cap reached ($1.00)"
    budget.record("main", "m", 1_800_000, 0, 0, 0)  # the token cap too, now
    assert not budget.start_agent("subagent")
    assert budget.over_budget() == "token cap reached (2,000,000 tokens)"  # checked first
    assert budget.report().cap_reached == "cost cap reached ($1.00)"


def test_without_caps_nothing_is_refused() -> None:
    budget = Budget(Caps(), _cost)
    budget.record("main", "m", 10**12, 10**12, 0, 0)
    assert all(budget.start_agent("subagent") for _ in range(100))
    assert budget.over_budget() is None and budget.report().cap_reached is None


def test_under_a_cap_only_that_many_agents_start_whatever_the_threads() -> None:
    budget = Budget(Caps(max_agents=50), _cost)
    started: list[bool] = []
    lock = threading.Lock()

    def start_many() -> None:
        for _ in range(40):
            ok = budget.start_agent("subagent")
            with lock:
                started.append(ok)

    threads = [threading.Thread(target=start_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert started.count(True) == 50 == budget.report().agents_started["subagent"]


def test_a_report_is_a_snapshot() -> None:
    budget = Budget(Caps(), _cost)
    budget.record("main", "m", 1, 0, 0, 0)
    budget.start_agent("main")
    before = budget.report()
    budget.record("main", "m", 1, 0, 0, 0)
    budget.start_agent("main")
    assert before.by_role["main"].input_tokens == 1 and before.agents_started["main"] == 1


# -- requests in flight: reserved at what they may cost, replaced by what they cost ---------

SUBAGENT = ("subagent", 0)


def _stopped() -> threading.Event:
    stop = threading.Event()
    stop.set()  # an admission or request that would wait gives up at once instead
    return stop


def _in_thread(fn: Callable[[], T]) -> T:
    """``fn()`` run on a thread of its own (a reservation belongs to the thread that made it)."""
    out: list[T] = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join()
    return out[0]


def test_a_request_waits_while_the_requests_in_flight_may_reach_the_cost_cap() -> None:
    budget = Budget(Caps(max_cost_usd=1.0), _cost)
    stop = _stopped()
    # 100,000 in and 100,000 out: each may cost $0.60.
    assert budget.reserve(SUBAGENT, "m", 100_000, 100_000, stop) is None
    assert _in_thread(lambda: budget.reserve(SUBAGENT, "m", 100_000, 100_000, stop)) is None
    # $1.20 may be on its way: a third request is not sent.
    assert _in_thread(lambda: budget.reserve(SUBAGENT, "m", 100_000, 100_000, stop)) == (
        "interrupted"
    )

    budget.record("subagent", "m", 100_000, 10_000, 0, 0)  # this thread's request: $0.15

    # The reservation is replaced by the cost: $0.15 spent and $0.60 in flight leave room.
    assert _in_thread(lambda: budget.reserve(SUBAGENT, "m", 100_000, 100_000, stop)) is None
    assert budget.report().cap_reached is None
    assert budget.report().total.cost_usd == pytest.approx(0.15)


def test_once_the_spend_reaches_the_cost_cap_no_request_is_sent() -> None:
    budget = Budget(Caps(max_cost_usd=1.0), _cost)
    assert budget.reserve(SUBAGENT, "m", 10, 10) is None
    budget.record("subagent", "m", 0, 200_000, 0, 0)  # $1.00

    assert budget.reserve(SUBAGENT, "m", 10, 10) == "cost cap reached ($1.00)"
    assert budget.report().cap_reached == "cost cap reached ($1.00)"


def test_once_the_spend_reaches_the_token_cap_no_request_is_sent() -> None:
    budget = Budget(Caps(max_total_tokens=1000), _cost)
    stop = _stopped()
    assert budget.reserve(SUBAGENT, "m", 300, 600, stop) is None  # 900 tokens may come
    assert _in_thread(lambda: budget.reserve(SUBAGENT, "m", 100, 100, stop)) is None
    assert _in_thread(lambda: budget.reserve(SUBAGENT, "m", 1, 1, stop)) == "interrupted"
    budget.record("subagent", "m", 300, 700, 0, 0)  # 1,000: the cap

    assert budget.reserve(SUBAGENT, "m", 1, 1, stop) == "token cap reached (1,000 tokens)"


def test_a_request_without_a_response_gives_its_reservation_back() -> None:
    budget = Budget(Caps(max_cost_usd=1.0), _cost)
    stop = _stopped()
    assert budget.reserve(SUBAGENT, "m", 0, 200_000, stop) is None  # $1.00 may come
    assert _in_thread(lambda: budget.reserve(SUBAGENT, "m", 1, 1, stop)) == "interrupted"
    budget.release()
    assert _in_thread(lambda: budget.reserve(SUBAGENT, "m", 1, 1, stop)) is None
    assert budget.report().total == Usage()


@pytest.mark.parametrize("cap", [Caps(max_cost_usd=0.5), Caps(max_total_tokens=100_000)])
def test_many_threads_overshoot_a_cap_by_at_most_one_request_each(cap: Caps) -> None:
    """Eight request slots, each sending requests that cost up to their reservation, until
    the budget refuses: the spend ends within the cap plus one request per slot."""
    budget = Budget(cap, _cost)
    biggest = Usage(20_000, 10_000, 0, 0, (20_000 + 5 * 10_000) / 1e6)
    sizes = itertools.cycle([(20_000, 10_000), (5_000, 1_000), (20_000, 2_000), (1, 1)])
    lock = threading.Lock()

    stop = threading.Event()  # ends a slot stuck waiting: a budget that never releases

    def slot() -> None:
        for _ in range(500):  # far more requests than either cap allows
            with lock:
                inp, out = next(sizes)
            if budget.reserve(SUBAGENT, "m", 20_000, 10_000, stop) is not None:
                return
            budget.record("subagent", "m", inp, out, 0, 0)

    threads = [threading.Thread(target=slot) for _ in range(8)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30  # a guard against a deadlock, not a measure of time
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = any(thread.is_alive() for thread in threads)
    stop.set()
    for thread in threads:
        thread.join()
    assert not stuck, "requests waited for reservations nobody releases"

    total = budget.report().total
    if cap.max_cost_usd is not None:
        assert cap.max_cost_usd <= total.cost_usd <= cap.max_cost_usd + biggest.cost_usd
    else:
        assert cap.max_total_tokens is not None
        assert cap.max_total_tokens <= total.total_tokens
        assert total.total_tokens <= cap.max_total_tokens + biggest.total_tokens
    assert budget.report().cap_reached is not None


# -- admission: an agent starts when it and the verification of its findings fit ------------


def _spend(budget: Budget, agent: tuple[str, int], output_tokens: int) -> None:
    """One request of ``agent`` costing ``output_tokens`` x $5 per million."""
    assert budget.reserve(agent, "m", 0, output_tokens) is None
    budget.record(agent[0], "m", 0, output_tokens, 0, 0)


def test_an_agent_is_admitted_only_when_it_and_its_verifier_are_expected_to_fit() -> None:
    budget = Budget(Caps(max_cost_usd=1.2), _cost)
    assert budget.admit("subagent", 0, "m", verify_after=True)  # the prior: $0.06 each
    _spend(budget, ("subagent", 0), 40_000)  # $0.20
    budget.finished("subagent", 0)
    assert budget.admit("verifier", 0, "m", verify_after=False)  # committed with it
    _spend(budget, ("verifier", 0), 40_000)  # $0.20
    budget.finished("verifier", 0)
    # A subagent is expected to cost $0.20, and so is a verifier, which every subagent so
    # far needed, and one more verifier is kept free for whichever finding comes next:
    # $0.60 for the next concern, and $0.40 of the $1.20 is spent.
    assert budget.admit("subagent", 1, "m", verify_after=True)
    _spend(budget, ("subagent", 1), 40_000)
    budget.finished("subagent", 1)
    budget.withdraw("verifier", 1)  # it found nothing
    # $0.60 spent; the next concern: $0.20, a verifier for 2 of 3 subagents ($0.13), and
    # one kept free ($0.20).
    assert budget.admit("subagent", 2, "m", verify_after=True)
    _spend(budget, ("subagent", 2), 40_000)
    budget.finished("subagent", 2)
    # $0.80 spent, the verifier of concern 2 still to come ($0.13): another concern
    # ($0.53) would leave no room to verify what it finds, although the cap is not
    # reached; it waits for that verifier (here: gives up at once).
    assert budget.over_budget() is None
    stop = _stopped()
    assert not _in_thread(lambda: budget.admit("subagent", 3, "m", verify_after=True, cancel=stop))
    assert budget.admit("verifier", 2, "m", verify_after=False)  # its verifier still runs
    _spend(budget, ("verifier", 2), 20_000)  # $0.10
    budget.finished("verifier", 2)
    # $0.90 spent, nothing running: a concern expected to cost $0.46 does not start.
    assert budget.over_budget() is None
    assert not budget.admit("subagent", 3, "m", verify_after=True)
    assert budget.report().cap_reached == "cost cap reached ($1.20)"
    assert budget.report().agents_started == {"main": 0, "subagent": 3, "verifier": 2, "critic": 0}


def test_an_agent_that_does_not_fit_waits_for_the_agents_running() -> None:
    budget = Budget(Caps(max_cost_usd=0.1), _cost)
    assert budget.admit("subagent", 0, "m", verify_after=True)  # $0.12 expected, alone
    stop = _stopped()
    assert not _in_thread(lambda: budget.admit("subagent", 1, "m", verify_after=True, cancel=stop))

    admitted: list[bool] = []
    waiter = threading.Thread(
        target=lambda: admitted.append(budget.admit("subagent", 1, "m", verify_after=False))
    )
    waiter.start()
    _spend(budget, ("subagent", 0), 1_000)  # $0.005: far less than expected
    budget.finished("subagent", 0)
    budget.withdraw("verifier", 0)
    waiter.join()

    assert admitted == [True]


def test_the_agent_cap_keeps_room_for_the_verifiers_it_committed_to() -> None:
    budget = Budget(Caps(max_agents=3), _cost)
    stop = _stopped()
    assert budget.admit("subagent", 0, "m", verify_after=True)
    assert budget.start_agent("critic")
    # Agent 3 is concern 0's verifier: no other agent may take its place.
    assert not _in_thread(lambda: budget.admit("subagent", 1, "m", verify_after=True, cancel=stop))
    assert not budget.start_agent("critic")
    budget.finished("subagent", 0)
    assert budget.admit("verifier", 0, "m", verify_after=False)
    assert sum(budget.report().agents_started.values()) == 3
    assert not budget.admit("subagent", 1, "m", verify_after=False)
    assert budget.report().cap_reached == "agent cap reached (3 agents)"


def test_alone_under_the_agent_cap_an_agent_runs_even_with_no_room_to_verify() -> None:
    budget = Budget(Caps(max_agents=1), _cost)
    assert budget.admit("subagent", 0, "m", verify_after=True)
    budget.finished("subagent", 0)
    assert not budget.admit("verifier", 0, "m", verify_after=False)
    assert budget.report().agents_started["subagent"] == 1


def test_the_report_states_what_ended_in_verified_coverage() -> None:
    budget = Budget(Caps(), _cost)
    budget.record("main", "m", 0, 20_000, 0, 0)  # $0.10
    for index, output in ((0, 100_000), (1, 40_000)):
        assert budget.admit("subagent", index, "m", verify_after=True)
        _spend(budget, ("subagent", index), output)
        budget.finished("subagent", index)
        assert budget.admit("verifier", index, "m", verify_after=False)
        _spend(budget, ("verifier", index), 20_000)
        budget.finished("verifier", index)
    budget.concern_ended(0, covered=True)  # $0.50 + $0.10
    budget.concern_ended(1, covered=False)  # $0.20 + $0.10, not verified

    report = budget.report()
    assert report.total.cost_usd == pytest.approx(1.0)
    assert report.verified_cost_usd == pytest.approx(0.6)
    assert report.verified_share == pytest.approx(0.6 / 0.9)  # of the fan-out's $0.90
    assert report.verified_tokens == 120_000  # concern 0's subagent and verifier
    assert Budget(Caps(), _cost).report().verified_share is None


# -- the contracts a mutation run found unheld ------------------------------------------------


def _measured(cap: Caps, output_tokens: int = 20_000) -> Budget:
    """A budget whose first subagent ended having spent ``output_tokens`` x $5 per million,
    with nothing for its verifier to do."""
    budget = Budget(cap, _cost)
    assert budget.admit("subagent", 0, "m", verify_after=True)
    _spend(budget, ("subagent", 0), output_tokens)
    budget.finished("subagent", 0)
    budget.withdraw("verifier", 0)
    return budget


def test_an_agent_that_cannot_fit_is_refused_naming_the_cap_as_it_was_set() -> None:
    # $0.10 spent; the next concern: $0.10 and a verifier for half the subagents ($0.05).
    cost = _measured(Caps(max_cost_usd=0.125))
    assert not cost.admit("subagent", 1, "m", verify_after=True)
    assert cost.report().cap_reached == "cost cap reached ($0.125)"
    # 20,000 tokens spent; the next concern: 20,000 and 10,000 to verify it.
    tokens = _measured(Caps(max_total_tokens=45_000))
    assert not tokens.admit("subagent", 1, "m", verify_after=True)
    assert tokens.report().cap_reached == "token cap reached (45,000 tokens)"


def test_a_spend_that_reaches_the_cap_is_reported_whoever_sees_it() -> None:
    budget = Budget(Caps(max_cost_usd=0.125), _cost)
    budget.record("main", "m", 0, 30_000, 0, 0)  # $0.15: no agent or request was refused
    assert budget.report().cap_reached == "cost cap reached ($0.125)"
    assert budget.over_budget() == "cost cap reached ($0.125)"
    assert not budget.admit("subagent", 0, "m", verify_after=False)  # reached: no start


def test_the_first_cap_reached_stays_the_one_reported_when_a_request_is_refused() -> None:
    budget = Budget(Caps(max_agents=1, max_cost_usd=1.0), _cost)
    assert budget.admit("subagent", 0, "m", verify_after=False)
    assert not budget.admit("subagent", 1, "m", verify_after=False)
    budget.record("subagent", "m", 0, 200_000, 0, 0)  # $1.00
    assert budget.reserve(SUBAGENT, "m", 10, 10) == "cost cap reached ($1.00)"
    assert budget.report().cap_reached == "agent cap reached (1 agent)"


def test_a_request_is_reserved_at_its_input_and_max_tokens_without_cache_prices() -> None:
    # 100,000 in and 100,000 out: $0.60 exactly; the cap leaves room for that and no more.
    budget = Budget(Caps(max_cost_usd=0.60000005), _cost)
    assert budget.reserve(SUBAGENT, "m", 100_000, 100_000) is None
    assert _in_thread(lambda: budget.reserve(SUBAGENT, "m", 0, 1, _stopped())) is None


def test_a_waiting_request_goes_once_a_reservation_is_given_back_or_gives_up_on_cancel() -> None:
    budget = Budget(Caps(max_cost_usd=1.0), _cost)
    budget.release()  # nothing held: nothing happens
    assert budget.reserve(SUBAGENT, "m", 100_000, 200_000) is None  # $1.10 may be on its way
    outcome: list[str | None] = []
    waiter = threading.Thread(
        target=lambda: outcome.append(budget.reserve(SUBAGENT, "m", 0, 40_000))
    )
    waiter.start()
    budget.release()  # no response: the $1.10 are free again, and the waiter goes
    waiter.join(60)
    assert outcome == [None]

    cancel = threading.Event()
    blocked = Budget(Caps(max_cost_usd=1.0), _cost)
    assert blocked.reserve(SUBAGENT, "m", 100_000, 200_000) is None
    gave_up: list[str | None] = []
    waiter = threading.Thread(
        target=lambda: gave_up.append(blocked.reserve(SUBAGENT, "m", 0, 40_000, cancel))
    )
    waiter.start()
    cancel.set()  # nobody notifies: the waiter sees it when it next looks
    waiter.join(60)
    assert gave_up == ["interrupted"]


def test_an_admission_that_waits_gives_up_on_cancel_and_goes_when_room_is_made() -> None:
    budget = Budget(Caps(max_agents=3), _cost)
    assert budget.admit("subagent", 0, "m", verify_after=True)  # its verifier: agent 2
    # A second concern to verify would need agents 3 and 4: it waits for concern 0.
    assert not budget.admit("subagent", 1, "m", verify_after=True, cancel=_stopped())
    assert budget.report().cap_reached == "agent cap reached (3 agents)"
    cancel = threading.Event()
    gave_up: list[bool] = []
    waiter = threading.Thread(
        target=lambda: gave_up.append(budget.admit("subagent", 1, "m", verify_after=True,
                                                   cancel=cancel))
    )  # fmt: skip
    waiter.start()
    cancel.set()
    waiter.join(60)
    assert gave_up == [False]

    admitted: list[bool] = []
    waiter = threading.Thread(
        target=lambda: admitted.append(budget.admit("subagent", 1, "m", verify_after=True))
    )
    waiter.start()
    budget.finished("subagent", 0)
    budget.withdraw("verifier", 0)  # it found nothing: agents 2 and 3 are free
    waiter.join(60)
    assert admitted == [True]


def test_under_the_agent_cap_a_concern_to_verify_needs_two_places_and_one_without_one() -> None:
    three = Budget(Caps(max_agents=3), _cost)
    assert three.admit("subagent", 0, "m", verify_after=True)
    assert three.admit("subagent", 1, "m", verify_after=False)  # the third place
    assert not three.admit("subagent", 2, "m", verify_after=False)
    four = Budget(Caps(max_agents=4), _cost)
    assert four.admit("subagent", 0, "m", verify_after=True)
    assert four.admit("subagent", 1, "m", verify_after=True)  # places 3 and 4
    assert four.admit("verifier", 0, "m", verify_after=False)
    assert four.admit("verifier", 1, "m", verify_after=False)
    two = Budget(Caps(max_agents=2), _cost)
    assert two.admit("subagent", 0, "m", verify_after=True)
    assert not two.admit("subagent", 1, "m", verify_after=False)  # place 2 is its verifier's
    assert two.report().cap_reached == "agent cap reached (2 agents)"


def test_a_running_verifier_holds_one_place_not_two() -> None:
    budget = Budget(Caps(max_agents=3), _cost)
    assert budget.admit("subagent", 0, "m", verify_after=True)
    budget.finished("subagent", 0)
    assert budget.admit("verifier", 0, "m", verify_after=False)
    assert budget.admit("subagent", 1, "m", verify_after=False)  # the third place


def test_admission_counts_what_admitted_agents_are_still_expected_to_spend() -> None:
    def after_a_partial_spend(cap: float) -> bool:
        budget = Budget(Caps(max_cost_usd=cap), _cost)
        assert budget.admit("subagent", 0, "m", verify_after=True)  # $0.06, and $0.06
        _spend(budget, ("subagent", 0), 10_000)  # $0.05 of its $0.06
        # $0.05 spent, $0.01 + $0.06 still expected, and $0.18 for the next concern (its
        # verifier, and one kept free).
        return budget.admit("subagent", 1, "m", verify_after=True, cancel=_stopped())

    assert after_a_partial_spend(0.31)
    assert not after_a_partial_spend(0.295)
    assert not after_a_partial_spend(0.2)


def test_a_concern_to_verify_is_refused_where_one_without_a_verifier_fits() -> None:
    # $0.10 spent, subagents expected at $0.10, half of them needing a $0.10 verifier.
    assert not _measured(Caps(max_cost_usd=0.2)).admit("subagent", 1, "m", verify_after=True)
    assert _measured(Caps(max_cost_usd=0.2)).admit("subagent", 1, "m", verify_after=False)


def test_the_share_of_concerns_needing_a_verifier_follows_what_each_subagent_found() -> None:
    # One subagent found nothing: verifying the next is expected at half a verifier (and
    # one whole verifier is kept free): $0.25.
    assert _measured(Caps(max_cost_usd=0.36)).admit("subagent", 1, "m", verify_after=True)
    # A verifier never committed, withdrawn, teaches nothing (else: $0.23 for the next).
    budget = _measured(Caps(max_cost_usd=0.34))  # $0.10 spent, $0.25 for the next
    budget.withdraw("verifier", 7)
    assert not budget.admit("subagent", 1, "m", verify_after=True)

    def after_one_verified(cap: float) -> bool:
        budget = _measured(Caps(max_cost_usd=cap))  # concern 0: nothing to verify
        assert budget.admit("subagent", 1, "m", verify_after=True)
        _spend(budget, ("subagent", 1), 20_000)
        budget.finished("subagent", 1)
        assert budget.admit("verifier", 1, "m", verify_after=False)  # concern 1: verified
        _spend(budget, ("verifier", 1), 20_000)
        budget.finished("verifier", 1)
        # $0.30 spent; the next: $0.10, a $0.10 verifier for 2 of 3 subagents, and one
        # kept free.
        return budget.admit("subagent", 2, "m", verify_after=True)

    assert after_one_verified(0.57)
    assert not after_one_verified(0.56)


def test_what_an_agent_spends_is_summed_over_its_requests() -> None:
    budget = Budget(Caps(), _cost)
    assert budget.admit("subagent", 0, "m", verify_after=False)
    _spend(budget, ("subagent", 0), 10_000)
    _spend(budget, ("subagent", 0), 30_000)
    budget.concern_ended(0, covered=True)
    assert budget.report().verified_tokens == 40_000
    assert budget.report().verified_cost_usd == pytest.approx(0.2)


def test_a_verifier_known_to_be_needed_is_committed_whole() -> None:
    def next_fits(known: bool) -> bool:
        budget = Budget(Caps(max_cost_usd=1.1), _cost)
        stop = _stopped()  # what does not fit now is refused, not waited for
        for index, found in ((0, True), (1, False)):
            assert budget.admit("subagent", index, "m", verify_after=True, cancel=stop)
            _spend(budget, ("subagent", index), 20_000)  # $0.10 each
            budget.finished("subagent", index)
            if found:
                assert budget.admit("verifier", index, "m", verify_after=False)
                _spend(budget, ("verifier", index), 40_000)  # a verifier: $0.20
                budget.finished("verifier", index)
            else:
                budget.withdraw("verifier", index)
        # $0.40 spent; 2 of 3 subagents needed a verifier (with the prior one).
        assert budget.admit("subagent", 2, "m", verify_after=True, cancel=stop)
        _spend(budget, ("subagent", 2), 20_000)
        if known:  # it found something: its verifier will run, a whole one ($0.20)
            budget.will_verify(2, "m")
        budget.finished("subagent", 2)
        # $0.50 spent, concern 2's verifier to come; the next: $0.10, two thirds of a
        # verifier ($0.13), and one kept free ($0.20).
        return budget.admit("subagent", 3, "m", verify_after=True, cancel=stop)

    assert next_fits(known=False)  # $0.50 + $0.13 + $0.43 <= $1.10
    assert not next_fits(known=True)  # $0.50 + $0.20 + $0.43 > $1.10


def test_the_first_subagent_to_find_something_commits_the_prior_for_its_verifier() -> None:
    budget = Budget(Caps(max_cost_usd=0.27), _cost)
    assert budget.admit("subagent", 0, "m", verify_after=True)
    _spend(budget, ("subagent", 0), 10_000)  # $0.05
    budget.will_verify(0, "m")  # nothing measured yet: the prior, $0.06
    budget.finished("subagent", 0)
    # $0.05 spent, $0.06 to come; the next: $0.05, a verifier ($0.05), one kept free.
    assert budget.admit("subagent", 1, "m", verify_after=True, cancel=_stopped())


# -- reservations: the expected output far from the caps, the maximum near them --------------


def _in_flight(budget: Budget, agent: tuple[str, int], count: int) -> list[str | None]:
    """``count`` requests of ``agent`` (each may write 1,000,000 tokens: $5) reserved one
    after the other, each by a thread that keeps its request in flight; what each got."""
    outcomes: list[str | None] = []
    done = threading.Event()
    stop = _stopped()
    threads = []
    for _ in range(count):
        reserved = threading.Event()

        def hold(reserved: threading.Event = reserved) -> None:
            outcomes.append(budget.reserve(agent, "m", 0, 1_000_000, stop))
            reserved.set()
            done.wait(60)

        thread = threading.Thread(target=hold)
        thread.start()
        reserved.wait(60)
        threads.append(thread)
    done.set()
    for thread in threads:
        thread.join()
    return outcomes


def test_far_from_the_cap_a_request_reserves_its_roles_expected_output() -> None:
    # Each request may write 1,000,000 tokens ($5); the subagents so far wrote at most 1,000.
    budget = Budget(Caps(max_cost_usd=10.0), _cost)
    for output in (200, 400, 1_000):
        budget.record("subagent", "m", 0, output, 0, 0)
    # Held at their maximum, two would fill the $10 cap; held at 1,000 tokens, ten are in
    # flight at once.
    assert _in_flight(budget, SUBAGENT, 10) == [None] * 10
    assert budget.report().cap_reached is None


def test_near_the_cap_a_request_reserves_its_maximum() -> None:
    budget = Budget(Caps(max_cost_usd=10.0), _cost)
    budget.record("subagent", "m", 0, 1_000, 0, 0)
    budget.record("main", "m", 0, 1_600_000, 0, 0)  # $8 spent
    # $8 and the first one's expected $0.005 pass 80% of the cap: it holds its $5
    # maximum, so the next one waits for it.
    assert _in_flight(budget, SUBAGENT, 2) == [None, "interrupted"]


def test_before_any_reply_a_request_reserves_its_maximum() -> None:
    budget = Budget(Caps(max_cost_usd=10.0), _cost)
    assert _in_flight(budget, SUBAGENT, 3) == [None, None, "interrupted"]


def test_the_expected_output_is_the_roles_own_once_it_has_replies() -> None:
    budget = Budget(Caps(max_cost_usd=10.0), _cost)
    budget.record("main", "m", 0, 700_000, 0, 0)  # $3.50: the main agent writes a lot
    budget.record("verifier", "m", 0, 100, 0, 0)
    # A subagent, with no replies of its own, expects what any reply wrote (up to $3.50):
    # the first is held at $3.50, the second at its $5 maximum (near the cap), and the
    # third waits.
    assert _in_flight(budget, SUBAGENT, 3) == [None, None, "interrupted"]
    # A verifier expects what verifiers wrote: 100 tokens.
    other = Budget(Caps(max_cost_usd=10.0), _cost)
    other.record("main", "m", 0, 700_000, 0, 0)
    other.record("verifier", "m", 0, 100, 0, 0)
    assert _in_flight(other, ("verifier", 0), 5) == [None] * 5


def test_before_any_agent_ended_admission_goes_by_the_calibrated_expectation() -> None:
    def admitted(budget: Budget) -> int:
        stop = _stopped()
        return sum(
            budget.admit("subagent", n, "m", verify_after=True, cancel=stop) for n in range(10)
        )

    # The prior ($0.06 an agent, $0.18 with its verification and a verifier kept free) fits
    # a few agents under $0.50; the review's estimate ($0.01 an agent) fits all ten.
    assert admitted(Budget(Caps(max_cost_usd=0.5), _cost)) < 10
    calibrated = Budget(Caps(max_cost_usd=0.5), _cost)
    calibrated.calibrate("subagent", Amount(0.01, 0))
    calibrated.calibrate("verifier", Amount(0.01, 0))
    assert admitted(calibrated) == 10
