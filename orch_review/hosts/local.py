"""What ``orch-review pr N`` or ``mr N`` was asked to do: review a host's change from a
local clone, whatever the host."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orch_review.core import ReviewOptions

REMOTE = "origin"  # the clone's remote the change's head is fetched from


@dataclass(frozen=True, slots=True)
class LocalRequest:
    """What ``pr N`` or ``mr N`` was asked to do."""

    number: int
    repository: str | None = None  # --repo; else from the remote's URL
    post: bool = False
    walkthrough: bool = True
    # The review's other options (paths, settings, report files); base and head are set here.
    options: ReviewOptions = field(default_factory=lambda: _default_options())


def _default_options() -> ReviewOptions:
    from orch_review.core import ReviewOptions

    return ReviewOptions()
