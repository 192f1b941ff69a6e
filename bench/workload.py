"""The benchmark workload: a repository, a scripted review of it, and deterministic latencies.

"The same work", for our engine and for the reference schedule alike, means:

* the same concerns: one per file ``modNNN.py`` of a fresh git repository, each file holding
  exactly one line that the concern's subagent reports as a finding;
* the same turns per agent, but for what the prompt holds: the main agent makes 3 requests
  (scout with bash, call Workflow, summarise); every verifier makes 2 (bash, then
  ``report_verdicts``). The reference's subagent is given its subtask only, so it makes 2
  (bash to read its file, then ``report_findings`` with one finding); ours is shown the file
  its subtask names (``orch_review.engine.agents.inlined_files``), so it reports from what it
  was shown in 1, the reference's second. So the reference makes ``3 + 4 * concerns`` requests
  and ours ``3 + 3 * concerns``, and the bench checks that they did. The completeness critic,
  which the reference does not have, is off in that comparison; the critic bench measures what
  it costs: it makes 2 requests (bash, then ``report_concerns``) and proposes
  ``critic_concerns`` cross-module concerns (``xcutNNN``), each reviewed and verified like the
  others. Packing small subtasks (``orch_review.engine.agents.packing``) is off in every run:
  one agent per concern, as the reference;
* the same latency per *logical* request. A logical request is named by (role, concern, turn),
  read off the request itself (the tools offered, the ``modNNN`` in the task, the number of
  assistant turns so far), so it does not depend on when or in which order it was sent. The
  fake Messages API waits that long before it answers. A subagent shown its file starts at
  turn 1: its report meets the latency the reference's report meets.
* a second copy of the same request (a hedge) meets a latency of its own, drawn from the same
  mix by a generator seeded with the seed, the logical request and the copy's number: the
  tail is taken to be the server's (queueing, a slow replica), not the request's. A tail that
  came from the request itself (a long answer) would make every copy as slow, and a hedge
  would only cost one more request.

Latency distributions:

* ``fixed``: every request 200 ms.
* ``heavy``: 200 ms times a multiplier. Over the ``4 * concerns`` fan-out requests the
  multipliers come in exact proportions, 80 % x1, 15 % x3, 5 % x10, dealt to the logical
  requests by a shuffle seeded with ``seed`` (so a seed is one fixed, reproducible workload).
  The critic's requests and its concerns' get the same mix from a second shuffle, so the
  first wave meets the same latencies with the critic on or off. The main agent's requests
  are x1 in both distributions.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import re
import subprocess
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orch_review.engine.api.hedging import (
    HEDGE_PERCENTILE,
    HEDGE_RANK,
    IDLE_HEDGE_PERCENTILE,
    LATENCIES_KEPT,
    MIN_SAMPLE,
)
from orch_review.engine.api.scheduler import (
    AGENTS_PER_SLOT,
    CRITIC,
    REVIEW,
    VERIFY,
    Rank,
    request_rank,
)
from tests.fakes.messages_api import ModelRequest
from tests.scripted import Concern, ReviewScript, confirm, shown_files

BASE_LATENCY = 0.2
HEAVY_MIX = ((1, 0.80), (3, 0.15), (10, 0.05))
SUBAGENT_TURNS = 2  # the reference's subagent: bash to read its file, then its report
SHOWN_FIRST_TURN = 1  # ours is shown the file: its first request is the report
VERIFIER_TURNS = 2
MAIN_TURNS_BEFORE_WORKFLOW = 2  # scout, then the Workflow call
MAIN_TURNS = 3

_KEY = re.compile(r"mod(\d{3})")
_CRITIC_KEY = re.compile(r"xcut(\d{3})")
CRITIC_INDEX = 1000  # concern index of the critic's first concern in a RequestId
CRITIC_TURNS = 2
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}

# (role, concern index or -1 for the main agent, turn starting at 0)
RequestId = tuple[str, int, int]


def concern_key(index: int) -> str:
    """The word that names concern ``index`` in its subtask and nowhere else."""
    return f"mod{index:03d}"


def make_repo(root: Path, concerns: int, env: Mapping[str, str]) -> Path:
    """A committed repository with one small module per concern, each with one risky line."""
    root.mkdir(parents=True)
    for i in range(concerns):
        body = "".join(f"def helper_{j}(x):\n    return x + {j}\n\n\n" for j in range(3))
        body += f"def entry(values):\n    return risky(values, {i})  # unchecked\n"
        (root / f"{concern_key(i)}.py").write_text(body, encoding="utf-8")
    git_env = {**env, **_GIT_ENV}
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["commit", "-q", "-m", "bench workload"],
    ):
        subprocess.run(["git", *args], cwd=root, env=git_env, check=True, capture_output=True)
    return root


def critic_key(index: int) -> str:
    """The word that names the critic's concern ``index`` (before any module it names)."""
    return f"xcut{index:03d}"


