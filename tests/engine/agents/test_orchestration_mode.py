"""Orchestration mode's state machine: every transition and what it tells the model."""

from __future__ import annotations

import pytest

from orch_review.engine.agents.orchestration_mode import ModeState, system_message
from orch_review.engine.agents.prompts import MODE_ENTER, MODE_EXIT, MODE_REFRESH


def _turns(state: ModeState, count: int, interval: int) -> tuple[ModeState, list[str | None]]:
    notices = []
    for _ in range(count):
        state, notice = state.on_user_turn(interval)
        notices.append(notice)
    return state, notices


def test_off_and_never_announced_sends_nothing() -> None:
    state, notices = _turns(ModeState(), 5, 3)
    assert notices == [None] * 5
    assert state == ModeState()


def test_switching_on_announces_the_full_text_once() -> None:
    state, notices = _turns(ModeState().switch(True), 2, 10)
    assert notices == [MODE_ENTER, None]
    assert state.enabled and state.announced


@pytest.mark.parametrize("interval", [1, 2, 3, 10])
def test_refresher_after_every_interval_user_turns(interval: int) -> None:
    state, _ = ModeState().switch(True).on_user_turn(interval)
    _, notices = _turns(state, 3 * interval, interval)
    expected = ([None] * (interval - 1) + [MODE_REFRESH]) * 3
    assert notices == expected


def test_switching_off_sends_the_exit_notice_once() -> None:
    state, _ = ModeState().switch(True).on_user_turn(10)
    state, notices = _turns(state.switch(False), 3, 10)
    assert notices == [MODE_EXIT, None, None]
    assert not state.enabled and not state.announced


def test_switching_off_before_announcing_sends_nothing() -> None:
    state = ModeState().switch(True).switch(False)
    _, notices = _turns(state, 2, 10)
    assert notices == [None, None]


def test_switching_back_on_announces_the_full_text_again() -> None:
    state, _ = ModeState().switch(True).on_user_turn(10)
    state, _ = state.switch(False).on_user_turn(10)
    state, notices = _turns(state.switch(True), 2, 10)
    assert notices == [MODE_ENTER, None]


def test_switching_on_while_on_changes_nothing() -> None:
    state, _ = ModeState().switch(True).on_user_turn(10)
    state, notices = _turns(state.switch(True), 2, 10)
    assert notices == [None, None]
    assert state.turns_since_notice == 2


def test_refresh_counter_restarts_after_reannouncement() -> None:
    state, _ = _turns(ModeState().switch(True), 3, 4)  # enter, then 2 quiet turns
    state, _ = state.switch(False).on_user_turn(4)  # exit notice
    state, notices = _turns(state.switch(True), 5, 4)
    assert notices == [MODE_ENTER, None, None, None, MODE_REFRESH]


def test_state_round_trips_through_json() -> None:
    state, _ = _turns(ModeState().switch(True), 3, 10)
    assert ModeState.from_json(state.to_json()) == state


def test_system_message_shape() -> None:
    assert system_message("x") == {"role": "system", "content": "x"}
