"""Opening a review session: the API client, budget ledger, journal, worker pool and the
sandbox for agents' shells, set up together and torn down together."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from orch_review.config.guidance import Guidance
from orch_review.config.settings import Config
from orch_review.engine.agent import EventSink
from orch_review.engine.budget import Caps, Ledger
from orch_review.engine.client import ModelClient
from orch_review.engine.journal import Journal, JournalLike, NullJournal, default_journal_path
from orch_review.engine.sandbox import agent_environment, resolve_sandbox
from orch_review.engine.scheduler import PriorityPool
from orch_review.engine.session import Session
from orch_review.scope.workspace import Workspace


def open_journal(config: Config, git_dir: Path) -> JournalLike:
    """The journal the config asks for (under the git directory by default)."""
    if not config.journal:
        return NullJournal()
    return Journal(config.journal_path or default_journal_path(git_dir))


def new_client(config: Config, env: Mapping[str, str]) -> ModelClient:
    """The session's one API client, as the config sets it up. It gets ready in the
    background, so build it before preparing the content to review, and close it after."""
    return ModelClient(
        env,
        max_retries=config.max_retries,
        request_timeout=config.request_timeout,
        max_output_tokens=config.max_output_tokens,
        effort=config.effort,
        provider=config.provider,
    )


def _cost(config: Config, model: str, i: int, o: int, cw: int, cr: int) -> tuple[float, bool]:
    price, known = config.price_for(model)
    return price.cost(i, o, cw, cr), known


@contextmanager
def open_session(
    config: Config,
    env: Mapping[str, str],
    *,
    client: ModelClient,
    git_dir: Path,
    workspace: Workspace,
    guidance: Guidance | None = None,
    events: EventSink | None = None,
    notices: Callable[[str], None] | None = None,
    warnings: list[str] | None = None,
) -> Iterator[Session]:
    """A session whose agents work in ``workspace`` and talk to the API through ``client``
    (the caller's to close); on an error or Ctrl-C, queued agents are cancelled and running
    ones are not waited for."""
    ledger = Ledger(
        Caps(config.max_agents, config.max_total_tokens, config.max_cost_usd),
        cost=lambda model, i, o, cw, cr: _cost(config, model, i, o, cw, cr),
    )
    cancel = threading.Event()
    pool = PriorityPool(config.max_concurrent)
    # Two threads launch agents' shells, and live until every agent is done with its shell.
    starter = ThreadPoolExecutor(2, thread_name_prefix="orch-review-shell")
    try:
        with (
            open_journal(config, git_dir) as journal,
            tempfile.TemporaryDirectory(prefix="orch-review-home-") as home,
        ):
            sandbox = resolve_sandbox(
                config.sandbox,
                workspace.root,
                search_path=env.get("PATH", ""),
                bwrap_path=config.bwrap_path,
            )
            if sandbox.notice is not None:
                if warnings is not None:
                    warnings.append(sandbox.notice)
                if notices is not None:
                    notices(sandbox.notice)
            yield Session(
                config=config,
                client=client,
                ledger=ledger,
                journal=journal,
                workspace=workspace,
                pool=pool,
                bash_env=agent_environment(env, home),
                sandbox=sandbox,
                guidance=guidance,
                cancel=cancel,
                events=events,
                shell_starter=starter,
            )
    except BaseException:
        cancel.set()
        pool.cancel_pending()
        raise
    finally:
        pool.shutdown(wait=not cancel.is_set())
        starter.shutdown(wait=not cancel.is_set())
