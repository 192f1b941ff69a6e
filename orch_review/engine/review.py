"""The review core: one call from a resolved scope to a :class:`Report`.

This is what the CLI calls; it can be called from Python the same way.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from orch_review import waiting
from orch_review.config import learnings as learned
from orch_review.config.agent_rules import FILE_MAX_BYTES, read_rules
from orch_review.config.choices import FilterMode
from orch_review.config.guidance import Guidance, load_guidance
from orch_review.config.learnings import Learning
from orch_review.config.settings import Config
from orch_review.engine.agents.critic import Critic
from orch_review.engine.agents.intent_review import start_intent_concern, write_walkthrough
from orch_review.engine.agents.main_agent import MainResult, run_main_agent
from orch_review.engine.agents.prescout import summary as prescout_summary
from orch_review.engine.agents.refusals import refusal_warning
from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.session_setup import new_client, open_session
from orch_review.engine.agents.workflow import Workflow
from orch_review.engine.api.budget import Budget, Caps
from orch_review.engine.api.client import ModelClient
from orch_review.engine.api.scheduler import MAIN
from orch_review.engine.capped_plan import plan_under_cap
from orch_review.engine.final_coverage import (
    agents_left,
    cover_rest,
    coverage_of,
    ledger_files,
    verified_by_path,
)
from orch_review.engine.memory.conversation import save_conversation
from orch_review.engine.memory.rereview import (
    NOTHING_CHANGED,
    critic_wanted,
    delta_scope,
    guidance_text,
    main_task,
    reuse_base,
    sweep_only,
    swept_summary,
)
from orch_review.engine.memory.reuse import EarlierReviews
from orch_review.engine.proofs.patch_check import PatchChecker, unconfined_reason
from orch_review.engine.proofs.proving import Provers, wanted
from orch_review.engine.running_totals import LiveTotals
from orch_review.engine.shell.confinement import agent_environment
from orch_review.engine.shell.sandbox import Sandbox, overlay_works
from orch_review.errors import ExitCode, OrchReviewError
from orch_review.events import AgentEvent, EventSink
from orch_review.findings.coverage import Coverage, LedgerFile, SkippedPath, build_coverage
from orch_review.findings.records import ConcernOutcome, Finding, Status
from orch_review.findings.report import GuidanceFile, Report, build_report
from orch_review.findings.snippets import collect_snippets
from orch_review.findings.triage import triage
from orch_review.findings.walkthrough import Walkthrough
from orch_review.programs import require
from orch_review.quoting import quote_path
from orch_review.scope import git as gitops
from orch_review.scope.git import open_repo
from orch_review.scope.resolve import Scope
from orch_review.scope.reviewable import UNREADABLE
from orch_review.scope.snapshot import Snapshot, snapshot
from orch_review.scope.stated_intent import Intent
from orch_review.scope.workspace import Workspace
from orch_review.wording import counted

if TYPE_CHECKING:
    import git

    from orch_review.engine.memory.journal import JournalLike

_log = logging.getLogger("orch_review.engine.review")


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """How findings are triaged into the report."""

    filter_mode: FilterMode | None = None  # None: "added" for a change, "nofilter" for --all
    baseline: frozenset[str] = frozenset()
    learnings: tuple[Learning, ...] = ()  # guidance for the agents; fingerprints suppressed
    intent: Intent | None = None  # what the change says it does: checked by the intent concern
    walkthrough: bool = False  # ask the model for a walkthrough of the change at the end

    def mode_for(self, scope: Scope) -> FilterMode:
        """The filter mode in effect for ``scope``."""
        if self.filter_mode is not None:
            return self.filter_mode
        return "nofilter" if scope.kind == "all" else "added"


def load_review_guidance(
    config: Config, repo: git.Repo, scope: Scope, commit: str, learnings: tuple[Learning, ...]
) -> Guidance:
    """Guidance files from the content under review (the snapshot's ``commit``), or with
    --base from the base revision (a change cannot rewrite the rules it is reviewed by).
    Read through git, so the snapshot's files need not be written yet."""
    revision = scope.config_revision or commit

    def read(name: str) -> str | None:
        data = gitops.show_file(repo, revision, name)
        return None if data is None else data.decode("utf-8", "replace")

    names = gitops.files_called(repo, revision, config.guidance_files)
    cap = min(FILE_MAX_BYTES, config.guidance_max_bytes)
    rules = read_rules(repo, revision, cap) if config.agent_rules else None
    return load_guidance(config, names, read, learnings, rules)


_PREPARE = "copying the content under review into a read-only snapshot"
_REMOVE = "removing the snapshot"
_CHECK = "checking suggested fixes with suggestion-check"


def _stage(events: EventSink | None, state: str, step: str, label: str) -> None:
    """A step of the review itself, shown by the progress display like an agent's."""
    if events is not None:
        events(AgentEvent(step, "setup", label, state))


@contextmanager
def _snapshot_in_progress(
    config: Config,
    repo: git.Repo,
    scope: Scope,
    env: Mapping[str, str],
    events: EventSink | None,
) -> Iterator[Snapshot]:
    """The snapshot, with its making and removal shown: a full copy takes seconds."""
    _stage(events, "started", "snapshot", _PREPARE)
    overlay = partial(
        overlay_works,
        config.sandbox,
        gitops.work_tree(repo),
        search_path=env.get("PATH", ""),
        bwrap_path=config.bwrap_path,
    )
    with snapshot(repo, scope, env, overlay=overlay) as content:
        content.on_written(
            lambda failure: _stage(events, "failed" if failure else "done", "snapshot", _PREPARE)
        )
        try:
            yield content
        finally:
            _stage(events, "started", "cleanup", _REMOVE)
    _stage(events, "done", "cleanup", _REMOVE)


def _line_reader(content: Snapshot) -> Callable[[str], list[str] | None]:
    cache: dict[str, list[str] | None] = {}

    def read(path: str) -> list[str] | None:
        if path not in cache:
            data = content.read(path)
            cache[path] = None if data is None else data.decode("utf-8", "replace").splitlines()
        return cache[path]

    return read


@dataclass(slots=True)
class _Review:
    """What the stages of one review hand on to the next: the request, and what is known so
    far about its outcome."""

    config: Config
    scope: Scope
    options: ReportOptions
    mode: FilterMode
    started: float
    warnings: list[str] = field(default_factory=list)
    summary: str = ""
    notes: tuple[str, ...] = ()
    guidance_truncated: bool = False
    live: LiveTotals | None = None  # the running cost and coverage shown while it runs
    walkthrough: Walkthrough | None = None
    guidance_files: tuple[GuidanceFile, ...] = ()


@dataclass(frozen=True, slots=True)
class _AgentsDone:
    """What the agents left behind once the session is closed."""

    workflow: Workflow
    earlier: EarlierReviews
    coverage: Coverage
    budget: Budget
    sandbox: Sandbox


def review_scope(
    config: Config,
    scope: Scope,
    env: Mapping[str, str],
    *,
    events: EventSink | None = None,
    options: ReportOptions | None = None,
    notices: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    journal: JournalLike | None = None,
) -> Report:
    """Review ``scope`` end to end and return the report (never raises for partial failure).
    Setting ``cancel`` interrupts it as Ctrl-C does (KeyboardInterrupt). ``journal``: the
    caller's open journal, used instead of opening one (see ``open_session``).

    ``notices`` receives warnings the user should see at once (a weaker sandbox than asked).

    The stages, in order: the snapshot and the guidance; the session, in which earlier
    reviews are looked up, the main agent scouts what they do not cover and fans out, the
    sweep and the critic cover the rest, and the coverage is recorded; then the findings are
    triaged and their suggested fixes checked, and the report is built.
    """
    options = options or ReportOptions()
    state = _Review(config, scope, options, options.mode_for(scope), time.monotonic())
    if not scope.files:  # a shard with no file: complete, nothing to ask a model
        return _empty_report(config, scope, state.mode)
    # Before the snapshot and the first request: agents cannot work without a shell, unless
    # they are to have none.
    if config.sandbox != "tools":
        require("bash", agent_environment(env, "")["PATH"])
    repo = open_repo(scope.root, env)
    if events is not None:
        state.live = LiveTotals(events, len(scope.files))
        events = state.live
    if options.intent is not None:
        state.warnings.extend(options.intent.notes)
    with (
        closing(new_client(config, env)) as client,
        _snapshot_in_progress(config, repo, scope, env, events) as content,
    ):
        guidance = load_review_guidance(
            config, content.repo, scope, content.commit, options.learnings
        )
        workspace = _workspace(scope, content)
        with open_session(
            config,
            env,
            client=client,
            git_dir=scope.git_dir,
            workspace=workspace,
            checkout=scope.root,
            guidance=guidance,
            events=events,
            notices=notices,
            warnings=state.warnings,
            cancel=cancel,
            journal=journal,
        ) as session:
            read = _line_reader(content)
            provers = _provers(state, session, content, env, notices)
            offer = None if provers is None else _offer_to(state, provers, read)
            agents = _run_agents(state, session, client, content, workspace, guidance, offer)
            findings = _triage(state, agents, read)
            findings = _check_fixes(
                state, findings, agents.sandbox, workspace, content, env, events
            )
            findings = _prove(state, provers, findings, events)
        snippets = collect_snippets(findings, read)  # the snapshot is gone after this block
    state.warnings += guidance.notes
    _closing_warnings(state, agents)
    state.guidance_files = tuple(
        GuidanceFile(f.path, f.truncated, f.applies_to) for f in guidance.sources
    )
    report = _build_report(state, agents, findings)
    return dataclasses.replace(report, snippets=snippets, walkthrough=state.walkthrough)


def _workspace(scope: Scope, content: Snapshot) -> Workspace:
    """Where the agents read the content under review."""
    skipped = {s.path: s.reason for s in scope.skipped}
    return Workspace(
        content.root,
        scope.paths,
        content.content_id,
        skipped,
        ready=content.wait,
        content=content,
        base=scope.base_commit,
    )


def _run_agents(
    state: _Review,
    session: Session,
    client: ModelClient,
    content: Snapshot,
    workspace: Workspace,
    guidance: Guidance,
    on_outcome: Callable[[ConcernOutcome], None] | None = None,
) -> _AgentsDone:
    """The paid part: what earlier reviews do not cover is scouted by the main agent and
    fanned out, the sweep and the critic cover the rest, and a complete review is recorded
    for the next one."""
    config, scope = state.config, state.scope
    main_guidance, state.guidance_truncated = guidance.for_main()
    earlier = EarlierReviews(session, reuse_base(scope), guidance_text(guidance))
    if state.live is not None:
        state.live.budget = session.budget
        state.live.reused = lambda: earlier.paths
    if scope.kind != "all" and config.journal:
        earlier.load(scope.paths)  # reads the files under review through git
    delta = delta_scope(scope, earlier)
    workflow, critic = _fan_out(session, scope, delta, earlier, main_guidance, on_outcome)
    if state.live is not None:
        state.live.workflow = workflow
    # A full copy of the content is written before anything is paid for: a failure to
    # write it (a full TMPDIR) ends the review here.
    content.wait()
    intent_check = start_intent_concern(workflow, scope, state.options.intent)
    reused = len(earlier.paths)
    cheap = plan_under_cap(
        config,
        delta,
        session.budget,
        walkthrough=state.options.walkthrough,
        guidance_chars=len(main_guidance),
    )
    if sweep_only(config, delta, reused, walkthrough=state.options.walkthrough):
        state.summary = swept_summary(delta, reused)
    elif cheap is not None:
        state.summary = cheap
    elif delta.files:
        _run_main(
            state,
            session,
            workflow,
            main_task(delta, main_guidance, earlier, shell=session.has_shell),
            content,
        )
    else:  # nothing changed since a complete review: nothing to scout, nothing to ask
        state.summary = earlier.summary() or NOTHING_CHANGED
        state.notes = (earlier.reused_note(len(scope.files)),)
    workflow.collect(intent_check)
    files = ledger_files(scope, workspace)
    client.check_usable()  # no sweep, no critic: not one of their requests can succeed
    state.notes += _sweep_and_criticise(state, session, workflow, critic, files, earlier.paths)
    client.check_usable()
    coverage = coverage_of(scope, files, workflow, earlier.paths)
    if coverage.complete and session.budget.report().cap_reached is None:
        earlier.store(coverage, verified_by_path(workflow), state.summary)
    return _AgentsDone(workflow, earlier, coverage, session.budget, session.shell_sandbox)


def _fan_out(
    session: Session,
    scope: Scope,
    delta: Scope,
    earlier: EarlierReviews,
    main_guidance: str,
    on_outcome: Callable[[ConcernOutcome], None] | None = None,
) -> tuple[Workflow, Critic | None]:
    """The Workflow the main agent fans out through, and the critic it starts when the part
    of the change left to review (``delta``) calls for one (see :func:`critic_wanted`)."""
    critic: Critic | None = None

    def start_critic(concerns: list[str]) -> None:
        if critic is not None:
            critic.start(concerns)

    workflow = Workflow(
        session,
        require_files=scope.kind != "all",
        earlier=earlier,
        on_concerns=start_critic,
        hunks={f.path: f.change.hunks for f in scope.files if f.change and f.change.hunks},
        on_outcome=on_outcome,
    )
    if delta.files and critic_wanted(session.config, delta):
        critic = Critic(session, workflow, prescout_summary(scope), main_guidance)
    return workflow, critic


def _run_main(
    state: _Review, session: Session, workflow: Workflow, task: str, content: Snapshot
) -> None:
    """Run the main agent, keep its conversation for follow-up questions; a review it left
    incomplete goes on (the sweep covers what it did not)."""
    scope = state.scope
    try:
        # On a pool thread, not this one: a signal unwinds this thread, and the main
        # agent's reply in flight then still lands and is journaled.
        main = waiting.result(
            session.pool.submit(MAIN, partial(run_main_agent, session, workflow, task))
        )
        state.summary = main.summary
        if main.note:
            state.warnings.append(f"main agent: {main.note}")
        save_conversation(
            session.journal,
            main,
            content.commit,
            scope.describe(),
            content.own_objects,
            work_tree=scope.root,
        )
        if state.options.walkthrough:
            _write_walkthrough(state, session, workflow, main)
    except OrchReviewError as exc:
        if exc.exit_code != ExitCode.INCOMPLETE:
            raise
        state.warnings.append(str(exc))


def _write_walkthrough(
    state: _Review, session: Session, workflow: Workflow, main: MainResult
) -> None:
    """The model's walkthrough of the change, one follow-up turn of the main conversation
    (unverified description); a warning says why when there is none."""
    task = partial(write_walkthrough, session, workflow, main, state.scope)
    state.walkthrough, why_not = waiting.result(session.pool.submit(MAIN, task))
    if why_not is not None:
        state.warnings.append(f"The walkthrough was not written: {why_not}.")


def _sweep_and_criticise(
    state: _Review,
    session: Session,
    workflow: Workflow,
    critic: Critic | None,
    files: list[LedgerFile],
    reused: frozenset[str],
) -> tuple[str, ...]:
    """The sweep and the critic (see :func:`cover_rest`); a cap they reach is a warning."""
    config, budget = state.config, session.budget
    try:
        return cover_rest(
            workflow,
            critic,
            files,
            state.scope,
            reused,
            lambda: agents_left(config, budget),
            state.warnings,
        )
    except OrchReviewError as exc:
        if exc.exit_code != ExitCode.INCOMPLETE:
            raise
        state.warnings.append(str(exc))
        return ()


def _triage(
    state: _Review, agents: _AgentsDone, read: Callable[[str], list[str] | None]
) -> list[Finding]:
    """The findings of the concerns this review ran, and those carried over from earlier
    reviews, triaged for the report."""
    workflow = agents.workflow
    reviewed = [o for o in workflow.outcomes if o.index not in workflow.answered]
    carried = [f for found in agents.earlier.findings.values() for f in found]
    return _triaged(state, [*(f for outcome in reviewed for f in outcome.findings), *carried], read)


def _triaged(
    state: _Review, findings: list[Finding], read: Callable[[str], list[str] | None]
) -> list[Finding]:
    options, scope = state.options, state.scope
    return triage(
        findings,
        read=read,
        changes=scope.changes if scope.kind != "all" else None,
        mode=state.mode,
        baseline=options.baseline,
        floor=state.config.strictness,
        dismissed=learned.dismissed(options.learnings),
    )


def _check_fixes(
    state: _Review,
    findings: list[Finding],
    sandbox: Sandbox,
    workspace: Workspace,
    content: Snapshot,
    env: Mapping[str, str],
    events: EventSink | None,
) -> list[Finding]:
    """Suggested fixes checked with ``suggestion-check``, in the agents' shell sandbox or not
    run."""
    config = state.config
    checking = config.suggestion_check is not None and any(f.replacement for f in findings)
    if checking:
        workspace.wait()  # the check reads the content where agents read it
        _stage(events, "started", "patches", _CHECK)
    # The launcher scrubs the environment too; no secret is handed to it in the first place.
    check_env = agent_environment(env, "/")
    # Only a shell sandbox may run the reviewed code: elsewhere, no check runs at all.
    refusal = unconfined_reason(sandbox)
    if checking and refusal is not None:
        state.warnings.append(
            f"suggestion-check did not run: {refusal}; the suggested fixes stay unverified "
            "(a sandboxed shell, bubblewrap or Landlock, is needed to check them)."
        )
    checked = PatchChecker(
        content.read,
        config.suggestion_check,
        sandbox if refusal is None else None,
        workspace.root,
        check_env,
        unavailable=refusal or "no sandbox",
    ).check_all(findings)
    if checking:
        _stage(events, "done", "patches", _CHECK)
    return checked


_PROVE = "proving findings with failing tests"


def _provers(
    state: _Review,
    session: Session,
    content: Snapshot,
    env: Mapping[str, str],
    notices: Callable[[str], None] | None,
) -> Provers | None:
    """The prover stage of the review, None when ``prove`` is off."""
    config = state.config
    if config.prove == "off":
        return None
    provers = Provers(
        session,
        content.repo,
        content.commit,
        state.scope.base_commit,
        agent_environment(env, "/"),
        config.prove,
        timeout=config.prove_timeout,
        notices=notices,
    )
    provers.warm(state.scope.paths)
    return provers


def _offer_to(
    state: _Review, provers: Provers, read: Callable[[str], list[str] | None]
) -> Callable[[ConcernOutcome], None]:
    """What a concern's verified outcome is handed to: its confirmed findings, triaged as
    the report will triage them, offered to the provers at once."""

    def offer(outcome: ConcernOutcome) -> None:
        confirmed = [f for f in outcome.findings if f.status is Status.CONFIRMED]
        try:
            for finding in _triaged(state, confirmed, read) if confirmed else []:
                provers.offer(finding)
        except Exception:  # its prover starts when verification ends instead
            _log.exception("a prover could not start early")

    return offer


def _prove(
    state: _Review,
    provers: Provers | None,
    findings: list[Finding],
    events: EventSink | None,
) -> list[Finding]:
    """Confirmed findings at or above the ``prove`` level, each with its proof (or why not),
    waited for at most ``prove-timeout`` seconds from here."""
    if provers is None or not any(wanted(f, provers.level) for f in findings):
        return findings
    _stage(events, "started", "proofs", _PROVE)
    proven = provers.prove_all(findings, state.warnings)
    _stage(events, "done", "proofs", _PROVE)
    return proven


def _closing_warnings(state: _Review, agents: _AgentsDone) -> None:
    """What the report warns about once the agents are done."""
    config, scope, warnings = state.config, state.scope, state.warnings
    if state.guidance_truncated or agents.workflow.guidance_truncated:
        warnings.append(
            f"Review guidance was cut to {config.guidance_max_bytes:,} bytes per agent "
            "(guidance-max-bytes); the most specific guidance was kept."
        )
    unreadable = _unreadable(scope)
    if unreadable:
        warnings.append(
            f"Not reviewed: {counted(len(unreadable), 'file')} this user may not read "
            f"({', '.join(quote_path(p) for p in unreadable)}); give read permission and run "
            "again."
        )
    refused = refusal_warning(agents.workflow.refused)
    if refused is not None:
        warnings.append(refused)
    usage = agents.budget.report()
    if usage.unknown_price_models:
        warnings.append(
            "Cost is estimated with the highest known price for "
            + ", ".join(usage.unknown_price_models)
            + "; add their prices under [tool.orch-review.prices]."
        )


def _unreadable(scope: Scope) -> tuple[str, ...]:
    return tuple(s.path for s in scope.skipped if s.reason == UNREADABLE)


def _build_report(state: _Review, agents: _AgentsDone, findings: list[Finding]) -> Report:
    config, scope = state.config, state.scope
    return build_report(
        scope=scope.describe(),
        summary=state.summary,
        concerns=agents.workflow.outcomes,
        usage=agents.budget.report(),
        wall_seconds=time.monotonic() - state.started,
        model=config.model,
        agent_model=config.agent_model,
        warnings=state.warnings,
        findings=findings,
        scope_kind=scope.kind,
        filter_mode=state.mode,
        unreadable=_unreadable(scope),
        coverage=agents.coverage,
        shard=scope.shard,
        notes=state.notes,
        guidance_files=state.guidance_files,
    )


def _empty_report(config: Config, scope: Scope, mode: FilterMode) -> Report:
    skipped = [SkippedPath(s.path, s.reason) for s in scope.skipped]
    unit = "files" if scope.kind == "all" else "changed files"
    return build_report(
        scope=scope.describe(),
        summary="",
        concerns=[],
        usage=Budget(Caps(), cost=lambda *_: (0.0, True)).report(),
        wall_seconds=0.0,
        model=config.model,
        agent_model=config.agent_model,
        warnings=[],
        findings=[],
        scope_kind=scope.kind,
        filter_mode=mode,
        coverage=build_coverage([], covered_by={}, skipped=skipped, unit=unit),
        shard=scope.shard,
        notes=tuple(filter(None, [scope.nothing_reviewable()])),
    )
