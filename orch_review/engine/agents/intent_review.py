"""The change against what it says it does, and its walkthrough.

The intent concern is one more concern of the review's Workflow, queued by orch-review itself
when the change comes with a description (a pull request's, a merge request's, ``--intent``):
journaled, budgeted and verified by an adversarial verifier like any other. It covers no file
(it checks the change against its claim, not each file for defects), so the coverage ledger
and the sweep are unchanged by it.

The walkthrough is one more turn of the main conversation with orchestration mode off and no
shell: the model describes the change from what it has already read, with no new fan-out.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future

from orch_review.engine.agents.main_agent import MainResult, run_turn
from orch_review.engine.agents.prompts import WALKTHROUGH_ASK, intent_concern
from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.workflow import Workflow
from orch_review.errors import OrchReviewError
from orch_review.findings.records import ConcernOutcome
from orch_review.findings.walkthrough import Walkthrough, parse_walkthrough
from orch_review.scope.resolve import Scope
from orch_review.scope.stated_intent import Intent

_log = logging.getLogger("orch_review.engine.agents.intent_review")
INTENT_CATEGORY = "intent"


def start_intent_concern(
    workflow: Workflow, scope: Scope, intent: Intent | None
) -> list[Future[ConcernOutcome]]:
    """Queue the intent concern (nothing when there is no intent to check, or for a full
    audit, which has no change to compare); :meth:`Workflow.collect` its outcome."""
    if intent is None or intent.empty or scope.kind == "all":
        return []
    concern = intent_concern(intent, scope.paths, scope.base_commit)
    return workflow.start([concern], files=[()])


def write_walkthrough(
    session: Session, workflow: Workflow, main: MainResult, scope: Scope
) -> tuple[Walkthrough | None, str | None]:
    """The walkthrough the model writes in one follow-up turn of the main conversation, and
    why there is none (None when the model's answer was simply not usable)."""
    if not main.summary or not main.messages:
        return None, "the main agent did not finish"
    try:
        answer = run_turn(
            session, workflow, main.messages, main.mode.switch(False), WALKTHROUGH_ASK, shell=False
        )
    except OrchReviewError as exc:
        return None, str(exc)
    if not answer.summary:
        return None, answer.note or "no answer"
    walkthrough = parse_walkthrough(answer.summary, scope.paths)
    if walkthrough is None:
        _log.info("the walkthrough answer was not in the expected form; left out")
    return walkthrough, None
