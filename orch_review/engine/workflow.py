"""The Workflow tool: a journaled fan-out of subagents with pipelined verification.

Each concern runs as a subagent; as soon as its findings are in, a verifier for them is
queued ahead of concerns not yet started. Every request an agent sends waits at the pool's
gate for a slot, ranked by the chain of work still behind it (see ``scheduler``). Every
agent's result is looked up in, and stored to, the journal under a key of everything that
changes its answer, so a rerun pays only for agents that never finished.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any

from orch_review.engine.client import Completer, Reply
from orch_review.engine.journal import journal_key
from orch_review.engine.phases import Phase, parse_phases, with_context
from orch_review.engine.reuse import EarlierReviews
from orch_review.engine.scheduler import REVIEW, VERIFY, PriorityPool, request_rank
from orch_review.engine.session import Session
from orch_review.engine.subagent import AgentFailed, run_subagent, run_verifier
from orch_review.engine.tools import TOOLS_VERSION, ToolInputError
from orch_review.errors import OrchReviewError
from orch_review.findings.codec import (
    finding_from_json,
    finding_to_json,
    verdict_from_json,
    verdict_to_json,
)
from orch_review.findings.records import ConcernOutcome, Verdict


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


class RankedClient:
    """One agent's view of the client: each request waits at the pool's gate for a slot,
    ranked by the agent's role, the turns it has done and its place in the review."""

    def __init__(
        self,
        client: Completer,
        pool: PriorityPool,
        cancel: threading.Event,
        role: str,
        order: int,
    ) -> None:
        self._client = client
        self._pool = pool
        self._cancel = cancel
        self._role = role
        self._order = order
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
            return self._client.complete(
                model=model, system=system, tools=tools, messages=messages, tool_choice=tool_choice
            )


def ranked(session: Session, role: str, order: int) -> Session:
    """``session`` for one agent of ``role``, whose requests go through the gate."""
    client = RankedClient(session.client, session.pool, session.cancel, role, order)
    return dataclasses.replace(session, client=client, sandbox=session.shell_sandbox)


# Part of every verifier's journal key. 2: verdicts are stored with their confidence; entries
# of version 1 lack it, and reusing them would rank every finding as "medium" confidence.
# 3: verdicts carry the verifier's judgement of a proposed fix (`fix_ok`); an entry without it
# would leave every fix unapproved.
VERDICTS_FORMAT = 3