def make_script(concerns: int, critic_concerns: int = 0) -> ReviewScript:
    """The scripted review: one Workflow call with every concern, one finding each, confirmed;
    the critic, when it runs, proposes ``critic_concerns`` concerns that each find one more."""
    proposed = [
        Concern(
            critic_key(j),
            f"Cross-module check {critic_key(j)}: do the callers of entry() in "
            f"{concern_key(j)}.py handle what risky() raises?",
            f"grep -n 'risky(' {concern_key(j)}.py",
            path=f"{concern_key(j)}.py",
            pattern="risky(",
            severity="low",
            category="error-handling",
            claim="An exception from risky() escapes entry() unhandled.",
            verdict=confirm,
        )
        for j in range(critic_concerns)
    ]
    first_wave = [
        Concern(
            concern_key(i),
            f"Check {concern_key(i)}.py: does entry() validate what it passes to risky()?",
            f"grep -n 'risky(' {concern_key(i)}.py",
            path=f"{concern_key(i)}.py",
            pattern="risky(",
            severity="medium",
            category="correctness",
            claim="entry() passes unvalidated input to risky().",
            verdict=confirm,
        )
        for i in range(concerns)
    ]
    return ReviewScript(
        [*proposed, *first_wave],  # a critic's task names a module too: its key wins
        subtasks=[c.subtask for c in first_wave],
        critic_concerns=[c.subtask for c in proposed],
    )


def request_id(request: ModelRequest) -> RequestId:
    """The logical request a recorded or incoming request is."""
    role = request.role
    turn = request.assistant_turns
    if role == "subagent" and shown_files(request.first_user_text):
        turn += SHOWN_FIRST_TURN  # it skipped the reading turn
    if role == "main":
        return ("main", -1, turn)
    if request.has_tool("report_concerns"):
        return ("critic", -1, turn)
    proposed = _CRITIC_KEY.search(request.first_user_text)
    if proposed is not None:
        return (role, CRITIC_INDEX + int(proposed.group(1)), turn)
    match = _KEY.search(request.first_user_text)
    if match is None:
        raise ValueError(f"a {role} request names no concern")
    return (role, int(match.group(1)), turn)


def fan_out_ids(concerns: int, first: int = 0, *, shown: bool = False) -> list[RequestId]:
    """Every logical subagent and verifier request of the workload, in a fixed order (the
    reference's; ``shown``: ours, whose subagents skip their reading turn)."""
    ids: list[RequestId] = []
    start = SHOWN_FIRST_TURN if shown else 0
    for i in range(first, first + concerns):
        ids += [("subagent", i, t) for t in range(start, SUBAGENT_TURNS)]
        ids += [("verifier", i, t) for t in range(VERIFIER_TURNS)]
    return ids


def fan_out_requests(concerns: int, *, shown: bool) -> int:
    """Requests one concern's subagent and verifier make, times ``concerns``."""
    return len(fan_out_ids(concerns, shown=shown))


def critic_ids(critic_concerns: int) -> list[RequestId]:
    """The critic's requests and its concerns' subagent and verifier requests."""
    ids: list[RequestId] = [("critic", -1, t) for t in range(CRITIC_TURNS)]
    return ids + fan_out_ids(critic_concerns, CRITIC_INDEX)


