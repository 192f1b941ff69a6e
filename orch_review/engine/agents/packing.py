"""Small subtasks packed into shared agents, so a fan-out over many tiny files costs what the
sweep over them would.

Each agent pays a fixed price (system prompt, tools, its task, its report, its verifier)
before it reads a line. A main agent that writes one subtask per file of a large change of
small files pays that price per file: on 100 two-line files, five times what the sweep
pays for the same files. When a Workflow call holds more small subtasks than the review runs
agents at once, they are packed into as many agents as run at once (at most
:attr:`PackLimits.max_members` subtasks each, their files within what one task shows): the
same parallelism, a fraction of the agents. Each packed subtask stays a question of its own
in the packed agent's task. A subtask is small when every file it names is shown in its task
anyway (``engine.inline``) and they hold at most :attr:`PackLimits.small_bytes` together.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

PACK_MARK = "Packed review of "


@dataclass(frozen=True, slots=True)
class PackLimits:
    """When subtasks are packed, and how much one packed agent holds."""

    slots: int  # agents' requests in flight at once (max-concurrent)
    budget: int  # bytes of files one task shows (inline-file-bytes); 0: no packing
    small_bytes: int = 4_000
    max_members: int = 10


@dataclass(frozen=True, slots=True)
class Packed:
    """The concerns to run, and for each, the subtasks it holds (itself when not packed)."""

    concerns: tuple[str, ...]
    members: tuple[tuple[str, ...], ...]

    @property
    def packed(self) -> int:
        """Subtasks that run in a packed agent."""
        return sum(len(m) for m in self.members if len(m) > 1)


def packed_text(members: Sequence[str]) -> str:
    """The task of one packed agent: each subtask numbered, as its own question."""
    listed = "\n\n".join(
        f"{n}. " + subtask.replace("\n", "\n   ") for n, subtask in enumerate(members, 1)
    )
    return (
        f"{PACK_MARK}{len(members)} small subtasks, each about files shown below. Treat each "
        "as its own question and review it fully; report the findings of all of them in "
        f"one report_findings call.\n\n{listed}"
    )


def pack(
    subtasks: Sequence[str], sizes: Callable[[str], Sequence[int]], limits: PackLimits
) -> Packed:
    """``subtasks`` with the small ones packed, in their order; ``sizes``: the sizes of the
    files a subtask names (none when it names none), asked only when packing is possible."""
    alone = tuple((s,) for s in subtasks)
    if limits.budget <= 0 or len(set(subtasks)) <= limits.slots:
        return Packed(tuple(subtasks), alone)  # no file read: too few to pack, or no budget
    small: list[tuple[str, int]] = []
    for subtask in dict.fromkeys(subtasks):  # a subtask asked for twice is packed once
        named = sizes(subtask)
        total = sum(named)
        if named and total <= min(limits.small_bytes, limits.budget):
            small.append((subtask, total))
    if len(small) <= limits.slots:
        return Packed(tuple(subtasks), alone)
    per_agent = min(limits.max_members, math.ceil(len(small) / limits.slots))
    groups: list[list[str]] = []
    used = 0
    for subtask, size in small:
        if not groups or len(groups[-1]) >= per_agent or used + size > limits.budget:
            groups.append([])
            used = 0
        groups[-1].append(subtask)
        used += size
    in_group = {s for group in groups for s in group}
    members: list[tuple[str, ...]] = [(s,) for s in subtasks if s not in in_group]
    members += [tuple(g) for g in groups]
    concerns = tuple(m[0] if len(m) == 1 else packed_text(m) for m in members)
    return Packed(concerns, tuple(members))
