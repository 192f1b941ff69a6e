"""What a change says it does: a pull request's or merge request's title, description and
linked issues, or a task description given with ``--intent``.

All of it is hostile data, written by whoever opened the request or the issue. It is kept
here bounded in size and stripped of control characters; the engine quotes it as data (a
JSON value inside a tag it cannot close), never as instructions, and no host sees it again
unless a reporter's own sanitizer renders it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

#: Bounds on what reaches a prompt, in characters.
TITLE_LIMIT = 300
DESCRIPTION_LIMIT = 20_000
ISSUE_BODY_LIMIT = 8_000
#: Linked issues read per request; more are listed as not read.
MAX_ISSUES = 10
CUT = "\n[... cut by orch-review: too long]"

# "Fixes #12", "closes: group/proj#3", "Resolves octo/demo#4" (GitHub's and GitLab's closing
# keywords, and the usual non-closing links).
_KEYWORD = (
    r"(?:close[sd]?|closing|fix(?:e[sd])?|fixing|resolve[sd]?|resolving|implement(?:s|ed|ing)?|"
    r"refs?|references?|relates?\s+to|related\s+to|part\s+of|addresse[sd]|see)"
)
_SHORT_REF = re.compile(
    rf"(?i)\b{_KEYWORD}\s*:?\s+((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+)?#(\d{{1,9}})\b"
)
# Further references after a keyword: "Fixes #1, #2 and #3".
_MORE_REFS = re.compile(r"^(?:\s*(?:,|and|&)\s*((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+)?#(\d{1,9}))+")
_ONE_MORE = re.compile(r"\s*(?:,|and|&)\s*((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+)?#(\d{1,9})")


@dataclass(frozen=True, slots=True, order=True)
class IssueRef:
    """An issue a request links: ``project`` is None for the request's own repository."""

    project: str | None
    number: int

    def __str__(self) -> str:
        return f"{self.project or ''}#{self.number}"


@dataclass(frozen=True, slots=True)
class LinkedIssue:
    """A linked issue as read from the host, or why it could not be read."""

    reference: str
    title: str = ""
    body: str = ""
    unread: str | None = None  # e.g. "not found or not visible to this token (404)"


@dataclass(frozen=True, slots=True)
class Intent:
    """What the change claims to do, and where that claim comes from."""

    source: str  # "pull request #7", "merge request !3", "--intent"
    title: str = ""
    description: str = ""
    issues: tuple[LinkedIssue, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing to check the change against."""
        return not (self.title.strip() or self.description.strip() or self.read_issues)

    @property
    def read_issues(self) -> tuple[LinkedIssue, ...]:
        return tuple(i for i in self.issues if i.unread is None)

    @property
    def notes(self) -> tuple[str, ...]:
        """One line per linked issue that could not be read (for the report's warnings)."""
        return tuple(
            f"Linked issue {i.reference} of {self.source} was not read: {i.unread}."
            for i in self.issues
            if i.unread is not None
        )

    def as_data(self) -> dict[str, Any]:
        """The JSON value the intent concern quotes."""
        data: dict[str, Any] = {"source": self.source}
        if self.title:
            data["title"] = self.title
        if self.description:
            data["description"] = self.description
        issues = [
            {"reference": i.reference, "title": i.title, "body": i.body} for i in self.read_issues
        ]
        if issues:
            data["linked_issues"] = issues
        return data


def clean(text: object, limit: int) -> str:
    """``text`` as plain text: control characters (but newline and tab) and bidirectional
    controls removed, line ends normalized, cut to ``limit`` characters."""
    if not isinstance(text, str):
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    kept = "".join(
        c for c in text if c in "\n\t" or not unicodedata.category(c).startswith(("C", "Zl", "Zp"))
    )
    if len(kept) > limit:
        return kept[: max(0, limit - len(CUT))] + CUT
    return kept


def linked_issues(
    text: str, *, issue_url: re.Pattern[str] | None = None, own_project: str | None = None
) -> list[IssueRef]:
    """The issues ``text`` links, in order of first mention, without repeats: short
    references after a keyword ("Fixes #12", "Closes group/proj#3") and full issue URLs
    matched by ``issue_url`` (groups ``project`` and ``number``; the host's own issues only).
    A reference to ``own_project`` is a reference to the request's own repository."""
    found: list[tuple[int, IssueRef]] = []

    def ref(project: str | None, number: str) -> IssueRef:
        if project is not None and own_project is not None and project == own_project:
            project = None
        return IssueRef(project, int(number))

    for match in _SHORT_REF.finditer(text):
        found.append((match.start(), ref(match.group(1), match.group(2))))
        rest = text[match.end() :]
        extra = _MORE_REFS.match(rest)
        if extra is not None:
            for more in _ONE_MORE.finditer(extra.group(0)):
                found.append((match.end() + more.start(), ref(more.group(1), more.group(2))))
    if issue_url is not None:
        for match in issue_url.finditer(text):
            found.append((match.start(), ref(match.group("project"), match.group("number"))))
    out: list[IssueRef] = []
    for _, item in sorted(found, key=lambda pair: pair[0]):
        if item.number > 0 and item not in out:
            out.append(item)
    return out


def read_linked(
    refs: Sequence[IssueRef],
    read: Callable[[IssueRef], LinkedIssue],
    other_projects: Collection[str] = (),
) -> tuple[LinkedIssue, ...]:
    """The first :data:`MAX_ISSUES` of ``refs`` as ``read`` gives them; the rest noted as
    left unread. An issue of another project is read only when ``other_projects`` names it:
    the token may reach projects the request's author cannot, and whatever is read goes to
    the model (a group or personal token read for a stranger's description)."""
    unread = f"more than {MAX_ISSUES} linked"
    allowed = {project.casefold() for project in other_projects}

    def read_if_allowed(ref: IssueRef) -> LinkedIssue:
        if ref.project is None or ref.project.casefold() in allowed:
            return read(ref)
        return LinkedIssue(
            str(ref),
            unread="it belongs to another project; name that project in the `issue-projects`"
            " setting to read its issues",
        )

    return (
        *(read_if_allowed(ref) for ref in refs[:MAX_ISSUES]),
        *(LinkedIssue(str(ref), unread=unread) for ref in refs[MAX_ISSUES:]),
    )


def url_pattern(server_url: str, issues_path: str) -> re.Pattern[str]:
    """Full issue URLs on ``server_url``: ``{server}/{project}{issues_path}{number}``
    (``/issues/`` on GitHub, ``/-/issues/`` on GitLab)."""
    server = re.escape(server_url.rstrip("/"))
    return re.compile(
        rf"{server}/(?P<project>(?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+){re.escape(issues_path)}"
        r"(?P<number>\d{1,9})\b"
    )


def from_text(text: str, source: str = "--intent") -> Intent:
    """A task description given locally: all of it is the description."""
    return Intent(source, description=clean(text, DESCRIPTION_LIMIT))
