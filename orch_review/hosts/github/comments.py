"""Which findings become inline review comments, and which go to the summary instead.

GitHub accepts a review comment only on a line of the pull request's diff: on the right side,
a line inside a hunk (added or context), with ``start_line`` in the same hunk as ``line``;
anything else fails the whole review with 422. The hunks come from the ``patch`` of each
file in ``GET /pulls/{n}/files``, so what is planned here is what GitHub will accept.

Every inline comment starts with its finding's fingerprint in a hidden marker. A finding
already commented on the same line is not posted again; the thread of an earlier comment whose
finding is gone is resolved (:mod:`orch_review.hosts.github.threads`). Anyone can write a marker in
a comment, so only top-level comments by the account orch-review posts as, starting with the
marker, count as its own.

A verified patch (see :mod:`orch_review.engine.proofs.patch_check`) becomes a ```suggestion block
(:mod:`orch_review.hosts.suggestion`) only when the comment covers exactly the finding's lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from orch_review.findings.records import Finding
from orch_review.hosts.comment_body import comment_body, posted_category
from orch_review.hosts.markers import marked_fingerprint
from orch_review.hosts.posted import PostedComment
from orch_review.scope.diff import HUNK

Hunk = tuple[int, int]  # right-side (first, last) line, 1-based


def right_side_hunks(patch: str) -> tuple[Hunk, ...]:
    """The right-side line ranges of a ``patch`` (hunks only, as the files endpoint gives)."""
    hunks: list[Hunk] = []
    line = first = 0
    seen = False
    for text in patch.splitlines():
        match = HUNK.match(text)
        if match:
            if seen:
                hunks.append((first, line - 1))
            first = line = int(match.group(3))
            seen = True
        elif seen and text[:1] in (" ", "+", ""):
            line += 1  # context or added: it has a right-side number ("" is blank context)
    if seen:
        hunks.append((first, line - 1))
    return tuple((a, b) for a, b in hunks if b >= a)


@dataclass(frozen=True, slots=True)
class DiffLines:
    """Per file of the pull request, the hunks a comment may be placed on."""

    hunks: Mapping[str, tuple[Hunk, ...]]
    without_patch: frozenset[str] = frozenset()  # in the PR, but GitHub gave no patch

    @classmethod
    def from_files(cls, files: Iterable[Mapping[str, Any]]) -> DiffLines:
        """From ``GET /pulls/{n}/files`` entries (``filename``, ``status``, ``patch``)."""
        hunks: dict[str, tuple[Hunk, ...]] = {}
        missing: set[str] = set()
        for entry in files:
            name = str(entry.get("filename") or "")
            patch = entry.get("patch")
            if entry.get("status") == "removed" or not name:
                continue
            if isinstance(patch, str) and patch:
                hunks[name] = right_side_hunks(patch)
            else:
                missing.add(name)  # binary, too large, or past the response's diff limit
        return cls(hunks, frozenset(missing))

    def place(self, finding: Finding) -> tuple[int | None, int] | str:
        """``(start_line or None, line)`` for an inline comment, or why there can be none."""
        path = finding.path
        if path in self.without_patch:
            return "GitHub shows no diff for this file"
        if path not in self.hunks:
            return "file not changed in this pull request"
        start, end = finding.start_line, max(finding.end_line, finding.start_line)
        for first, last in self.hunks[path]:
            if first <= end and start <= last:
                line = min(end, last)
                start_line = max(start, first)
                return (start_line if start_line < line else None, line)
        return "lines outside the diff"


@dataclass(frozen=True, slots=True)
class InlineComment:
    """A finding placed on lines of the diff."""

    finding: Finding
    line: int
    start_line: int | None = None

    def payload(self) -> dict[str, Any]:
        """One entry of the ``comments`` array of ``POST /pulls/{n}/reviews``."""
        entry: dict[str, Any] = {
            "path": self.finding.path,
            "line": self.line,
            "side": "RIGHT",
            "body": comment_body(self.finding, (self.start_line or self.line, self.line)),
        }
        if self.start_line is not None:
            entry |= {"start_line": self.start_line, "start_side": "RIGHT"}
        return entry


@dataclass(frozen=True, slots=True)
class CommentPlan:
    """What to post inline, what is there already, and what goes to the summary."""

    inline: tuple[InlineComment, ...] = ()
    already_posted: tuple[InlineComment, ...] = ()
    outside: tuple[tuple[Finding, str], ...] = ()  # (finding, why it is not inline)
    resolved: tuple[PostedComment, ...] = field(default=())

    @property
    def on_diff(self) -> tuple[InlineComment, ...]:
        """Every finding that has an inline comment: new or from an earlier run."""
        return self.already_posted + self.inline


def written_by(comment: Mapping[str, Any], author: str) -> bool:
    """Whether ``comment`` (a REST API comment object) was written by ``author``."""
    user = comment.get("user")
    return isinstance(user, Mapping) and user.get("login") == author


def posted_comments(raw: Iterable[Mapping[str, Any]], author: str) -> list[PostedComment]:
    """Our markers among ``GET /pulls/{n}/comments`` entries: comments by ``author`` (the
    account orch-review posts as) that start with a finding marker."""
    found = []
    for comment in raw:
        if not written_by(comment, author) or comment.get("in_reply_to_id") is not None:
            continue
        body = str(comment.get("body") or "")
        fingerprint = marked_fingerprint(body)
        if fingerprint is None:
            continue
        comment_id = comment.get("id")
        line = comment.get("line")
        found.append(
            PostedComment(
                fingerprint=fingerprint,
                path=str(comment.get("path") or ""),
                line=int(line) if isinstance(line, int) else None,
                url=str(comment.get("html_url") or ""),
                comment_id=comment_id if isinstance(comment_id, int) else 0,
                category=posted_category(body),
            )
        )
    return found


def plan_comments(
    findings: Sequence[Finding], diff: DiffLines, posted: Sequence[PostedComment]
) -> CommentPlan:
    """Split confirmed ``findings`` into new inline comments, duplicates and summary rows."""
    on_line = {(p.fingerprint, p.path, p.line) for p in posted}
    inline: list[InlineComment] = []
    already: list[InlineComment] = []
    outside: list[tuple[Finding, str]] = []
    for finding in findings:
        placed = diff.place(finding)
        if isinstance(placed, str):
            outside.append((finding, placed))
            continue
        comment = InlineComment(finding, line=placed[1], start_line=placed[0])
        if (finding.fingerprint, finding.path, comment.line) in on_line:
            already.append(comment)
        else:
            inline.append(comment)
    current = {f.fingerprint for f in findings}
    resolved: dict[str, PostedComment] = {}
    for earlier in posted:
        if earlier.fingerprint not in current:
            resolved.setdefault(earlier.fingerprint, earlier)
    return CommentPlan(tuple(inline), tuple(already), tuple(outside), tuple(resolved.values()))
