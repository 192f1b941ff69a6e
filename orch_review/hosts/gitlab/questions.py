"""Answers to ``@orch-review`` questions in orch-review's own threads.

GitLab CI has no comment trigger: each pipeline run answers the questions asked since the
last one, in the thread where they were asked. A question is a reply mentioning
``@orch-review`` (not ``ignore``) by a member with at least Developer access, with no reply of
orch-review's after it. The answer continues the merge request's last review with
orchestration mode off (``deep`` turns it on for that answer), about the thread's finding; at
most :data:`MAX_ANSWERS` a run, so a run's cost follows the questions, not the threads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from orch_review.hosts.gitlab.api import GitLabClient
from orch_review.hosts.gitlab.publish import OwnThread
from orch_review.hosts.mentions import Mention, parse
from orch_review.hosts.replies import reply_body

if TYPE_CHECKING:
    from orch_review.findings.records import Finding

MAX_ANSWERS = 5
Answerer = Callable[[str, bool], tuple[str, bool, list[str]]]


@dataclass(frozen=True, slots=True)
class Question:
    """A pending question: where it was asked, by whom, and what."""

    discussion_id: str
    fingerprint: str
    who: str
    mention: Mention


def pending(
    discussions: Sequence[Mapping[str, Any]],
    threads: Sequence[OwnThread],
    me: int,
    developer: Callable[[int | None], bool],
) -> list[Question]:
    """The questions in orch-review's threads that it has not answered yet."""
    by_id = {str(d.get("id")): d for d in discussions}
    found: list[Question] = []
    for thread in threads:
        notes = [
            n
            for n in by_id.get(thread.discussion_id, {}).get("notes") or []
            if isinstance(n, Mapping)
        ]
        last_question: Question | None = None
        for note in notes[1:]:
            author = note.get("author") if isinstance(note.get("author"), Mapping) else {}
            user_id = author.get("id") if isinstance(author, Mapping) else None
            if user_id == me:
                last_question = None  # answered (or replied) since
                continue
            mention = parse(str(note.get("body") or ""))
            if mention is None or mention.kind == "ignore":
                continue
            if not developer(user_id if isinstance(user_id, int) else None):
                continue
            who = str(author.get("username") or "someone") if isinstance(author, Mapping) else ""
            last_question = Question(thread.discussion_id, thread.fingerprint, who, mention)
        if last_question is not None:
            found.append(last_question)
    return found[:MAX_ANSWERS]


def question_prompt(question: Question, finding: Finding | None, iid: int) -> str:
    """The user turn: the merge request, the thread's finding, the question."""
    parts = [f"{question.who} asks on merge request !{iid}"]
    if finding is not None:
        parts[0] += " in the thread of this finding of yours:"
        parts += [
            f"- file: {finding.path}, lines {finding.start_line}-{finding.end_line}",
            f"- severity: {finding.severity.value}, category: {finding.category}",
            f"- claim: {finding.claim}",
            f"- evidence: {finding.evidence}",
        ]
    else:
        parts[0] += " in the thread of a finding of yours that this review no longer reports:"
    text = question.mention.text or "(no question: explain the finding)"
    parts += ["", "Question:", text, "", "Answer in Markdown for a merge request note, briefly."]
    return "\n".join(parts)


def answer_all(
    client: GitLabClient,
    iid: int,
    questions: Sequence[Question],
    findings: Mapping[str, Finding],
    answer: Answerer,
    head_sha: str,
) -> list[str]:
    """Answer each question in its thread; the replies posted, in order."""
    replies: list[str] = []
    for question in questions:
        text, orchestrated, notes = answer(
            question_prompt(question, findings.get(question.fingerprint), iid),
            question.mention.kind == "deep",
        )
        replies.append(reply_body(text, orchestrated, notes, head_sha))
        client.reply(iid, question.discussion_id, replies[-1])
    return replies
