"""The scripted model's side of the intent check and of the walkthrough, and the checks the
intent tests share: the author's text reaches prompts only inside the data quote, and the
walkthrough in a summary comment is marked unverified and holds a Mermaid diagram that
parses."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from orch_review.engine.agents.prompts import INTENT_TAG
from orch_review.findings.walkthrough import Flowchart, parse_mermaid
from orch_review.hosts.summary import WALKTHROUGH_HEADING, WALKTHROUGH_NOTE
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.scripted import Concern, ReviewScript

WALKTHROUGH_ASKED = "Write a short walkthrough of this change"
QUOTED = re.compile(rf"<{INTENT_TAG}>.*?</{INTENT_TAG}>", re.DOTALL)
MERMAID = re.compile(r"^```mermaid\n(?P<diagram>.*?)\n```$", re.DOTALL | re.MULTILINE)

#: What the model answers when asked for the walkthrough of the pull_repo-shaped change
#: (app.py added, calc.py appended to).
WALKTHROUGH = {
    "files": [
        {"paths": ["app.py"], "summary": "Adds find_user(), a lookup of users by name."},
        {"paths": ["calc.py"], "summary": "Adds half()."},
        {"paths": ["not/changed.py"], "summary": "A file the change does not touch."},
    ],
    "diagram": 'flowchart LR\n  app["app.py find_user"] --> db["sqlite3"]\n'
    '  app -->|uses| calc["calc.py"]',
}


def case_insensitive_intent() -> Concern:
    """An intent concern: the linked issue asks for a lookup ignoring case, and find_user()
    compares names exactly (the verifier confirms it from the cited line)."""
    return Concern(
        "case-insensitive",
        "(orch-review's own intent check)",
        "grep -n 'def find_user' app.py",
        path="app.py",
        severity="medium",
        category="intent",
        claim="The linked issue asks for names matched case-insensitively; find_user() "
        "compares them exactly.",
    )


def with_intent(script: ReviewScript, intent: Concern) -> ReviewScript:
    """``script`` with ``intent`` answering the intent check; the main agent still sends only
    the script's own subtasks."""
    if script.subtasks is None:
        script.subtasks = [c.subtask for c in script.concerns]
    script.concerns.append(intent)
    return script


def with_walkthrough(
    policy: Callable[[ModelRequest], Reply], answer: dict[str, Any] | str = WALKTHROUGH
) -> Callable[[ModelRequest], Reply]:
    """``policy``, with the main agent answering the walkthrough request with ``answer``."""

    def answered(request: ModelRequest) -> Reply:
        if request.role == "main" and WALKTHROUGH_ASKED in request.last_user_text:
            return Reply.text(answer if isinstance(answer, str) else json.dumps(answer))
        return policy(request)

    return answered


def texts_of(fake_api: FakeMessagesAPI) -> list[str]:
    """Every text block and tool result of every request sent to the model."""
    out: list[str] = []
    for recorded in fake_api.message_requests:
        request = recorded.model_request()
        out.append(request.system_text)
        for message in request.messages:
            content = message.get("content")
            out.append(
                json.dumps(content, ensure_ascii=False) if not isinstance(content, str) else content
            )
    return out


def only_inside_the_quote(fake_api: FakeMessagesAPI, phrase: str) -> int:
    """How many requests carried ``phrase``; fails if any carried it outside the
    ``<change_intent>`` data quote."""
    seen = 0
    for text in texts_of(fake_api):
        if phrase in text:
            seen += 1
            assert phrase not in QUOTED.sub("", text), f"outside the data quote: {text[:300]}"
    return seen


def walkthrough_of(body: str) -> tuple[str, Flowchart | None]:
    """The walkthrough section of a summary comment and its parsed diagram; fails when the
    section is missing or not marked unverified."""
    assert WALKTHROUGH_HEADING in body, body
    section = body.split(WALKTHROUGH_HEADING, 1)[1].split("\n### ", 1)[0]
    assert WALKTHROUGH_NOTE in section and "not checked by a verifier" in section
    match = MERMAID.search(section)
    return section, None if match is None else parse_mermaid(match.group("diagram"))
