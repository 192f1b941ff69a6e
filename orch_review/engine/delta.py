"""What a re-review pays for: the part of a scope no earlier complete review covers.

Files an earlier complete review of the same base saw exactly as they are now are covered by
it (see :mod:`orch_review.engine.reuse`); the rest is the delta. The main agent is given the
delta to scout, with the reused coverage stated; the completeness critic is judged on the
delta's size; an empty delta asks nothing at all (docs/rereview.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from orch_review.config.guidance import Guidance
from orch_review.config.settings import Config
from orch_review.engine.reuse import EarlierReviews
from orch_review.scope.prescout import task_text
from orch_review.scope.resolve import Scope

CRITIC_FILES = 20
CRITIC_LINES = 500


def critic_wanted(config: Config, scope: Scope) -> bool:
    """The critic setting, or by default: a full audit or a large change. On a re-review
    ``scope`` is the delta (the files no earlier complete review covers): a small delta, at
    most ``CRITIC_FILES`` files and ``CRITIC_LINES`` changed lines, runs no critic."""
    if config.critic is not None:
        return config.critic
    if scope.kind == "all":
        return True
    changed = sum(f.change.additions + f.change.deletions for f in scope.files if f.change)
    return len(scope.files) > CRITIC_FILES or changed > CRITIC_LINES


def delta_scope(scope: Scope, earlier: EarlierReviews) -> Scope:
    """``scope`` without the files an earlier complete review covers: what is left to pay
    for (``scope`` itself when nothing is reused)."""
    if not earlier.paths:
        return scope
    return dataclasses.replace(
        scope, files=tuple(f for f in scope.files if f.path not in earlier.paths)
    )


def main_task(delta: Scope, main_guidance: str, earlier: EarlierReviews) -> str:
    """The main agent's first turn: the files to scout (on a re-review only those changed
    since the earlier review), then what the earlier review covers."""
    return task_text(delta, main_guidance) + earlier.note()


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
