"""Which concerns a review queued, the files each covers, and what became of them.

Each concern gets its index in the review; the same concern about the same files asked for
again (a main agent restarted after a refusal) keeps its index and outcome, and is never
paid for twice.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from orch_review.engine.agents.review_session import ReviewedContent
from orch_review.findings.records import ConcernOutcome


@dataclass(frozen=True, slots=True)
class Numbered:
    """A concern with its index and files; ``earlier`` when it was queued before."""

    index: int
    concern: str
    files: tuple[str, ...]
    outcome: Future[ConcernOutcome]
    earlier: bool


class ConcernBook:
    """The concerns of one session and their outcomes (thread-safe: the critic queues
    concerns from a worker thread)."""

    def __init__(self, workspace: ReviewedContent) -> None:
        self._workspace = workspace
        self._lock = threading.Lock()
        self._next_index = 0
        self.outcomes: list[ConcernOutcome] = []
        # Concern index -> the reviewable files it is about: what its outcome covers.
        self.files_of: dict[int, tuple[str, ...]] = {}
        # (concern, files) -> its index and outcome, for a concern asked for again.
        self._queued: dict[tuple[str, tuple[str, ...]], tuple[int, Future[ConcernOutcome]]] = {}

    def number(
        self, concerns: Sequence[str], files: Sequence[Sequence[str]] | None
    ) -> list[Numbered]:
        """Each concern's index and the files it covers (default: the reviewable files its
        text names), with the outcome of the same concern about the same files when this
        review already queued it."""
        named = [
            tuple(files[n] if files is not None else self._workspace.mentioned_files(concern))
            for n, concern in enumerate(concerns)
        ]
        out: list[Numbered] = []
        with self._lock:
            for concern, paths in zip(concerns, named, strict=True):
                earlier = self._queued.get((concern, paths))
                if earlier is not None:
                    out.append(Numbered(earlier[0], concern, paths, earlier[1], True))
                    continue
                index = self._next_index
                self._next_index += 1
                self.files_of[index] = paths
                outcome: Future[ConcernOutcome] = Future()
                self._queued[(concern, paths)] = (index, outcome)
                out.append(Numbered(index, concern, paths, outcome, False))
        return out

    def add(self, outcomes: Sequence[ConcernOutcome]) -> None:
        """``outcomes`` join :attr:`outcomes` in concern order (one already in is kept)."""
        with self._lock:
            known = {o.index for o in self.outcomes}
            for outcome in outcomes:
                if outcome.index not in known:
                    known.add(outcome.index)
                    self.outcomes.append(outcome)
            self.outcomes.sort(key=lambda o: o.index)

    def pending_files(self) -> frozenset[str]:
        """Files named by queued concerns whose outcome is not in yet."""
        with self._lock:
            done = {o.index for o in self.outcomes}
            return frozenset(
                path for i, paths in self.files_of.items() if i not in done for path in paths
            )
