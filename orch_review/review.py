"""The review core: one call from a resolved scope to a :class:`Report`.

This is what the CLI calls; it can be called from Python the same way.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from collections.abc import Mapping

from orch_review.config import Config
from orch_review.engine.agent import EventSink
from orch_review.engine.budget import Caps, Ledger
from orch_review.engine.client import ModelClient
from orch_review.engine.journal import Journal, JournalLike, NullJournal, default_journal_path
from orch_review.engine.main_agent import run_main_agent
from orch_review.engine.scheduler import PriorityPool
from orch_review.engine.session import Session
from orch_review.engine.workflow import Workflow
from orch_review.errors import ExitCode, OrchReviewError
from orch_review.report import Report, build_report
from orch_review.scope import Scope, task_text
from orch_review.workspace import Workspace

log = logging.getLogger("orch_review.review")

# The only variables an agent's shell inherits: nothing secret, nothing from a git hook.
_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")


def open_journal(config: Config, scope: Scope) -> JournalLike:
    """The journal the config asks for (under the git directory by default)."""
    if not config.journal:
        return NullJournal()
    return Journal(config.journal_path or default_journal_path(scope.git_dir))


def agent_env(env: Mapping[str, str], home: str) -> dict[str, str]:
    """A minimal environment for agents' shells: no keys, tokens or hook variables."""
    passed = {k: env[k] for k in _PASSED_ENV if k in env}
    passed.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    passed.setdefault("LANG", "C.UTF-8")
    return {
        **passed,
        "HOME": home,
        "TERM": "dumb",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "GIT_CONFIG_NOSYSTEM": "1",
    }


def review(
    config: Config,
    scope: Scope,
    env: Mapping[str, str],
    *,
    events: EventSink | None = None,
) -> Report:
    """Review ``scope`` end to end and return the report (never raises for partial failure)."""
    started = time.monotonic()
    client = ModelClient(
        env,
        max_retries=config.max_retries,
        request_timeout=config.request_timeout,
        max_output_tokens=config.max_output_tokens,
        effort=config.effort,
    )
    ledger = Ledger(
        Caps(config.max_agents, config.max_total_tokens, config.max_cost_usd),
        cost=lambda model, i, o, cw, cr: _cost(config, model, i, o, cw, cr),
    )
    warnings: list[str] = []
    cancel = threading.Event()
    pool = PriorityPool(config.max_concurrent)
    with (
        open_journal(config, scope) as journal,
        tempfile.TemporaryDirectory(prefix="orch-review-home-") as home,
    ):
        session = Session(
            config=config,
            client=client,
            ledger=ledger,
            journal=journal,
            workspace=Workspace(scope.root, scope.paths, scope.content_id),
            pool=pool,
            bash_env=agent_env(env, home),
            cancel=cancel,
            events=events,
        )
        workflow = Workflow(session)
        summary = ""
        try:
            main = run_main_agent(session, workflow, task_text(scope))
            summary = main.summary
            if main.note:
                warnings.append(f"main agent: {main.note}")
        except OrchReviewError as exc:
            if exc.exit_code != ExitCode.INCOMPLETE:
                raise
            warnings.append(str(exc))
        except BaseException:
            cancel.set()
            pool.cancel_pending()
            raise
        finally:
            pool.shutdown(wait=not cancel.is_set())
            client.close()
    if not workflow.outcomes:
        warnings.append("No review workflow ran, so nothing was verified.")
    usage = ledger.report()
    if usage.unknown_price_models:
        warnings.append(
            "Cost is estimated with the highest known price for "
            + ", ".join(usage.unknown_price_models)
            + "; add their prices under [tool.orch-review.prices]."
        )
    return build_report(
        scope=scope.describe(),
        summary=summary,
        concerns=workflow.outcomes,
        usage=usage,
        wall_seconds=time.monotonic() - started,
        model=config.model,
        agent_model=config.agent_model,
        warnings=warnings,
    )


def _cost(config: Config, model: str, i: int, o: int, cw: int, cr: int) -> tuple[float, bool]:
    price, known = config.price_for(model)
    return price.cost(i, o, cw, cr), known
