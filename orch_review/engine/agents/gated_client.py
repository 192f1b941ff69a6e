"""One agent's requests: each waits at the pool's gate for a slot, then for the budget.

The gate (``scheduler``) ranks requests by the chain of work still behind them. Once a slot
is held, the request reserves what it may cost (:meth:`Budget.reserve`: its input, as
estimated from the prompt's length, and its ``max_tokens`` at the model's price); the agent
loop's record of the response's usage replaces the reservation (same thread), and a request
that gets no response releases it.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.subagent import AgentFailed
from orch_review.engine.api.budget import Budget
from orch_review.engine.api.client import Completer, ModelClient, Reply
from orch_review.engine.api.hedging import HEDGE_RANK, Hedging
from orch_review.engine.api.scheduler import PriorityPool, request_rank

# Characters per input token in the estimate of a prompt: fewer than the usual four, so that
# code and JSON (shorter tokens) are not underestimated.
RESERVED_CHARS_PER_TOKEN = 3


@dataclasses.dataclass(frozen=True, slots=True)
class RequestBudget:
    """Where a request reserves what it may cost, and its output limit."""

    budget: Budget
    max_tokens: int


def estimated_input_tokens(
    system: str, tools: Sequence[Mapping[str, Any]], messages: Sequence[Mapping[str, Any]]
) -> int:
    """An estimate, from its length, of how many input tokens a request has."""
    chars = len(system) + len(json.dumps(list(tools), default=str))
    chars += sum(_text_length(m.get("content")) for m in messages)
    return chars // RESERVED_CHARS_PER_TOKEN + 1


def _text_length(value: object) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        return sum(_text_length(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_text_length(v) for v in value)
    return 0


class GatedClient:
    """One agent's view of the client: each request waits at the pool's gate for a slot,
    ranked by the agent's role, the turns it has done and its place in the review, and then
    (with a ``budget``) until what it may cost can be reserved under the caps. With
    ``hedging`` (and a budget), a request that is late is sent once more
    (:mod:`orch_review.engine.api.hedging`)."""

    def __init__(
        self,
        client: Completer,
        pool: PriorityPool,
        cancel: threading.Event,
        role: str,
        order: int,
        budget: RequestBudget | None = None,
        hedging: Hedging | None = None,
    ) -> None:
        self._client = client
        self._hedging = hedging if isinstance(client, ModelClient) else None
        self._pool = pool
        self._cancel = cancel
        self._role = role
        self._order = order
        self._budget = budget
        self._turns = itertools.count()

    def complete(
        self,
        *,
        model: str,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        tool_choice: Mapping[str, Any] | None = None,
    ) -> Reply:
        rank = request_rank(self._role, next(self._turns), self._order)
        with self._pool.request_slot(rank):
            if self._cancel.is_set():  # the gate opens for everyone on cancellation
                raise AgentFailed("interrupted")
            request_budget = self._budget
            if request_budget is not None:
                tokens = estimated_input_tokens(system, tools, messages)
                refused = request_budget.budget.reserve(
                    (self._role, self._order),
                    model,
                    tokens,
                    request_budget.max_tokens,
                    self._cancel,
                )
                if refused is not None:
                    raise AgentFailed(refused)
            try:
                kwargs: dict[str, Any] = {
                    "model": model,
                    "system": system,
                    "tools": tools,
                    "messages": messages,
                    "tool_choice": tool_choice,
                }
                client = self._client
                if (
                    self._hedging is None
                    or request_budget is None
                    or not isinstance(client, ModelClient)
                ):
                    return client.complete(**kwargs)
                agent = (self._role, self._order)
                return self._hedging.complete(
                    self._role,
                    lambda abort: client.complete(**kwargs, abort=abort),
                    partial(self._hedge_gate, request_budget, model, tokens),
                    partial(request_budget.budget.charge_unused, agent, self._role, model),
                    tokens,
                    self._pool.free_slot,
                )
            except BaseException:
                if request_budget is not None:
                    request_budget.budget.release()
                raise

    @contextmanager
    def _hedge_gate(self, budget: RequestBudget, model: str, tokens: int) -> Iterator[bool]:
        """A request slot for a hedge, first in line, and its reservation while far from
        every cap; yields whether it may be sent."""
        with self._pool.request_slot(HEDGE_RANK):
            held = not self._cancel.is_set() and budget.budget.reserve_hedge(
                (self._role, self._order), model, tokens, budget.max_tokens
            )
            try:
                yield held
            finally:
                if held:
                    budget.budget.release()


def gated_session(session: Session, role: str, order: int) -> Session:
    """``session`` for one agent of ``role``, whose requests go through the gate and
    reserve what they may cost."""
    budget = RequestBudget(session.budget, session.config.max_output_tokens)
    client = GatedClient(
        session.client, session.pool, session.cancel, role, order, budget, session.hedging
    )
    return dataclasses.replace(session, client=client, sandbox=session.shell_sandbox)
