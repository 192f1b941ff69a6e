"""What a CommonMark/GFM parser makes of a Markdown document: the constructs in it.

markdown-it-py (the parser rich uses) with GFM's tables and strikethrough: every code block,
HTML, image, link, autolink and block structure of a document, so a test can assert that
hostile text made none of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

#: Tokens that are plain text in a paragraph.
TEXT = frozenset({"text", "softbreak", "hardbreak"})


def parser() -> MarkdownIt:
    """CommonMark with GFM's tables and strikethrough (linkify needs a package we do not
    install: extended autolinks are checked on the source, see :func:`bare_links`)."""
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


@dataclass(frozen=True)
class Construct:
    """One construct: its token type, and what identifies it (info string, URL, HTML)."""

    kind: str
    detail: str


def _walk(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _walk(token.children)


def constructs(document: str) -> list[Construct]:
    """Every construct in ``document`` but paragraphs and their text."""
    found = []
    for token in _walk(parser().parse(document)):
        if token.type in TEXT or token.type in ("inline", "paragraph_open", "paragraph_close"):
            continue
        if token.nesting == -1:
            continue  # the closing half of a construct counted at its opening
        detail = token.info or str(token.attrs.get("href") or token.attrs.get("src") or "")
        if token.type in ("html_block", "html_inline", "code_inline"):
            detail = token.content.strip()
        found.append(Construct(token.type, detail))
    return found


def text_of(document: str) -> str:
    """The characters a reader sees, code spans with their backticks, without whitespace or
    zero-width spaces (so it compares with :func:`visible`)."""
    parts = []
    for token in _walk(parser().parse(document)):
        if token.type == "text":
            parts.append(token.content)
        elif token.type == "code_inline":
            parts.append(token.markup + token.content + token.markup)
    return visible("".join(parts).replace("\u200b", ""))


def visible(text: str) -> str:
    """``text`` without whitespace (what :func:`text_of` compares)."""
    return "".join(text.split())


def bare_links(document: str) -> list[str]:
    """What GFM's extended autolinks and a host would link without Markdown syntax, outside
    code spans: a URL scheme or ``www.`` in the source, and ``@``, ``#``, ``!`` followed by
    a word."""
    for token in _walk(parser().parse(document)):
        if token.type == "code_inline":
            span = token.markup + token.content + token.markup
            document = document.replace(span, " ", 1)
    pattern = r"(?i)(?:https?|ftp|mailto|xmpp):/|\bwww\.|[@#!](?=\w)|\bgh-\d"
    return [m.group() for m in re.finditer(pattern, document)]
