"""The Workflow tool as the main agent sees it: its input parsed, its result in words.

A call gives ``subtasks`` (one list of concerns) or ``phases`` (lists run in order, each
seeing what the phases it depends on found). Subtasks beyond ``max_subtasks`` are dropped
and out-of-scope ones refused, both said in the result.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from orch_review.engine.agents.packing import Packed
from orch_review.engine.agents.tools import ToolInputError
from orch_review.engine.agents.workflow_phases import Phase, parse_phases, with_context
from orch_review.findings.records import ConcernOutcome


def parse_subtasks(tool_input: Mapping[str, Any]) -> list[str]:
    """Accept what models emit: an array, an array JSON-encoded in a string, or lines."""
    raw = tool_input.get("subtasks")
    if isinstance(raw, str):
        text = raw.strip()
        decoded: Any = None
        if text.startswith("["):
            try:
                decoded = json.loads(text)
            except json.JSONDecodeError:
                decoded = None
        raw = decoded if isinstance(decoded, list) else text.splitlines()
    if not isinstance(raw, list):
        raise ToolInputError("`subtasks` must be an array of strings, one per concern")
    subtasks = []
    for item in raw:
        if not isinstance(item, str):
            raise ToolInputError("every subtask must be a string")
        if item.strip():
            subtasks.append(item.strip())
    if not subtasks:
        raise ToolInputError("`subtasks` is empty: give at least one concern")
    return subtasks


class WorkflowTool:
    """Handles Workflow tool calls: ``run`` reviews accepted concerns, ``refusal`` says why
    a subtask may not run (recorded in ``refused``), ``announce`` is told a whole plan's
    accepted concerns before any of them runs, ``pack`` gives the concerns to run for the
    accepted subtasks (``engine.packing``)."""

    def __init__(
        self,
        max_subtasks: int,
        run: Callable[[list[str]], list[ConcernOutcome]],
        refusal: Callable[[str], str | None],
        announce: Callable[[Sequence[str]], None],
        pack: Callable[[list[str]], Packed],
    ) -> None:
        self._cap = max_subtasks
        self._run = run
        self._refusal = refusal
        self._announce = announce
        self._pack = pack
        self.refused: list[tuple[str, str]] = []  # (subtask, why), as told to the model

    def handle(self, tool_input: Mapping[str, Any]) -> tuple[str, bool]:
        """The tool result and whether it is an error: ``subtasks``, or a ``phases`` plan."""
        try:
            if tool_input.get("phases"):
                phases = parse_phases(tool_input, self._cap)
                self._announce([s for p in phases for s in p.subtasks])
                return self._run_phases(phases), False
            subtasks = parse_subtasks(tool_input)
        except ToolInputError as exc:
            return f"Workflow was not run: {exc}.", True
        return self._run_subtasks(subtasks)

    def _run_phases(self, phases: list[Phase]) -> str:
        """Run phases in order; each sees the results of the phases it depends on (all
        earlier phases when it names none)."""
        results: dict[str, str] = {}
        for phase in phases:
            wanted = phase.depends_on or tuple(results)
            earlier = {name: results[name] for name in wanted}
            text, _ = self._run_subtasks([with_context(s, earlier) for s in phase.subtasks])
            results[phase.name] = text
        return "\n\n".join(f"## Phase {name}\n{text}" for name, text in results.items())

    def _run_subtasks(self, subtasks: list[str]) -> tuple[str, bool]:
        """Run one list of subtasks (capped, out-of-scope ones refused); the tool result."""
        cap = self._cap
        dropped = subtasks[cap:]
        accepted, refused = [], []
        for subtask in subtasks[:cap]:
            reason = self._refusal(subtask)
            if reason is None:
                accepted.append(subtask)
            else:
                self.refused.append((subtask, reason))
                refused.append(f"- {short(subtask)}\n    refused: {reason}")
        if not accepted:
            return "Workflow was not run: every subtask is out of scope:\n" + "\n".join(
                refused
            ), True
        packed = self._pack(accepted)
        text = describe(self._run(list(packed.concerns)), local=True)
        if packed.packed:
            agents = sum(1 for m in packed.members if len(m) > 1)
            text += (
                f"\n\nNote: {packed.packed} small subtasks ran in {agents} packed agents, as "
                'many as run at once (each "Packed review of N small subtasks" above holds N '
                "of them, in the order given); every one of them was reviewed."
            )
        if refused:
            text += "\n\nThese subtasks were refused (not reviewed):\n" + "\n".join(refused)
        if dropped:
            text += (
                f"\n\nNote: only the first {cap} subtasks were run; {len(dropped)} were dropped. "
                "Call Workflow again with the remaining ones, grouped into fewer, broader "
                "concerns. Changed files that no concern covers are reviewed by orch-review's "
                "own sweep at the end."
            )
        return text, False


def describe(outcomes: list[ConcernOutcome], *, local: bool = False) -> str:
    """The tool result the main agent reads: per concern, what survived verification.
    ``local``: number the concerns of this list 1..n rather than by their place in the
    review, which depends on when the critic's concerns were queued."""
    lines = []
    for number, outcome in enumerate(outcomes, 1):
        head = f"[{number if local else outcome.index + 1}] {short(outcome.concern)}"
        if outcome.status != "reviewed":
            lines.append(f"{head}\n    NOT COVERED ({outcome.status}): {outcome.error}")
            continue
        confirmed = [f for f in outcome.findings if f.verdict and f.verdict.confirmed]
        refuted = [f for f in outcome.findings if f.verdict and not f.verdict.confirmed]
        unverified = [f for f in outcome.findings if f.verdict is None]
        lines.append(
            f"{head}\n    {len(confirmed)} confirmed, {len(refuted)} refuted"
            + (f", {len(unverified)} unverified ({outcome.error})" if unverified else "")
        )
        lines.extend(
            f"    - {f.severity.value} {f.location}: {short(f.claim, 160)}" for f in confirmed
        )
    return "\n".join(lines) or "No subtasks were run."


def short(text: str, limit: int = 100) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
