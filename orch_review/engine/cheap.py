"""Money first on coverage: a review capped below its estimate is planned without the main
agent.

The main agent's planning (scouting, then a subtask per file, each a turn of the main model)
is paid in full before any file is covered. Under a ``--max-cost-usd`` below the estimate's
high end (``scope/estimate.py``) that can take most of the money: a 40-file review capped at
a third of its cost covered 4 files. Such a review is planned deterministically instead:
the sweep's groups (``engine/sweep.py``) cover every file, verified as any concern is, and
the report's summary says so (``docs/caps.md``). A review that asks for what only the main
agent gives (``--walkthrough``, ``critic = true``) keeps it, as does ``capped-sweep = false``.
"""

from __future__ import annotations

from orch_review.config.settings import Config
from orch_review.engine.delta import critic_wanted
from orch_review.scope.estimate import estimate_cost
from orch_review.scope.resolve import Scope
from orch_review.wording import counted, usd


def cheap_plan(config: Config, scope: Scope, *, walkthrough: bool) -> str | None:
    """The summary of a review of ``scope`` planned without the main agent, when its cost
    cap is below the estimate's high end; None when the main agent plans it."""
    cap = config.max_cost_usd
    if cap is None or not config.capped_sweep or walkthrough or config.critic or not scope.files:
        return None
    high = estimate_cost(scope, config, critic=critic_wanted(config, scope)).range.high_usd
    if cap >= high:
        return None
    return (
        f"Planned without the main agent: the cost cap ({usd(cap, exact=True)}) is below the "
        f"estimate's high end ({usd(high)}), so the {counted(len(scope.files), 'file')} went "
        "to the sweep's groups and the money to covering them."
    )
