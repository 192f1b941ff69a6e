"""Multiphase Workflow plans: named phases run in order, each seeing earlier results.

This is the declarative, safe form of "let the model write an orchestration program": the
model describes phases and their dependencies; orch-review validates the plan (size, names,
no cycles) and runs it. No code from the model runs outside the sandboxed bash tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orch_review.engine.agents.tools import ToolInputError

MAX_PHASES = 10


@dataclass(frozen=True, slots=True)
class Phase:
    """One named phase of a plan."""

    name: str
    subtasks: tuple[str, ...]
    depends_on: tuple[str, ...] = ()


def _strings(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ToolInputError(f"{what} must be an array of strings")
    return tuple(v.strip() for v in value if v.strip())


def parse_phases(tool_input: Mapping[str, Any], max_subtasks: int) -> list[Phase]:
    """Validate a ``phases`` plan and return it in an order that respects dependencies."""
    raw = tool_input.get("phases")
    if not isinstance(raw, list) or not raw:
        raise ToolInputError("`phases` must be a non-empty array of {name, subtasks} objects")
    if len(raw) > MAX_PHASES:
        raise ToolInputError(f"a plan may have at most {MAX_PHASES} phases, got {len(raw)}")
    phases: list[Phase] = []
    for number, item in enumerate(raw, 1):
        if not isinstance(item, Mapping):
            raise ToolInputError(f"phase {number} must be an object with `name` and `subtasks`")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ToolInputError(f"phase {number} needs a non-empty `name`")
        subtasks = _strings(item.get("subtasks"), f"phase `{name}`: `subtasks`")
        if not subtasks:
            raise ToolInputError(f"phase `{name}` has no subtasks")
        depends = _strings(item.get("depends_on", []), f"phase `{name}`: `depends_on`")
        phases.append(Phase(name.strip(), subtasks, depends))
    names = [p.name for p in phases]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ToolInputError("phase names must be unique; repeated: " + ", ".join(duplicates))
    for phase in phases:
        unknown = [d for d in phase.depends_on if d not in names]
        if unknown:
            raise ToolInputError(f"phase `{phase.name}` depends on unknown " + ", ".join(unknown))
    total = sum(len(p.subtasks) for p in phases)
    if total > max_subtasks:
        raise ToolInputError(
            f"the plan has {total} subtasks, more than the limit of {max_subtasks} per call: "
            "split it across several Workflow calls"
        )
    return _ordered(phases)


def _ordered(phases: list[Phase]) -> list[Phase]:
    """Dependencies first, otherwise in the order given; a cycle is an error."""
    done: list[Phase] = []
    pending = list(phases)
    while pending:
        ready = [p for p in pending if all(d in {q.name for q in done} for d in p.depends_on)]
        if not ready:
            cycle = ", ".join(p.name for p in pending)
            raise ToolInputError(f"the phases depend on each other in a cycle: {cycle}")
        done.append(ready[0])
        pending.remove(ready[0])
    return done


def with_context(subtask: str, earlier: Mapping[str, str]) -> str:
    """A subtask carrying the results of the phases it builds on, as delimited data."""
    if not earlier:
        return subtask
    blocks = "\n".join(
        f'<phase_results name="{name}">\n{text}\n</phase_results>' for name, text in earlier.items()
    )
    return f"{subtask}\n\nResults of earlier phases of this review, for context:\n{blocks}"