@dataclass(frozen=True)
class LatencyModel:
    """Seconds the fake API waits before answering each logical request."""

    name: str
    multipliers: Mapping[RequestId, int]  # fan-out requests; anything else is x1
    base: float = BASE_LATENCY
    seed: int = 0
    mix: tuple[tuple[int, float], ...] = ((1, 1.0),)  # what a later copy's multiplier is drawn from
    # Copies of each logical request the fake has received in this run.
    _arrivals: dict[RequestId, int] = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def seconds(self, rid: RequestId) -> float:
        """Latency of one logical request (its first copy)."""
        return self.base * self.multipliers.get(rid, 1)

    def copy_seconds(self, rid: RequestId, copy: int) -> float:
        """Latency of copy ``copy`` of a logical request (0: the first): a later copy of a
        fan-out request draws its multiplier from the mix afresh."""
        if copy == 0 or rid not in self.multipliers:
            return self.seconds(rid)
        return self.base * redraw(self.seed, rid, copy, self.mix)

    def reset(self) -> None:
        """Forget the copies received: a new run starts."""
        with self._lock:
            self._arrivals.clear()

    def __call__(self, request: ModelRequest) -> float:
        rid = request_id(request)
        with self._lock:
            copy = self._arrivals.get(rid, 0)
            self._arrivals[rid] = copy + 1
        return self.copy_seconds(rid, copy)

    def describe(self) -> str:
        """One line: the distribution and its realised mix."""
        counts: dict[int, int] = {}
        for m in self.multipliers.values():
            counts[m] = counts.get(m, 0) + 1
        mix = ", ".join(f"{n} x{m}" for m, n in sorted(counts.items()))
        return f"{self.name} ({self.base * 1000:.0f} ms base; fan-out requests: {mix})"


def redraw(
    seed: int, rid: RequestId, copy: int, mix: Sequence[tuple[int, float]] = HEAVY_MIX
) -> int:
    """A multiplier from ``mix`` for copy ``copy`` of ``rid``, reproducibly."""
    draw = random.Random(f"{seed}:{rid}:{copy}").random()
    total = 0.0
    for multiplier, share in mix:
        total += share
        if draw < total:
            return multiplier
    return mix[-1][0]


def fixed_latency(concerns: int, base: float = BASE_LATENCY) -> LatencyModel:
    """Every request ``base`` seconds."""
    return LatencyModel("fixed", dict.fromkeys(fan_out_ids(concerns), 1), base)


def _deal(ids: Sequence[RequestId], seed: int) -> dict[RequestId, int]:
    """Exact 80/15/5 % of x1/x3/x10 over ``ids``, by a shuffle seeded with ``seed``."""
    multipliers: list[int] = []
    for multiplier, share in HEAVY_MIX[1:]:
        multipliers += [multiplier] * round(len(ids) * share)
    multipliers += [HEAVY_MIX[0][0]] * (len(ids) - len(multipliers))
    random.Random(seed).shuffle(multipliers)
    return dict(zip(ids, multipliers, strict=True))


def heavy_latency(
    concerns: int, seed: int, base: float = BASE_LATENCY, critic_concerns: int = 0
) -> LatencyModel:
    """Exact 80/15/5 % of x1/x3/x10, dealt to the fan-out requests by a seeded shuffle (the
    critic's, if any, by a second one: the first wave's latencies do not depend on it)."""
    multipliers = _deal(fan_out_ids(concerns), seed)
    if critic_concerns:
        multipliers |= _deal(critic_ids(critic_concerns), seed + 1_000_003)
    return LatencyModel(f"heavy-tailed, seed {seed}", multipliers, base, seed, HEAVY_MIX)


@dataclass(frozen=True)
class Chains:
    """Per-concern agent durations (sum of their request latencies) and the main agent's."""

    subagents: tuple[float, ...]
    verifiers: tuple[float, ...]
    main_before: float  # main-agent requests before the fan-out starts
    main_after: float  # and after it ends

    @classmethod
    def from_requests(cls, rids: Iterable[RequestId], latency: LatencyModel) -> Chains:
        """Durations of the requests actually made, with the latency each was given."""
        sub: dict[int, float] = {}
        ver: dict[int, float] = {}
        before = after = 0.0
        for rid in rids:
            role, index, turn = rid
            if role == "critic" or index >= CRITIC_INDEX:
                continue  # the first wave's chains only
            seconds = latency.seconds(rid)
            if role == "main":
                if turn < MAIN_TURNS_BEFORE_WORKFLOW:
                    before += seconds
                else:
                    after += seconds
            else:
                into = sub if role == "subagent" else ver
                into[index] = into.get(index, 0.0) + seconds
        order = sorted(sub)
        return cls(
            tuple(sub[i] for i in order), tuple(ver.get(i, 0.0) for i in order), before, after
        )

    def lower_bound(self, workers: int) -> float:
        """Main agent + max(longest subagent->verifier chain, all fan-out work / workers).

        A true lower bound for any schedule, even one that knew every latency in advance.
        """
        longest = max(
            (s + v for s, v in zip(self.subagents, self.verifiers, strict=True)), default=0
        )
        work = (sum(self.subagents) + sum(self.verifiers)) / workers
        return self.main_before + max(longest, work) + self.main_after

    def pipelined_schedule(self, workers: int) -> float:
        """Zero-overhead makespan of the previous policy: a slot per agent, FIFO subagents,
        each verifier queued ahead of them."""
        return (
            self.main_before + _pipelined(self.subagents, self.verifiers, workers) + self.main_after
        )

    def barrier_schedule(self, workers: int) -> float:
        """Zero-overhead makespan of the reference: all subagents, then all verifiers."""
        return (
            self.main_before
            + _list_schedule(self.subagents, workers)
            + _list_schedule(self.verifiers, workers)
            + self.main_after
        )


