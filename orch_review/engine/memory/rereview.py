"""What a re-review pays for: the part of a scope no earlier complete review covers.

Files an earlier complete review of the same base saw exactly as they are now are covered by
it (see :mod:`orch_review.engine.memory.reuse`); the rest is the delta. The main agent is given the
delta to scout, with the reused coverage stated; a delta of a few files is left to the sweep,
without the main agent; the completeness critic is judged on the delta's size; an empty delta
asks nothing at all (docs/rereview.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from orch_review.config.guidance import Guidance
from orch_review.config.settings import Config
from orch_review.engine.agents.prescout import task_text
from orch_review.engine.memory.reuse import EarlierReviews
from orch_review.scope.resolve import Scope
from orch_review.wording import counted

CRITIC_FILES = 20
CRITIC_LINES = 500
#: A re-review's delta of at most this many files and changed lines is reviewed by the sweep
#: alone: scouting it again would cost the main model more than reviewing it.
SWEEP_ONLY_FILES = 3
SWEEP_ONLY_LINES = 300


def critic_wanted(config: Config, scope: Scope) -> bool:
    """The critic setting, or by default: a full audit or a large change. On a re-review
    ``scope`` is the delta (the files no earlier complete review covers): a small delta, at
    most ``CRITIC_FILES`` files and ``CRITIC_LINES`` changed lines, runs no critic."""
    if config.critic is not None:
        return config.critic
    if scope.kind == "all":
        return True
    return len(scope.files) > CRITIC_FILES or _changed_lines(scope) > CRITIC_LINES


def _changed_lines(scope: Scope) -> int:
    return sum(f.change.additions + f.change.deletions for f in scope.files if f.change)


def sweep_only(config: Config, delta: Scope, reused: int, *, walkthrough: bool = False) -> bool:
    """Whether a re-review's ``delta`` is small enough to go to the sweep without the main
    agent: an earlier complete review covers the rest (``reused`` files), and the delta is at
    most ``SWEEP_ONLY_FILES`` files and ``SWEEP_ONLY_LINES`` changed lines. The walkthrough and
    the critic work from the main agent's first wave, so asking for either (``--walkthrough``,
    ``critic = true``) keeps it."""
    if walkthrough or config.critic or not reused or not delta.files:
        return False
    return len(delta.files) <= SWEEP_ONLY_FILES and _changed_lines(delta) <= SWEEP_ONLY_LINES


def swept_summary(delta: Scope, reused: int) -> str:
    """The summary of a re-review whose delta went to the sweep alone."""
    return (
        f"A re-review of {counted(len(delta.files), 'file')} changed since an earlier complete "
        "review of the same base, reviewed by the sweep without a new scouting pass; the "
        f"coverage and verified findings of the other {counted(reused, 'file')} are reused."
    )


def delta_scope(scope: Scope, earlier: EarlierReviews) -> Scope:
    """``scope`` without the files an earlier complete review covers: what is left to pay
    for (``scope`` itself when nothing is reused)."""
    if not earlier.paths:
        return scope
    return dataclasses.replace(
        scope, files=tuple(f for f in scope.files if f.path not in earlier.paths)
    )


def main_task(
    delta: Scope, main_guidance: str, earlier: EarlierReviews, *, shell: bool = True
) -> str:
    """The main agent's first turn: the files to scout (on a re-review only those changed
    since the earlier review), then what the earlier review covers."""
    return task_text(delta, main_guidance, shell=shell) + earlier.note()


NOTHING_CHANGED = (
    "Nothing changed since an earlier complete review of the same base: its coverage and "
    "verified findings are reused."
)


def reuse_base(scope: Scope) -> str | None:
    """What earlier reviews must have been compared with to be reused (None: no reuse)."""
    return None if scope.kind == "all" else scope.base_commit


def guidance_text(guidance: Guidance) -> Callable[[str], str]:
    """The review guidance an agent about one path receives."""

    def text(path: str) -> str:
        return guidance.for_paths([path])[0]

    return text
