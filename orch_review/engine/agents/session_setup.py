"""Opening a review session: the API client, budget, journal, worker pool and the
sandbox for agents' shells, set up together and torn down together."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from orch_review import tempdirs
from orch_review.config.guidance import Guidance
from orch_review.config.settings import Config
from orch_review.engine.agents.review_session import Session
from orch_review.engine.api.budget import Budget, Caps
from orch_review.engine.api.client import ModelClient
from orch_review.engine.api.hedging import Hedging
from orch_review.engine.api.scheduler import PriorityPool
from orch_review.engine.memory.journal import (
    Journal,
    JournalLike,
    JournalUnwritable,
    NullJournal,
    cache_journal_path,
    default_journal_path,
)
from orch_review.engine.shell.confinement import agent_environment, is_throwaway_uid
from orch_review.engine.shell.sandbox import Sandbox, resolve_sandbox
from orch_review.errors import NO_JOURNAL_NOTE
from orch_review.events import EventSink
from orch_review.scope.workspace import Workspace
from orch_review.trust import JOURNAL, signer_for


def open_journal(
    config: Config,
    git_dir: Path,
    env: Mapping[str, str],
    notices: Callable[[str], None] | None = None,
    *,
    quiet: bool = False,
    checkout: Path | None = None,
) -> JournalLike:
    """The journal the config asks for, its entries signed with the key of ``env``'s
    credential. By default it is under the git directory; when that cannot be written (a
    read-only checkout, a symbolic link in the way) it is in the user's cache directory
    instead, and ``notices`` says so. ``quiet``, ``checkout``: see :class:`Journal`."""
    if not config.journal:
        return NullJournal()
    signer = signer_for(env, config.provider, JOURNAL)
    if signer is None and notices is not None:
        notices(
            "The journal is not used: no API key to sign its entries with, and no private "
            "per-user secret could be made in the configuration directory (see "
            "docs/journal.md)."
        )
    opened = partial(Journal, signer=signer, quiet=quiet, checkout=checkout, set_aside_damaged=True)
    if config.journal_path is not None:
        return opened(config.journal_path)
    try:
        return opened(default_journal_path(git_dir))
    except JournalUnwritable:
        fallback = cache_journal_path(git_dir, env)
        if fallback is None:
            raise
    journal = opened(fallback)
    if notices is not None:
        notices(f"{git_dir} cannot be written: the journal is kept in {fallback} instead.")
    return journal


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


def _let_in_flight_land(
    pool: PriorityPool,
    client: ModelClient,
    grace: float,
    notices: Callable[[str], None] | None,
    clock: Callable[[], float] = time.monotonic,
    *,
    journaled: bool = True,
) -> None:
    """Wait up to ``grace`` seconds for running agents to finish: with no request sent any
    more, each ends once its reply in flight has landed and its result is journaled."""
    if not pool.busy():
        return
    replies = client.in_flight
    if notices is not None and replies:
        noun, verb = ("reply", "is") if replies == 1 else ("replies", "are")
        if journaled:
            fate = (
                f"{verb} kept in the journal if {'it arrives' if replies == 1 else 'they arrive'}"
            )
        else:
            fate = f"{verb} waited for, but not kept: the journal is off"
        notices(
            f"orch-review: stopping; no new request is sent, and the {replies} {noun} on "
            f"the way {fate} within {grace:g} s (press Ctrl-C again to stop at once)."
        )
    deadline = clock() + grace
    while pool.busy() and clock() < deadline:
        time.sleep(0.02)


def hedging_for(config: Config) -> Hedging | None:
    """The session's hedged requests, unless ``hedge = false``."""
    return Hedging() if config.hedge else None


def _cost(config: Config, model: str, i: int, o: int, cw: int, cr: int) -> tuple[float, bool]:
    price, known = config.price_for(model)
    return price.cost(i, o, cw, cr), known


def _forward(outside: threading.Event, inside: threading.Event, ended: threading.Event) -> None:
    """Set ``inside`` once ``outside`` is set, until ``ended``: a caller's cancel event (an
    MCP client's cancellation) interrupts the session as a signal does."""

    def watch() -> None:
        while not ended.is_set():
            if outside.wait(0.2):
                inside.set()
                return

    threading.Thread(target=watch, name="orch-review-cancel", daemon=True).start()


def _budget(config: Config) -> Budget:
    """The budget of a session, holding the configuration's caps and prices."""
    return Budget(
        Caps(config.max_agents, config.max_total_tokens, config.max_cost_usd),
        cost=lambda model, i, o, cw, cr: _cost(config, model, i, o, cw, cr),
    )


