"""What a re-review pays for: which deltas the main agent scouts and which the sweep takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from orch_review.config.settings import Config
from orch_review.engine.memory.rereview import (
    CRITIC_FILES,
    SWEEP_ONLY_FILES,
    SWEEP_ONLY_LINES,
    critic_wanted,
    sweep_only,
    swept_summary,
)
from orch_review.scope.diff import FileChange
from orch_review.scope.resolve import ReviewFile, Scope


def _delta(*changed: int) -> Scope:
    """A change whose files have ``changed`` lines each (added)."""
    files = tuple(
        ReviewFile(f"src/m{i}.py", 100, FileChange(f"src/m{i}.py", "modified", additions=n))
        for i, n in enumerate(changed)
    )
    return Scope(
        kind="change",
        root=Path("/repo"),
        git_dir=Path("/repo/.git"),
        head="HEAD",
        source="commit",
        base_commit="b" * 40,
        head_commit="c" * 40,
        files=files,
        skipped=(),
        pathspecs=(),
    )


def test_a_delta_of_a_few_small_files_goes_to_the_sweep_alone() -> None:
    config = Config()
    assert sweep_only(config, _delta(3), reused=39)
    assert sweep_only(config, _delta(*[1] * SWEEP_ONLY_FILES), reused=10)
    assert sweep_only(config, _delta(SWEEP_ONLY_LINES), reused=1)


@pytest.mark.parametrize(
    ("delta", "reused"),
    [
        (_delta(*[1] * (SWEEP_ONLY_FILES + 1)), 36),  # one file too many
        (_delta(SWEEP_ONLY_LINES + 1), 39),  # one changed line too many
        (
            _delta(SWEEP_ONLY_LINES // 2, SWEEP_ONLY_LINES // 2 + 1),
            38,
        ),  # too many lines between them
        (_delta(3), 0),  # no earlier review: a first review is always scouted
        (_delta(), 40),  # nothing changed: nothing to sweep either
    ],
)
def test_the_main_agent_scouts_any_other_delta(delta: Scope, reused: int) -> None:
    assert not sweep_only(Config(), delta, reused)


def test_the_walkthrough_and_a_critic_asked_for_keep_the_main_agent() -> None:
    """Both work from the main agent's first wave."""
    assert not sweep_only(Config(), _delta(3), 39, walkthrough=True)
    assert not sweep_only(Config(critic=True), _delta(3), 39)
    assert sweep_only(Config(critic=False), _delta(3), 39)


def test_the_critic_is_judged_on_the_delta() -> None:
    assert not critic_wanted(Config(), _delta(*[1] * CRITIC_FILES))
    assert critic_wanted(Config(), _delta(*[1] * (CRITIC_FILES + 1)))
    assert critic_wanted(Config(), _delta(501))
    assert critic_wanted(Config(critic=True), _delta(1))


def test_the_summary_of_a_swept_delta_says_what_was_reviewed_and_what_reused() -> None:
    assert swept_summary(_delta(3), 39) == (
        "A re-review of 1 file changed since an earlier complete review of the same base, "
        "reviewed by the sweep without a new scouting pass; the coverage and verified findings "
        "of the other 39 files are reused."
    )
    assert "of 2 files changed" in swept_summary(_delta(3, 4), 1)
    assert "other 1 file are" in swept_summary(_delta(3, 4), 1)
