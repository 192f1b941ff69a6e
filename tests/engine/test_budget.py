"""The session's ledger: usage summed per role, and each cap refusing new agents once reached."""

from __future__ import annotations

import threading

import pytest

from orch_review.engine.budget import ROLES, Caps, Ledger
from orch_review.findings.usage import Usage


def _cost(model: str, inp: int, out: int, write: int, read: int) -> tuple[float, bool]:
    """Per million tokens: $1 input, $5 output, $2 cache write, $0.10 cache read.
    Models named ``unknown-*`` have no known price."""
    if model.startswith("unknown"):
        return 0.0, False
    return (inp + 5 * out + 2 * write + 0.1 * read) / 1e6, True


def test_usage_is_summed_per_role_with_the_cost_of_each_request() -> None:
    ledger = Ledger(Caps(), _cost)

    one = ledger.record("subagent", "m", 1_000_000, 200_000, 500_000, 1_000_000)
    ledger.record("subagent", "m", 10, 20, 3, 4)
    ledger.record("verifier", "m", 5, 6, 7, 8)

    assert one == Usage(1_000_000, 200_000, 500_000, 1_000_000, pytest.approx(3.1), 1)
    report = ledger.report()
    assert report.by_role["subagent"] == Usage(
        1_000_010, 200_020, 500_003, 1_000_004, pytest.approx(3.1 + 116.4e-6), 2
    )
    assert report.by_role["verifier"] == Usage(5, 6, 7, 8, pytest.approx(49.8e-6), 1)
    assert report.by_role["main"] == Usage() and report.by_role["critic"] == Usage()
    assert report.cap_reached is None and report.unknown_price_models == ()


def test_models_without_a_price_are_listed_once_sorted() -> None:
    ledger = Ledger(Caps(), _cost)
    for model in ("unknown-b", "m", "unknown-a", "unknown-b"):
        ledger.record("main", model, 1, 1, 0, 0)
    assert ledger.report().unknown_price_models == ("unknown-a", "unknown-b")


def test_agents_started_and_reused_are_counted_per_role() -> None:
    ledger = Ledger(Caps(), _cost)
    assert ledger.start_agent("main") and ledger.start_agent("subagent")
    assert ledger.start_agent("subagent")
    ledger.reused("verifier")
    ledger.reused("verifier")
    report = ledger.report()
    assert report.agents_started == {"main": 1, "subagent": 2, "verifier": 0, "critic": 0}
    assert report.agents_from_journal == {"main": 0, "subagent": 0, "verifier": 2, "critic": 0}
    assert set(ROLES) == set(report.by_role)


def test_the_agent_cap_counts_agents_of_every_role() -> None:
    ledger = Ledger(Caps(max_agents=3), _cost)
    assert [ledger.start_agent(r) for r in ("main", "subagent", "verifier")] == [True] * 3
    assert ledger.over_budget() == "agent cap reached (3 agents)"

    assert not ledger.start_agent("subagent")

    report = ledger.report()
    assert sum(report.agents_started.values()) == 3  # the refused agent is not counted
    assert report.cap_reached == "agent cap reached (3 agents)"


def test_the_token_cap_counts_every_token_of_every_role() -> None:
    ledger = Ledger(Caps(max_total_tokens=1000), _cost)
    assert ledger.start_agent("main")
    ledger.record("main", "m", 400, 100, 0, 0)
    ledger.record("subagent", "m", 100, 100, 100, 199)  # cache tokens count: 999 in all
    assert ledger.over_budget() is None and ledger.start_agent("subagent")

    ledger.record("verifier", "m", 0, 0, 0, 1)  # 1000: the cap is reached, not exceeded

    assert ledger.over_budget() == "token cap reached (1,000 tokens)"
    assert not ledger.start_agent("verifier")
    assert ledger.report().agents_started["verifier"] == 0
    assert ledger.report().cap_reached == "token cap reached (1,000 tokens)"


def test_the_cost_cap_stops_new_agents_once_the_estimate_reaches_it() -> None:
    ledger = Ledger(Caps(max_cost_usd=1.5), _cost)
    assert ledger.start_agent("main")
    ledger.record("main", "m", 1_000_000, 0, 0, 0)  # $1.00
    assert ledger.over_budget() is None and ledger.start_agent("subagent")

    ledger.record("subagent", "m", 0, 100_000, 0, 0)  # + $0.50

    assert ledger.over_budget() == "cost cap reached ($1.50)"
    assert not ledger.start_agent("verifier")
    report = ledger.report()
    assert report.agents_started == {"main": 1, "subagent": 1, "verifier": 0, "critic": 0}
    assert report.cap_reached == "cost cap reached ($1.50)"


def test_a_refused_start_alone_reports_the_cap() -> None:
    ledger = Ledger(Caps(max_agents=1), _cost)
    assert ledger.start_agent("main")
    assert ledger.report().cap_reached is None
    assert not ledger.start_agent("subagent")  # nobody asked over_budget()
    assert ledger.report().cap_reached == "agent cap reached (1 agent)"


def test_over_budget_alone_reports_the_cap() -> None:
    ledger = Ledger(Caps(max_total_tokens=10), _cost)
    assert ledger.over_budget() is None and ledger.report().cap_reached is None
    ledger.record("main", "m", 10, 0, 0, 0)
    assert ledger.over_budget() == "token cap reached (10 tokens)"
    assert ledger.report().cap_reached == "token cap reached (10 tokens)"


def test_the_first_cap_reached_is_the_one_reported() -> None:
    ledger = Ledger(Caps(max_total_tokens=2_000_000, max_cost_usd=1.0), _cost)
    ledger.record("main", "m", 0, 200_000, 0, 0)  # $1.00 in 200,000 tokens
    assert ledger.over_budget() == "cost cap reached ($1.00)"
    ledger.record("main", "m", 1_800_000, 0, 0, 0)  # the token cap too, now
    assert not ledger.start_agent("subagent")
    assert ledger.over_budget() == "token cap reached (2,000,000 tokens)"  # checked first
    assert ledger.report().cap_reached == "cost cap reached ($1.00)"


def test_without_caps_nothing_is_refused() -> None:
    ledger = Ledger(Caps(), _cost)
    ledger.record("main", "m", 10**12, 10**12, 0, 0)
    assert all(ledger.start_agent("subagent") for _ in range(100))
    assert ledger.over_budget() is None and ledger.report().cap_reached is None


def test_under_a_cap_only_that_many_agents_start_whatever_the_threads() -> None:
    ledger = Ledger(Caps(max_agents=50), _cost)
    started: list[bool] = []
    lock = threading.Lock()

    def start_many() -> None:
        for _ in range(40):
            ok = ledger.start_agent("subagent")
            with lock:
                started.append(ok)

    threads = [threading.Thread(target=start_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert started.count(True) == 50 == ledger.report().agents_started["subagent"]


def test_a_report_is_a_snapshot() -> None:
    ledger = Ledger(Caps(), _cost)
    ledger.record("main", "m", 1, 0, 0, 0)
    ledger.start_agent("main")
    before = ledger.report()
    ledger.record("main", "m", 1, 0, 0, 0)
    ledger.start_agent("main")
    assert before.by_role["main"].input_tokens == 1 and before.agents_started["main"] == 1