def _list_schedule(durations: Sequence[float], workers: int) -> float:
    free = [0.0] * workers
    for d in durations:
        slot = free.index(min(free))
        free[slot] += d
    return max(free, default=0.0)


def _pipelined(sub: Sequence[float], ver: Sequence[float], workers: int) -> float:
    """Event simulation of the previous policy: a slot per agent, verifiers first."""
    running: list[tuple[float, str, int]] = []  # (finish time, role, concern)
    ready_verifiers: list[int] = []
    next_sub = 0
    now = 0.0
    while True:
        while len(running) < workers and (ready_verifiers or next_sub < len(sub)):
            if ready_verifiers:
                i = ready_verifiers.pop(0)
                running.append((now + ver[i], "v", i))
            else:
                running.append((now + sub[next_sub], "s", next_sub))
                next_sub += 1
        if not running:
            return now
        running.sort()
        now, role, i = running.pop(0)
        if role == "s":
            ready_verifiers.append(i)


def longest_chain_first(
    latency: LatencyModel, concerns: int, workers: int, *, shown: bool = False
) -> float:
    """Zero-overhead fan-out makespan of a policy that schedules single *requests* (not whole
    agents) and always sends the ready request with the most requests still behind it in its
    concern's chain (subagent turns, then verifier turns): the classic critical-path list
    schedule for chains whose lengths are not known in advance. The engine's policy
    (:func:`engine_schedule`) should give the same makespan on this workload. ``shown``:
    subagents are shown their files and start at their report."""
    first = SHOWN_FIRST_TURN if shown else 0
    steps = [("subagent", t) for t in range(first, SUBAGENT_TURNS)]
    steps += [("verifier", t) for t in range(VERIFIER_TURNS)]
    chains = [[latency.seconds((role, i, t)) for role, t in steps] for i in range(concerns)]
    ready = [(-len(steps), i, 0) for i in range(concerns)]  # (-requests left, concern, step)
    heapq.heapify(ready)
    running: list[tuple[float, int, int]] = []
    now = 0.0
    while ready or running:
        while ready and len(running) < workers:
            _, i, step = heapq.heappop(ready)
            heapq.heappush(running, (now + chains[i][step], i, step))
        now, i, step = heapq.heappop(running)
        if step + 1 < len(steps):
            heapq.heappush(ready, (-(len(steps) - step - 1), i, step + 1))
    return now


_TURNS = {"critic": CRITIC_TURNS, "subagent": SUBAGENT_TURNS, "verifier": VERIFIER_TURNS}
_ADMIT = {"critic": CRITIC, "verifier": VERIFY, "subagent": REVIEW}


def engine_schedule(
    latency: LatencyModel,
    concerns: int,
    workers: int,
    *,
    critic_concerns: int | None = None,
    agents: int | None = None,
    shown: bool = True,
    hedge: bool = False,
) -> float:
    """Zero-overhead fan-out makespan of the engine's policy, by event simulation: agents
    admitted to the pool (at most ``agents``: the critic, then verifiers, then concerns in
    order), each request waiting at the gate for one of ``workers`` slots in the order of
    :func:`orch_review.engine.api.scheduler.request_rank`. ``critic_concerns``: the critic runs
    and proposes that many. ``agents=workers`` is the previous policy, a slot per agent.
    ``shown``: subagents are shown their files and start at their report. ``hedge``: late
    requests are sent once more (:func:`hedged_schedule`)."""
    return hedged_schedule(
        latency,
        concerns,
        workers,
        critic_concerns=critic_concerns,
        agents=agents,
        shown=shown,
        hedge=hedge,
    )[0]


