"""Verifier dispatch: a concern's findings, attacked by a verifier, become verdicts.

A verifier for a concern's findings is queued ahead of concerns not yet started; its
verdicts are looked up in, and stored to, the journal under a key that includes the
findings. A finding without a verdict stays unverified, never confirmed.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from functools import partial

from orch_review.engine.agents.concern_keys import ConcernKeys
from orch_review.engine.agents.gated_client import gated_session
from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.subagent import run_verifier
from orch_review.engine.api.scheduler import VERIFY
from orch_review.errors import OrchReviewError
from orch_review.findings.codec import finding_to_json, verdict_from_json, verdict_to_json
from orch_review.findings.records import ConcernOutcome, Verdict

# Part of every verifier's journal key. 2: verdicts are stored with their confidence; entries
# of version 1 lack it, and reusing them would rank every finding as "medium" confidence.
# 3: verdicts carry the verifier's judgement of a proposed fix (`fix_ok`); an entry without it
# would leave every fix unapproved.
VERDICTS_FORMAT = 3


def queue_verification(
    session: Session, keys: ConcernKeys, result: ConcernOutcome, done: Future[ConcernOutcome]
) -> None:
    """Queue a verifier for ``result``'s findings; ``done`` gets the verified outcome."""
    queued = session.pool.submit(VERIFY, partial(verify, session, keys, result, done))
    skipped_if_cancelled(queued, done, unverified(result, "verification skipped: interrupted"))


def verify(
    session: Session, keys: ConcernKeys, result: ConcernOutcome, done: Future[ConcernOutcome]
) -> None:
    """Verify ``result``'s findings (or reuse the journal's verdicts) and settle ``done``."""
    agent_id = f"v{result.index}"
    try:
        findings_json = [finding_to_json(f) for f in result.findings]
        key = keys.key("verifier", result.concern, findings_json, VERDICTS_FORMAT)
        stored = session.journal.get(key)
        if stored is None:
            admitted = not session.cancel.is_set() and session.budget.admit(
                "verifier", result.index, session.config.agent_model, verify_after=False
            )
            if not admitted:
                session.budget.withdraw("verifier", result.index)
                reason = session.budget.report().cap_reached or "interrupted"
                session.emit(agent_id, "verifier", result.concern, "skipped", reason)
                done.set_result(unverified(result, f"verification skipped: {reason}"))
                return
            try:
                verdicts = run_verifier(
                    gated_session(session, "verifier", result.index),
                    agent_id,
                    result.concern,
                    result.findings,
                    keys.guidance_for(result.concern),
                )
            finally:
                session.budget.finished("verifier", result.index)
            stored = {"verdicts": {str(n): verdict_to_json(v) for n, v in verdicts.items()}}
            session.journal.put(key, "verifier", stored)
        else:
            session.budget.withdraw("verifier", result.index)
            session.budget.reused("verifier")
            session.emit(agent_id, "verifier", result.concern, "cached")
        done.set_result(_with_verdicts(result, stored.get("verdicts") or {}))
    except OrchReviewError as exc:  # the verifier's run said it failed
        done.set_result(unverified(result, f"verification failed: {exc}"))
    except BaseException as exc:
        done.set_exception(exc)


def _with_verdicts(result: ConcernOutcome, by_number: Mapping[str, object]) -> ConcernOutcome:
    verified = tuple(
        f.with_verdict(_verdict(by_number.get(str(n)))) for n, f in enumerate(result.findings, 1)
    )
    missing = [str(n) for n, f in enumerate(verified, 1) if f.verdict is None]
    return ConcernOutcome(
        result.index,
        result.concern,
        "reviewed",
        verified,
        result.summary,
        f"no verdict for finding {', '.join(missing)}" if missing else None,
        result.from_journal,
    )


def skipped_if_cancelled(
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


def unverified(result: ConcernOutcome, error: str) -> ConcernOutcome:
    """``result`` with its findings left unverified, and why."""
    return ConcernOutcome(
        result.index,
        result.concern,
        "reviewed",
        result.findings,
        result.summary,
        error,
        result.from_journal,
    )