class Workflow:
    """Runs concerns for one session; each :meth:`run` is one Workflow tool call."""

    def __init__(
        self,
        session: Session,
        *,
        require_files: bool = False,
        earlier: EarlierReviews | None = None,
        on_concerns: Callable[[list[str]], None] | None = None,
    ) -> None:
        """``require_files``: refuse subtasks that name no reviewable file (a change's
        concerns must be about the change); ``earlier``: files an earlier review covered;
        ``on_concerns``: told each list of concerns about to run, before they run (a whole
        plan's at once), e.g. to start the completeness critic."""
        self._session = session
        self._require_files = require_files
        self._earlier = earlier
        self._on_concerns = on_concerns
        self._lock = threading.Lock()  # the critic queues concerns from a worker thread
        # Concerns answered from an earlier review instead of being run.
        self.answered: set[int] = set()
        self._next_index = 0
        self.outcomes: list[ConcernOutcome] = []
        # Concern index -> the reviewable files it is about: what its outcome covers.
        self.files_of: dict[int, tuple[str, ...]] = {}
        self.refused: list[tuple[str, str]] = []  # (subtask, why), as told to the model
        # (concern, files) -> its index and outcome, for a concern asked for again.
        self._queued: dict[tuple[str, tuple[str, ...]], tuple[int, Future[ConcernOutcome]]] = {}
        self.guidance_truncated = False

    def refusal(self, subtask: str) -> str | None:
        """Why ``subtask`` may not run (a skipped file, or no file of the change), or None."""
        workspace = self._session.workspace
        reason = workspace.refusal(subtask)
        if reason is None and self._require_files and not workspace.mentioned_files(subtask):
            reason = (
                "it names no file of the change; concerns must be about changed files "
                "(name them by their paths, as listed in the pre-scout summary)"
            )
        return reason

    def handle_tool_call(self, tool_input: Mapping[str, Any]) -> tuple[str, bool]:
        """The tool handler given to the main agent: ``subtasks``, or a ``phases`` plan."""
        cap = self._session.config.max_subtasks
        try:
            if tool_input.get("phases"):
                phases = parse_phases(tool_input, cap)
                self._announce([s for p in phases for s in p.subtasks])
                return self._run_phases(phases), False
            subtasks = parse_subtasks(tool_input)
        except ToolInputError as exc:
            return f"Workflow was not run: {exc}.", True
        return self._run_subtasks(subtasks)

    def _announce(self, concerns: Sequence[str]) -> None:
        accepted = [c for c in concerns if self.refusal(c) is None]
        if accepted and self._on_concerns is not None:
            self._on_concerns(accepted)

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
        cap = self._session.config.max_subtasks
        dropped = subtasks[cap:]
        accepted, refused = [], []
        for subtask in subtasks[:cap]:
            reason = self.refusal(subtask)
            if reason is None:
                accepted.append(subtask)
            else:
                self.refused.append((subtask, reason))
                refused.append(f"- {_short(subtask)}\n    refused: {reason}")
        if not accepted:
            return "Workflow was not run: every subtask is out of scope:\n" + "\n".join(
                refused
            ), True
        text = describe(self.run(accepted), local=True)
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

    def run(
        self, concerns: list[str], files: Sequence[Sequence[str]] | None = None
    ) -> list[ConcernOutcome]:
        """Review ``concerns`` and return their outcomes in order. ``files`` gives, per
        concern, the files it covers (default: the reviewable files its text names)."""
        numbered = self._number(concerns, files)
        self._announce(concerns)  # the critic, if it starts now, queues ahead of them
        return self.collect(self._queue(numbered))

    def start(
        self, concerns: Sequence[str], files: Sequence[Sequence[str]] | None = None
    ) -> list[Future[ConcernOutcome]]:
        """Queue ``concerns`` without waiting; :meth:`collect` their outcomes."""
        return self._queue(self._number(concerns, files))

    def _number(
        self, concerns: Sequence[str], files: Sequence[Sequence[str]] | None
    ) -> list[tuple[int, str, tuple[str, ...], Future[ConcernOutcome] | None]]:
        """Each concern's index in the review and the files it covers, with the outcome of
        the same concern about the same files when this review already queued it (a main
        agent restarted after a refusal asks for its subtasks again): that is reused,
        whatever it was, and never paid for twice."""
        workspace = self._session.workspace
        named = [
            tuple(files[n] if files is not None else workspace.mentioned_files(concern))
            for n, concern in enumerate(concerns)
        ]
        out: list[tuple[int, str, tuple[str, ...], Future[ConcernOutcome] | None]] = []
        with self._lock:
            for concern, paths in zip(concerns, named, strict=True):
                earlier = self._queued.get((concern, paths))
                if earlier is not None:
                    out.append((earlier[0], concern, paths, earlier[1]))
                    continue
                index = self._next_index
                self._next_index += 1
                self.files_of[index] = paths
                self._queued[(concern, paths)] = (index, Future())
                out.append((index, concern, paths, None))
        return out

    def _queue(
        self,
        numbered: Sequence[tuple[int, str, tuple[str, ...], Future[ConcernOutcome] | None]],
    ) -> list[Future[ConcernOutcome]]:
        futures: list[Future[ConcernOutcome]] = []
        for index, concern, named, earlier in numbered:
            if earlier is not None:
                futures.append(earlier)
                continue
            with self._lock:
                outcome = self._queued[(concern, named)][1]
            futures.append(outcome)
            if self._earlier is not None and self._earlier.answers(named):
                self._answered(index, concern, self._earlier, named, outcome)
                continue
            queued = self._session.pool.submit(
                REVIEW, partial(self._review, index, concern, outcome)
            )
            _skipped_if_cancelled(
                queued, outcome, ConcernOutcome(index, concern, "skipped", error="interrupted")
            )
        return futures

    def collect(self, futures: Sequence[Future[ConcernOutcome]]) -> list[ConcernOutcome]:
        """Wait for queued concerns; their outcomes join :attr:`outcomes` in concern order."""
        try:
            outcomes = [f.result() for f in futures]
        except BaseException as exc:
            if not isinstance(exc, Exception):  # Ctrl-C or a signal: stop admitting at once
                self._session.cancel.set()
                self._session.pool.cancel_pending()
            raise
        with self._lock:
            known = {o.index for o in self.outcomes}
            for outcome in outcomes:  # a reused outcome is in already
                if outcome.index not in known:
                    known.add(outcome.index)
                    self.outcomes.append(outcome)
            self.outcomes.sort(key=lambda o: o.index)
        return outcomes

    def pending_files(self) -> frozenset[str]:
        """Files named by queued concerns whose outcome is not in yet."""
        with self._lock:
            done = {o.index for o in self.outcomes}
            return frozenset(
                path for i, paths in self.files_of.items() if i not in done for path in paths
            )

    def _answered(
        self,
        index: int,
        concern: str,
        earlier: EarlierReviews,
        named: Sequence[str],
        outcome: Future[ConcernOutcome],
    ) -> None:
        """The outcome of a concern whose files an earlier review covered, without an agent."""
        self.answered.add(index)
        self._session.emit(f"s{index}", "subagent", concern, "cached", "earlier review")
        findings = tuple(f for path in named for f in earlier.findings[path])
        outcome.set_result(
            ConcernOutcome(
                index,
                concern,
                "reviewed",
                findings,
                "Answered from an earlier review of the same content.",
                from_journal=True,
            )
        )

    def _review(self, index: int, concern: str, done: Future[ConcernOutcome]) -> None:
        session = self._session
        try:
            if session.cancel.is_set():
                done.set_result(ConcernOutcome(index, concern, "skipped", error="interrupted"))
                return
            key = self._key("subagent", concern)
            stored = session.journal.get(key)
            from_journal = stored is not None
            if stored is None:
                if not session.ledger.start_agent("subagent"):
                    reason = session.ledger.report().cap_reached or "budget reached"
                    session.emit(f"s{index}", "subagent", concern, "skipped", reason)
                    done.set_result(ConcernOutcome(index, concern, "skipped", error=reason))
                    return
                reported = run_subagent(
                    ranked(session, "subagent", index),
                    f"s{index}",
                    concern,
                    self.guidance_for(concern),
                )
                stored = {
                    "summary": reported.summary,
                    "findings": [finding_to_json(f) for f in reported.findings],
                }
                session.journal.put(key, "subagent", stored)
            else:
                session.ledger.reused("subagent")
                session.emit(f"s{index}", "subagent", concern, "cached")
            findings = tuple(finding_from_json(f) for f in stored["findings"])
            result = ConcernOutcome(
                index, concern, "reviewed", findings, stored["summary"], from_journal=from_journal
            )
        except OrchReviewError as exc:
            session.emit(f"s{index}", "subagent", concern, "failed", str(exc))
            done.set_result(ConcernOutcome(index, concern, "failed", error=str(exc)))
            return
        except BaseException as exc:
            done.set_exception(exc)
            return
        if not findings:
            done.set_result(result)
            return
        if not session.config.verify:  # honestly incomplete: the findings stay unverified
            done.set_result(_unverified(result, "verification off"))
            return
        queued = session.pool.submit(VERIFY, partial(self._verify, result, done))
        _skipped_if_cancelled(
            queued, done, _unverified(result, "verification skipped: interrupted")
        )

    def _verify(self, result: ConcernOutcome, done: Future[ConcernOutcome]) -> None:
        session = self._session
        agent_id = f"v{result.index}"
        try:
            findings_json = [finding_to_json(f) for f in result.findings]
            key = self._key("verifier", result.concern, findings_json, VERDICTS_FORMAT)
            stored = session.journal.get(key)
            if stored is None:
                if session.cancel.is_set() or not session.ledger.start_agent("verifier"):
                    reason = session.ledger.report().cap_reached or "interrupted"
                    session.emit(agent_id, "verifier", result.concern, "skipped", reason)
                    done.set_result(_unverified(result, f"verification skipped: {reason}"))
                    return
                verdicts = run_verifier(
                    ranked(session, "verifier", result.index),
                    agent_id,
                    result.concern,
                    result.findings,
                    self.guidance_for(result.concern),
                )
                stored = {"verdicts": {str(n): verdict_to_json(v) for n, v in verdicts.items()}}
                session.journal.put(key, "verifier", stored)
            else:
                session.ledger.reused("verifier")
                session.emit(agent_id, "verifier", result.concern, "cached")
            by_number = stored.get("verdicts") or {}
            verified = tuple(
                f.with_verdict(_verdict(by_number.get(str(n))))
                for n, f in enumerate(result.findings, 1)
            )
            missing = [str(n) for n, f in enumerate(verified, 1) if f.verdict is None]
            done.set_result(
                ConcernOutcome(
                    result.index,
                    result.concern,
                    "reviewed",
                    verified,
                    result.summary,
                    f"no verdict for finding {', '.join(missing)}" if missing else None,
                    result.from_journal,
                )
            )
        except OrchReviewError as exc:
            session.emit(agent_id, "verifier", result.concern, "failed", str(exc))
            done.set_result(_unverified(result, f"verification failed: {exc}"))
        except BaseException as exc:
            done.set_exception(exc)

    def guidance_for(self, concern: str) -> str:
        """The review guidance for the files ``concern`` names (empty without guidance)."""
        guidance = self._session.guidance
        if guidance is None:
            return ""
        text, truncated = guidance.for_paths(self._session.workspace.mentioned_files(concern))
        if truncated:
            self.guidance_truncated = True
        return text

    def _key(self, role: str, concern: str, *extra: object) -> str:
        session = self._session
        config = session.config
        return journal_key(
            role,
            TOOLS_VERSION,
            config.agent_model,
            config.effort,
            config.subagent_max_turns,
            concern,
            session.workspace.content_key(concern),
            self.guidance_for(concern),
            *extra,
        )


