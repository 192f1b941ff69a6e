"""What a pull request comment asks of orch-review, and whether its author may ask.

A comment speaks to orch-review when it mentions the trigger (``@orch-review`` by default) in
its own words: in plain text, as CommonMark reads it (markdown-it), not inside a quotation
(``> ...``), a code block (fenced or indented), inline code, an HTML comment, a
strikethrough or a link's text, where people cite, hide or strike out words. The words after
the mention are the request:

- ``@orch-review deep <question>`` answers with orchestration mode on for that turn;
- ``@orch-review ignore <reason>`` dismisses the thread's finding for the pull request;
- ``@orch-review <question>`` answers with orchestration mode off, as ``orch-review ask``.

A command counts only with the mention at the start of a line and the exact command word
(lowercase, then a space, a colon or the end): "@orch-review Ignore the CI failure, is this
safe?" is a question, and so is any mention in the middle of a sentence.

Comments by bots never count, orch-review's own replies included (they also carry
:data:`REPLY_MARKER`); whether a person has write access is GitHub's to say
(:meth:`orch_review.hosts.github.api.GitHubClient.may_write`), not the comment's
``author_association``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

from orch_review.hosts.markers import REPLY_MARKER

MentionKind = Literal["ask", "deep", "ignore"]
_COMMAND = re.compile(r"(deep|ignore)(?=[\s:]|$):?\s*(.*)", re.DOTALL)
# Stands in the plain text for what is not the author's plain words (inline code, an HTML
# comment, struck-out or linked text): a mention never forms across it, nor starts a line
# after it.
_HIDDEN = "\x00"
# Inline elements whose content is not plain text, by their opening token.
_HIDING = {"s_open": "s_close", "link_open": "link_close"}


@dataclass(frozen=True, slots=True)
class Mention:
    """A request to orch-review: what kind, and the words that came with it."""

    kind: MentionKind
    text: str  # the question, or the reason for ``ignore``; may be empty


@dataclass(frozen=True, slots=True)
class _Piece:
    """A run of the comment: as searched for a mention, and as it reads in a request."""

    plain: str
    shown: str


def _markdown() -> MarkdownIt:
    # CommonMark with raw HTML recognised (so comments are), and GitHub's strikethrough; the
    # escapes and entities stay tokens of their own (`\@orch-review` is no mention).
    return MarkdownIt("commonmark").enable("strikethrough").disable("text_join")


def _pieces(body: str) -> Iterator[_Piece]:
    """The comment's blocks in order, outside quotations, each ended by a newline."""
    quoted = 0
    for token in _markdown().parse(body):
        if token.type == "blockquote_open":
            quoted += 1
        elif token.type == "blockquote_close":
            quoted -= 1
        elif quoted:
            continue
        elif token.type == "inline":
            yield from _inline(token.children or [])
            yield _Piece("\n", "\n")
        elif token.type in ("fence", "code_block"):
            # Code after the mention belongs to the question; it never holds a mention.
            fence = "~~~~" if "```" in token.content else "```"
            yield _Piece("\n", f"{fence}\n{token.content}{fence}\n")


def _inline(children: list[Token]) -> Iterator[_Piece]:
    hiding: str | None = None  # the opening token of the element the text is in
    for child in children:
        if hiding is not None:
            if child.type == _HIDING[hiding]:
                hiding = None
            elif child.content and child.type in ("text", "text_special", "code_inline"):
                # A link's text still reads as words in the request; struck-out text does not.
                yield _Piece(_HIDDEN, child.content if hiding == "link_open" else "")
            continue
        if child.type in _HIDING:
            hiding = child.type
            yield _Piece(_HIDDEN, "")
        elif child.type == "text":
            yield _Piece(child.content, child.content)
        elif child.type == "text_special":  # an escape or an entity: never part of a name
            yield _Piece(_HIDDEN if child.content == "@" else child.content, child.content)
        elif child.type in ("softbreak", "hardbreak"):
            yield _Piece("\n", "\n")
        elif child.type == "code_inline":
            yield _Piece(_HIDDEN, f"{child.markup}{child.content}{child.markup}")
        elif child.type in ("html_inline", "image"):
            yield _Piece(_HIDDEN, "")


def own_lines(body: str) -> list[str]:
    """The plain-text lines of ``body`` its author wrote: without quotations, code, HTML
    comments, struck-out or linked text."""
    text = "".join(p.plain for p in _pieces(body)).replace(_HIDDEN, "")
    return [line for line in text.split("\n") if line.strip()]


def parse(body: str, trigger: str = "@orch-review") -> Mention | None:
    """The request in ``body``, or None when it does not mention ``trigger`` in its own words.

    The mention must stand alone (``@orch-reviewer`` or ``x@orch-review`` is someone else), in
    any case, as GitHub treats logins. Everything after it, on its line and the lines below
    (code blocks included), is the request; a command only when the mention starts its line.
    """
    pieces = list(_pieces(body))
    plain = "".join(p.plain for p in pieces)
    pattern = rf"(?<![\w@/-]){re.escape(trigger)}(?![\w-])"
    match = re.search(pattern, plain, flags=re.IGNORECASE)
    if match is None:
        return None
    line_start = plain.rfind("\n", 0, match.start()) + 1
    at_line_start = plain[line_start : match.start()].strip(" \t") == ""
    rest = _shown_after(pieces, match.end())
    command = _COMMAND.match(rest.lstrip(" \t")) if at_line_start else None
    if command is None:
        return Mention("ask", rest.strip())
    words = command.group(2)
    if command.group(1) == "ignore":
        return Mention("ignore", " ".join(words.split()))
    return Mention("deep", words.strip())


def _shown_after(pieces: list[_Piece], offset: int) -> str:
    """The request's text from ``offset`` of the plain text on (which falls in a text run,
    where the plain text and the shown text are the same)."""
    position = 0
    for index, piece in enumerate(pieces):
        if position + len(piece.plain) >= offset:
            head = piece.shown[offset - position :]
            return head + "".join(p.shown for p in pieces[index + 1 :])
        position += len(piece.plain)
    return ""


def is_bot(user: object) -> bool:
    """Whether a REST ``user`` object is a bot (``type`` Bot, or a ``[bot]`` login)."""
    if not isinstance(user, Mapping):
        return True  # no author (a deleted account, an odd payload): never a trigger
    login = str(user.get("login") or "")
    return user.get("type") != "User" or not login or login.endswith("[bot]")


def from_orch_review(comment: Mapping[str, Any]) -> bool:
    """Whether ``comment`` is one of orch-review's replies (it starts with the marker)."""
    return str(comment.get("body") or "").lstrip().startswith(REPLY_MARKER)