def hedged_schedule(
    latency: LatencyModel,
    concerns: int,
    workers: int,
    *,
    critic_concerns: int | None = None,
    agents: int | None = None,
    shown: bool = True,
    hedge: bool = True,
) -> tuple[float, int]:
    """:func:`engine_schedule`, and the copies sent. With ``hedge``, as
    :mod:`orch_review.engine.api.hedging` does: a request outstanding longer than its role's
    threshold (of the replies so far; the earlier one while a slot is free and no request
    waits) is queued once more, first in line; the first copy to answer ends both (the
    other's slot is freed at once); a copy meets :meth:`LatencyModel.copy_seconds`."""
    cap = agents if agents is not None else AGENTS_PER_SLOT * workers
    order = itertools.count()
    admit: list[tuple[int, int, str, int]] = []  # (priority, fifo, role, concern index)
    ready: list[tuple[Rank, int, RequestId, int]] = []  # (rank, fifo, request, copy)
    running: list[tuple[float, int, RequestId, int, float]] = []  # (finish, fifo, request,
    # copy, sent at)
    answered: set[RequestId] = set()
    hedged: set[RequestId] = set()
    samples: dict[str, list[float]] = {}
    copies = 0
    live = 0
    now = 0.0

    def submit(role: str, index: int) -> None:
        heapq.heappush(admit, (_ADMIT[role], next(order), role, index))

    def request(role: str, index: int, turn: int) -> None:
        rank = request_rank(role, turn, index)
        heapq.heappush(ready, (rank, next(order), (role, index, turn), 0))

    def threshold(role: str, idle: bool) -> float | None:
        seen = sorted(samples.get(role, [])[-LATENCIES_KEPT:])
        if len(seen) < MIN_SAMPLE:
            return None
        percentile = IDLE_HEDGE_PERCENTILE if idle else HEDGE_PERCENTILE
        return seen[max(1, math.ceil(percentile * len(seen))) - 1]

    if critic_concerns is not None:
        submit("critic", -1)
    for i in range(concerns):
        submit("subagent", i)
    while admit or ready or running:
        while admit and live < cap:
            _, _, role, index = heapq.heappop(admit)
            live += 1
            request(role, index, SHOWN_FIRST_TURN if shown and role == "subagent" else 0)
        while ready and len(running) < workers:
            _, _, rid, copy = heapq.heappop(ready)
            if rid in answered:
                continue  # a hedge whose request answered while it waited for a slot
            seconds = latency.copy_seconds(_logical(rid, concerns), copy)
            heapq.heappush(running, (now + seconds, next(order), rid, copy, now))
            copies += 1
        due: tuple[float, RequestId] | None = None
        if hedge:
            # Slots were just filled: one is free only if no request waits.
            idle = len(running) < workers
            for _, _, rid, _, sent in running:
                after = None if rid in hedged else threshold(rid[0], idle)
                if after is not None and (due is None or sent + after < due[0]):
                    due = (sent + after, rid)
        if due is not None and due[0] < running[0][0]:
            now = max(now, due[0])
            hedged.add(due[1])
            heapq.heappush(ready, (HEDGE_RANK, next(order), due[1], 1))
            continue
        now, _, rid, _, sent = heapq.heappop(running)
        answered.add(rid)
        samples.setdefault(rid[0], []).append(now - sent)
        if rid in hedged:  # the other copy is cancelled: its slot is free
            running = [r for r in running if r[2] != rid]
            heapq.heapify(running)
        role, index, turn = rid
        if turn + 1 < _TURNS[role]:
            request(role, index, turn + 1)
            continue
        live -= 1
        if role == "subagent":
            submit("verifier", index)
        elif role == "critic":
            for j in range(critic_concerns or 0):
                submit("subagent", concerns + j)
    return now, copies


def _logical(rid: RequestId, concerns: int) -> RequestId:
    """The workload's id of a simulated request: the critic's concerns are numbered after
    the first wave in the engine, and from ``CRITIC_INDEX`` in the workload."""
    role, index, turn = rid
    if role != "critic" and index >= concerns:
        return (role, CRITIC_INDEX + index - concerns, turn)
    return rid