def _skipped_if_cancelled(
    queued: Future[None], outcome: Future[ConcernOutcome], skipped: ConcernOutcome
) -> None:
    """Give ``outcome`` the result ``skipped`` if the work ``queued`` for it never runs (the
    review was interrupted first), so that nobody waits for it in vain."""

    def settle(work: Future[None]) -> None:
        if work.cancelled() and not outcome.done():
            outcome.set_result(skipped)

    queued.add_done_callback(settle)


def _verdict(stored: object) -> Verdict | None:
    """A stored verdict, or None (unverified, never confirmed) when it is missing or odd."""
    if not isinstance(stored, Mapping):
        return None
    try:
        return verdict_from_json(stored)
    except (KeyError, TypeError, ValueError):
        return None


def _unverified(result: ConcernOutcome, error: str) -> ConcernOutcome:
    return ConcernOutcome(
        result.index,
        result.concern,
        "reviewed",
        result.findings,
        result.summary,
        error,
        result.from_journal,
    )


def describe(outcomes: list[ConcernOutcome], *, local: bool = False) -> str:
    """The tool result the main agent reads: per concern, what survived verification.
    ``local``: number the concerns of this list 1..n rather than by their place in the
    review, which depends on when the critic's concerns were queued."""
    lines = []
    for number, outcome in enumerate(outcomes, 1):
        head = f"[{number if local else outcome.index + 1}] {_short(outcome.concern)}"
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
            f"    - {f.severity.value} {f.location}: {_short(f.claim, 160)}" for f in confirmed
        )
    return "\n".join(lines) or "No subtasks were run."


def _short(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
