"""Run one real review in this process and print its figures as one JSON line.

Usage: python -m bench.review_child REPO --schedule engine|agents|barrier [--concurrency N]
       [--journal PATH] [--critic]

Started by the fan-out and critic benches as a child process (``ANTHROPIC_BASE_URL`` pointing
at the fake Messages API), so that the peak RSS it reports is the review's own.
``--schedule agents`` swaps the engine's pool for :class:`AgentSlotPool`, the previous policy
(a slot per agent, verifiers first); ``--schedule barrier`` for :class:`BarrierPool`, the
reference's schedule. Everything else (client, agents, journal, Workflow) is the same code.
The swap happens in :mod:`orch_review.engine.api.scheduler` before anything else of orch_review
is imported, so it holds whichever module builds the pool. The completeness critic is off
unless ``--critic`` is given.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from orch_review.engine.api import scheduler
from orch_review.engine.api.scheduler import REVIEW, PriorityPool

if TYPE_CHECKING:
    from orch_review.config.settings import Config

T = TypeVar("T")


class AgentSlotPool(PriorityPool):
    """A slot per agent: as many agents at once as requests in flight, so the request gate
    never holds anyone back and a freed slot goes to a verifier first, then to the next
    concern (the engine's policy before requests were ranked)."""

    def __init__(self, requests: int, name: str = "orch-review", agents: int | None = None) -> None:
        super().__init__(requests, name, agents=requests)


class BarrierPool(AgentSlotPool):
    """The reference's schedule on the same workers: the whole first wave, then verification.

    Verification work submitted while any subagent is queued or running is parked; when the
    last subagent finishes, the parked verifiers are queued in concern order (the reference
    maps its verifiers over the results in subtask order).
    """

    def __init__(self, requests: int, name: str = "orch-review", agents: int | None = None) -> None:
        super().__init__(requests, name)
        self._barrier_lock = threading.Lock()
        self._reviews_left = 0
        self._parked: list[Callable[[], Any]] = []

    def submit(self, priority: int, fn: Callable[[], T]) -> Future[T]:
        if priority == REVIEW:
            with self._barrier_lock:
                self._reviews_left += 1
            return super().submit(priority, lambda: self._review(fn))
        with self._barrier_lock:
            if self._reviews_left:
                self._parked.append(fn)
                return Future()  # Workflow tracks completion through its own futures
        return super().submit(priority, fn)

    def _review(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        finally:
            with self._barrier_lock:
                self._reviews_left -= 1
                released = [] if self._reviews_left else sorted(self._parked, key=_concern_index)
                if released:
                    self._parked = []
            for parked in released:
                super().submit(0, parked)


def _concern_index(fn: Callable[[], Any]) -> int:
    """The concern a parked ``partial(Workflow._verify, outcome, done)`` is about."""
    args = getattr(fn, "args", ())
    return int(getattr(args[0], "index", 0)) if args else 0


def _scope_all(repo: Path, config: Config, env: dict[str, str]) -> Any:
    """Every tracked file of ``repo`` (``orch-review --all``)."""
    from orch_review.scope.git import open_repo
    from orch_review.scope.resolve import ScopeRequest, resolve_scope

    request = ScopeRequest(kind="all")
    return resolve_scope(open_repo(repo, env), request, exclude=config.exclude, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--schedule", choices=("engine", "agents", "barrier"), default="engine")
    parser.add_argument("--critic", action="store_true", help="run the completeness critic")
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--journal", type=Path, help="journal file (default: no journal)")
    parser.add_argument("--sandbox", help="the config's `sandbox` setting (default: its default)")
    parser.add_argument(
        "--no-inline", action="store_true", help="show subagents no file (as the reference)"
    )
    parser.add_argument(
        "--no-hedge", action="store_true", help="send each request once (as the reference)"
    )
    args = parser.parse_args()

    if args.schedule != "engine":
        pool = BarrierPool if args.schedule == "barrier" else AgentSlotPool
        scheduler.PriorityPool = pool  # type: ignore[misc]
    import anthropic  # noqa: F401  (imported before the clock starts: startup is bench 4)

    import orch_review.engine.review as core
    from orch_review.config.settings import Config

    settings: dict[str, Any] = {
        "max_concurrent": args.concurrency,
        "journal": args.journal is not None,
        "journal_path": args.journal,
    }
    if args.sandbox is not None:
        settings["sandbox"] = args.sandbox
    if args.no_inline:
        settings["inline_file_bytes"] = 0
    if "pack_subtasks" in {f.name for f in dataclasses.fields(Config)}:
        # One agent per concern in every run, as the reference: packing would review the
        # same concerns with fewer agents, which is the estimate bench's to measure.
        settings["pack_subtasks"] = False
    if args.no_hedge and "hedge" in {f.name for f in dataclasses.fields(Config)}:
        settings["hedge"] = False
    if "critic" in {f.name for f in dataclasses.fields(Config)}:
        settings["critic"] = bool(args.critic)  # the reference has none
    config = Config(**settings)
    env = {
        "ANTHROPIC_BASE_URL": os.environ["ANTHROPIC_BASE_URL"],
        "ORCH_REVIEW_PROVE": "off",  # these figures are of reviews without proofs
        "ANTHROPIC_API_KEY": "bench-key",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    scope = _scope_all(args.repo, config, env)
    cpu_before = os.times()
    started = time.monotonic()  # system-wide on Linux: the bench lines it up with the fake API
    report = core.review_scope(config, scope, env)
    wall = time.monotonic() - started
    cpu_after = os.times()
    usage = report.usage
    figures = {
        "wall_s": wall,
        "started_monotonic": started,
        "cpu_s": (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system),
        "shell_cpu_s": (cpu_after.children_user - cpu_before.children_user)
        + (cpu_after.children_system - cpu_before.children_system),
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "concerns": len(report.concerns),
        "uncovered": len(report.uncovered),
        "confirmed": len(report.confirmed),
        "warnings": list(report.warnings),
        "model": report.model,
        "agents_started": usage.agents_started,
        "by_role": {role: u.to_json() for role, u in usage.by_role.items()},
        "total": usage.total.to_json(),
    }
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
