"""Fix commits found through the issues they link: ``#N`` in a message, an issue labelled as
a bug on GitHub. Issues the token cannot read are counted, never fatal."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

# `#12`, `fixes #12`, `(#12)`; not `owner/repo#12` (another repository) or `&#12;`.
_REFERENCE = re.compile(r"(?<![\w/&])#(\d{1,9})\b")
_REMOTE = re.compile(
    r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*?)(?:\.git)?/?$"
)
BUG_LABELS = ("bug", "type: bug", "kind/bug", "regression")
MAX_LOOKUPS = 500  # issues asked about in one run: bounded, whatever the history holds


def references(message: str) -> list[int]:
    """The issue numbers a commit message names, in order, once each."""
    seen: dict[int, None] = {}
    for match in _REFERENCE.finditer(message):
        seen.setdefault(int(match.group(1)), None)
    return list(seen)


def github_com_repository(remote_url: str) -> str | None:
    """``owner/name`` of a github.com remote URL, else None."""
    match = _REMOTE.match(remote_url.strip())
    return match.group(1) if match else None


class IssueReader(Protocol):
    """What reading a GitHub issue takes (the GitHub adapter's client has it): eval sees
    no host adapter."""

    def issue(self, number: int) -> dict[str, Any]:
        """The issue's REST object."""
        ...


@dataclass
class BugIssues:
    """Asks GitHub whether the issues a message names carry a bug label (cached)."""

    client: IssueReader
    labels: tuple[str, ...] = BUG_LABELS
    unreadable: int = 0
    _known: dict[int, bool] = field(default_factory=dict)

    def _is_bug(self, number: int) -> bool:
        from orch_review.hosts.http_errors import HostApiError

        if number not in self._known:
            if len(self._known) >= MAX_LOOKUPS:
                return False
            try:
                issue = self.client.issue(number)
            except HostApiError:
                self.unreadable += 1
                self._known[number] = False
                return False
            names = {
                str(label.get("name", "")).strip().lower()
                for label in issue.get("labels") or ()
                if isinstance(label, Mapping)
            }
            self._known[number] = bool(names & {label.lower() for label in self.labels})
        return self._known[number]

    def __call__(self, message: str) -> bool:
        """True when a bug-labelled issue is among those the message names."""
        return any(self._is_bug(number) for number in references(message))
