"""Money first on coverage: a review capped below its estimate is planned without the main
agent.

The main agent's planning (scouting, then a subtask per file, each a turn of the main model)
is paid in full before any file is covered. Under a ``--max-cost-usd`` below the estimate's
high end (``orch_review/cost.py``) that can take most of the money: a 40-file review capped at
a third of its cost covered 4 files. Such a review is planned deterministically instead:
the sweep's groups (``engine/agents/sweep.py``) cover every file, verified as any concern is, and
the report's summary says so (``docs/caps.md``). A review that asks for what only the main
agent gives (``--walkthrough``, ``critic = true``) keeps it, as does ``capped-sweep = false``.
"""

from __future__ import annotations

from orch_review.config.settings import Config
from orch_review.cost import Estimate, estimate_cost
from orch_review.engine.api.admission import Amount
from orch_review.engine.api.budget import Budget
from orch_review.engine.memory.rereview import critic_wanted
from orch_review.scope.resolve import Scope
from orch_review.wording import counted, usd

# The estimate's roles, by the budget's names.
_ROLES = {"subagents": "subagent", "verifiers": "verifier"}


def plan_under_cap(
    config: Config, scope: Scope, budget: Budget, *, walkthrough: bool, guidance_chars: int = 0
) -> str | None:
    """How a review of ``scope`` is planned under its cost cap: the summary of a review
    planned without the main agent, when the cap is below the estimate's high end (None:
    the main agent plans it). A cap at least that high end is far from what the estimate
    expects: the budget admits the first agents at the estimate's figures, not the prior.
    ``guidance_chars``: the guidance every agent's prompt carries (for the estimate)."""
    cap = config.max_cost_usd
    if cap is None or not scope.files:
        return None
    critic = critic_wanted(config, scope)
    estimate = estimate_cost(scope, config, critic=critic, guidance_chars=guidance_chars)
    high = estimate.range.high_usd
    if cap >= high:
        if config.max_total_tokens is None:  # the estimate is in dollars only
            _calibrate(budget, estimate)
        return None
    if not config.capped_sweep or walkthrough or config.critic:
        return None
    return (
        f"Planned without the main agent: the cost cap ({usd(cap, exact=True)}) is below the "
        f"estimate's high end ({usd(high)}), so the {counted(len(scope.files), 'file')} went "
        "to the sweep's groups and the money to covering them."
    )


def _calibrate(budget: Budget, estimate: Estimate) -> None:
    for role in estimate.roles:
        name = _ROLES.get(role.role)
        if name is not None and role.agents[1]:
            budget.calibrate(name, Amount(role.usd[1] / role.agents[1], 0))
