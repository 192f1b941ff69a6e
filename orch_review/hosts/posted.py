"""What orch-review posted on a host in an earlier run, and what became of it in this one:
the records the summary reports, whatever the host."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ThreadState = Literal[
    "resolved", "reopened", "dismissed", "earlier", "open", "not-reviewed", "stuck"
]


@dataclass(frozen=True, slots=True)
class PostedComment:
    """An inline comment orch-review posted in an earlier run."""

    fingerprint: str
    path: str
    line: int | None  # None when the host marks it outdated
    url: str
    comment_id: int = 0  # the host's id of the thread's first comment
    category: str | None = None


@dataclass(frozen=True, slots=True)
class ThreadChange:
    """What became of one of orch-review's threads in this run."""

    comment: PostedComment
    state: ThreadState
    note: str = ""  # why it was left open, or what went wrong