def _sandbox(
    config: Config,
    env: Mapping[str, str],
    workspace: Workspace,
    warnings: list[str] | None,
    notices: Callable[[str], None] | None,
) -> Sandbox:
    """The sandbox the agents' shells run in, with ``workspace`` shown the way it allows;
    why it is weaker than asked, if it is, said as a warning and a notice."""
    sandbox = resolve_sandbox(
        config.sandbox,
        workspace.root,
        search_path=env.get("PATH", ""),
        bwrap_path=config.bwrap_path,
        view=workspace.view,
    )
    # Only bubblewrap can show the content without a full copy of it; the read-only tools
    # read it from git and need no copy at all.
    if sandbox.has_shell:
        workspace.use(mounted=sandbox.kind == "bubblewrap")
    else:
        workspace.settle()
    if notices is not None:  # among the first lines of the log: what confines the agents
        notices(f"orch-review: sandbox: {sandbox.description}.")
    if sandbox.notice is not None:
        if warnings is not None:
            warnings.append(sandbox.notice)
        if notices is not None:
            notices(sandbox.notice)
    return sandbox


def _stop_agents(
    config: Config,
    pool: PriorityPool,
    client: ModelClient,
    notices: Callable[[str], None] | None,
    *,
    journaled: bool = True,
) -> None:
    """On an error or interruption, first of all, before anything agents use goes away: no
    agent starts, no request is sent, and running agents stop before their next request...
    but replies already on their way are paid for: let them land and be journaled, for a
    while (a second Ctrl-C or signal ends the wait at once)."""
    client.cancel.set()
    pool.cancel_pending()
    _let_in_flight_land(pool, client, config.interrupt_grace, notices, journaled=journaled)


@contextmanager
def open_session(
    config: Config,
    env: Mapping[str, str],
    *,
    client: ModelClient,
    git_dir: Path,
    workspace: Workspace,
    checkout: Path | None = None,
    guidance: Guidance | None = None,
    events: EventSink | None = None,
    notices: Callable[[str], None] | None = None,
    warnings: list[str] | None = None,
    cancel: threading.Event | None = None,
    journal: JournalLike | None = None,
) -> Iterator[Session]:
    """A session whose agents work in ``workspace`` and talk to the API through ``client``
    (the caller's to close). On an error, Ctrl-C or a signal, queued agents are cancelled,
    no request is sent any more, running agents stop before their next request, the replies
    in flight are waited for up to ``config.interrupt_grace`` seconds (so that their results
    are journaled), and the journal is closed only once no agent can still store a result.
    ``cancel``, when given, interrupts the session the same way when a caller in another
    thread sets it. ``journal``, when given, is the caller's: used, and left open when the
    session ends well (the caller keeps the report in it, then closes it)."""
    budget = _budget(config)
    cancel_event = client.cancel  # set, it also stops the client sending requests (retries too)
    ended = threading.Event()
    if cancel is not None:
        _forward(cancel, cancel_event, ended)
    cancel = cancel_event
    pool = PriorityPool(config.max_concurrent)
    # Two threads launch agents' shells, and live until every agent is done with its shell.
    starter = ThreadPoolExecutor(2, thread_name_prefix="orch-review-shell")
    # What killed runs left behind, the homes root handed to throwaway uids included.
    tempdirs.sweep_stale(also_ours=is_throwaway_uid)
    owned = journal is None
    if journal is None:
        journal = open_journal(config, git_dir, env, notices, checkout=checkout)
    ended_well = False
    sandbox: Sandbox | None = None
    try:
        with tempdirs.directory("home") as home:
            sandbox = _sandbox(config, env, workspace, warnings, notices)
            try:
                yield Session(
                    config=config,
                    client=client,
                    budget=budget,
                    journal=journal,
                    workspace=workspace,
                    pool=pool,
                    bash_env=agent_environment(env, str(home)),
                    sandbox=sandbox,
                    guidance=guidance,
                    cancel=cancel,
                    events=events,
                    shell_starter=starter,
                    hedging=hedging_for(config),
                )
            except BaseException as exc:
                journaled = not isinstance(journal, NullJournal)
                _stop_agents(config, pool, client, notices, journaled=journaled)
                if not journaled:  # what is said on the way out must not promise a resume
                    exc.add_note(NO_JOURNAL_NOTE)
                raise
            ended_well = True
    finally:
        ended.set()
        pool.shutdown(wait=not cancel.is_set())
        starter.shutdown(wait=not cancel.is_set())
        if sandbox is not None:  # no shell of this review outlives it
            sandbox.close()
        if warnings is not None:
            warnings.extend(journal.trust_notes())
        # An agent still running when the review was interrupted may yet receive a result
        # that is paid for: the journal stays open for it until the process ends (each
        # result is one committed transaction, so an unfinished one leaves nothing behind).
        if (owned or not ended_well) and not pool.busy():
            journal.close()
