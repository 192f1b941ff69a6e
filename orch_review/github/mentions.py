"""What a pull request comment asks of orch-review, and whether its author may ask.

A comment speaks to orch-review when it mentions the trigger (``@orch-review`` by default) in
its own words: not inside a quotation (``> ...``) or a code block, where people cite what
someone else wrote. The words after the mention are the request:

- ``@orch-review deep <question>`` answers with orchestration mode on for that turn;
- ``@orch-review ignore <reason>`` dismisses the thread's finding for the pull request;
- ``@orch-review <question>`` answers with orchestration mode off, as ``orch-review ask``.

Comments by bots never count, orch-review's own replies included (they also carry
:data:`REPLY_MARKER`); whether a person has write access is GitHub's to say
(:meth:`orch_review.github.api.GitHubClient.may_write`), not the comment's
``author_association``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

MentionKind = Literal["ask", "deep", "ignore"]
REPLY_MARKER = "<!-- orch-review:reply -->"
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_COMMAND = re.compile(r"(deep|ignore)(?![\w-])[:,.]?\s*(.*)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Mention:
    """A request to orch-review: what kind, and the words that came with it."""

    kind: MentionKind
    text: str  # the question, or the reason for ``ignore``; may be empty


def own_lines(body: str) -> list[str]:
    """The lines of ``body`` its author wrote: without quotations and code blocks."""
    lines: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        if line.lstrip().startswith(">"):
            continue
        lines.append(line)
    return lines


def parse(body: str, trigger: str = "@orch-review") -> Mention | None:
    """The request in ``body``, or None when it does not mention ``trigger`` in its own words.

    The mention must stand alone (``@orch-reviewer`` or ``x@orch-review`` is someone else), in
    any case, as GitHub treats logins. Everything after it, on its line and the lines below,
    is the request.
    """
    text = "\n".join(own_lines(body))
    pattern = rf"(?<![\w@/-]){re.escape(trigger)}(?![\w-])"
    match = re.search(pattern, text, flags=re.IGNORECASE)
    if match is None:
        return None
    rest = text[match.end() :].strip()
    command = _COMMAND.match(rest)
    if command is None:
        return Mention("ask", rest)
    words = command.group(2)
    if command.group(1).lower() == "ignore":
        return Mention("ignore", " ".join(words.split()))
    return Mention("deep", words.strip())


def is_bot(user: object) -> bool:
    """Whether a REST ``user`` object is a bot (``type`` Bot, or a ``[bot]`` login)."""
    if not isinstance(user, Mapping):
        return True  # no author (a deleted account, an odd payload): never a trigger
    login = str(user.get("login") or "")
    return user.get("type") != "User" or not login or login.endswith("[bot]")


def from_orch_review(comment: Mapping[str, Any]) -> bool:
    """Whether ``comment`` is one of orch-review's replies (it starts with the marker)."""
    return str(comment.get("body") or "").lstrip().startswith(REPLY_MARKER)
