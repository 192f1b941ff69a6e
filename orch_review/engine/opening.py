"""Opening a review session: the API client, budget ledger, journal, worker pool and the
sandbox for agents' shells, set up together and torn down together."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from orch_review import tempdirs
from orch_review.config.guidance import Guidance
from orch_review.config.settings import Config
from orch_review.engine.budget import Caps, Ledger
from orch_review.engine.client import ModelClient
from orch_review.engine.confinement import agent_environment
from orch_review.engine.journal import Journal, JournalLike, NullJournal, default_journal_path
from orch_review.engine.sandbox import resolve_sandbox
from orch_review.engine.scheduler import PriorityPool
from orch_review.engine.session import Session
from orch_review.events import EventSink
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
    (the caller's to close). On an error, Ctrl-C or a signal, queued agents are cancelled,
    running ones stop before their next request and are not waited for, and the journal
    is closed only once no agent can still store a result."""
    ledger = Ledger(
        Caps(config.max_agents, config.max_total_tokens, config.max_cost_usd),
        cost=lambda model, i, o, cw, cr: _cost(config, model, i, o, cw, cr),
    )
    cancel = threading.Event()
    pool = PriorityPool(config.max_concurrent)
    # Two threads launch agents' shells, and live until every agent is done with its shell.
    starter = ThreadPoolExecutor(2, thread_name_prefix="orch-review-shell")
    tempdirs.sweep_stale()  # what killed runs left behind
    journal = open_journal(config, git_dir)
    try:
        with tempdirs.directory("home") as home:
            sandbox = resolve_sandbox(
                config.sandbox,
                workspace.root,
                search_path=env.get("PATH", ""),
                bwrap_path=config.bwrap_path,
                view=workspace.view,
            )
            # Only bubblewrap can show the content without a full copy of it.
            workspace.use(mounted=sandbox.kind == "bubblewrap")
            if sandbox.notice is not None:
                if warnings is not None:
                    warnings.append(sandbox.notice)
                if notices is not None:
                    notices(sandbox.notice)
            try:
                yield Session(
                    config=config,
                    client=client,
                    ledger=ledger,
                    journal=journal,
                    workspace=workspace,
                    pool=pool,
                    bash_env=agent_environment(env, str(home)),
                    sandbox=sandbox,
                    guidance=guidance,
                    cancel=cancel,
                    events=events,
                    shell_starter=starter,
                )
            except BaseException:
                # First of all, before anything agents use goes away: no agent starts, and
                # running ones stop before their next request.
                cancel.set()
                pool.cancel_pending()
                raise
    finally:
        pool.shutdown(wait=not cancel.is_set())
        starter.shutdown(wait=not cancel.is_set())
        # An agent still running when the review was interrupted may yet receive a result
        # that is paid for: the journal stays open for it until the process ends (each
        # result is one committed transaction, so an unfinished one leaves nothing behind).
        if not pool.busy():
            journal.close()
