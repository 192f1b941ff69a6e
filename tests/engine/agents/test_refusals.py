"""The refused-subtasks warning: each reason once with its count, the subtasks by short titles."""

from __future__ import annotations

from orch_review.engine.agents.refusals import refusal_warning, title

NO_FILE = "it names no file of the change; concerns must be about changed files"
LOCK = "`poetry.lock` is out of scope (lock file or generated/vendored code)"


def test_nothing_refused_says_nothing() -> None:
    assert refusal_warning([]) is None


def test_one_refusal_is_one_short_sentence() -> None:
    assert refusal_warning([("Think about\nconcurrency.", NO_FILE)]) == (
        "1 subtask of the main agent was refused and not reviewed. "
        f'1 because {NO_FILE}: "Think about concurrency.".'
    )


def test_reasons_are_grouped_counted_and_ordered_by_count() -> None:
    refused = [(f"Subtask number {n}", NO_FILE) for n in range(7)]
    refused += [("Subtask number 0", NO_FILE), ("Review `poetry.lock`.", LOCK)]  # one repeated
    warning = refusal_warning(refused)

    assert warning is not None
    assert warning.startswith(
        "8 subtasks of the main agent were refused and not reviewed. 7 because "
    )
    assert warning.count(NO_FILE) == 1 and warning.count(LOCK) == 1
    assert warning.index(NO_FILE) < warning.index(LOCK)
    assert '"Subtask number 0", "Subtask number 1", "Subtask number 2" and 4 more.' in warning
    assert "\n" not in warning


def test_a_long_subtask_is_cut_at_a_word() -> None:
    cut = title("Look for performance regressions anywhere in the code base, in hot loops")
    assert cut == "Look for performance regressions anywhere in…"
    assert len(cut) <= 48
