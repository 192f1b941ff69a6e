"""Fix commits found through what they link on GitLab: ``#N`` an issue, ``!N`` a merge
request (GitLab's merge commits end "See merge request group/name!N"). A commit is a fix
when one of them carries a bug label, or when a merge request it names closes an issue that
does (GitLab's "List issues that close on merge"). Whatever the token cannot read is
counted, never fatal; labels are names from the host, compared without case."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from orch_review.eval.linked import BUG_LABELS, MAX_LOOKUPS, references

# `!12`, `(!12)`; `group/name!12` only for this project's own path (checked below).
_MERGE_REQUEST = re.compile(r"(?<![\w/&!])((?:[\w.-]+/)+[\w.-]+)?!(\d{1,9})\b")
_REMOTE = re.compile(
    r"^(?:https://gitlab\.com/|git@gitlab\.com:|ssh://git@gitlab\.com/)"
    r"([A-Za-z0-9][\w.-]*(?:/[A-Za-z0-9][\w.-]*?)+)(?:\.git)?/?$"
)


class MergeRequestReader(Protocol):
    """What reading a GitLab project's issues and merge requests takes (the GitLab
    adapter's client has it): eval sees no host adapter."""

    def issue(self, iid: int) -> dict[str, Any]:
        """The issue's REST object."""
        ...

    def merge_request(self, iid: int) -> dict[str, Any]:
        """The merge request's REST object."""
        ...

    def closes_issues(self, iid: int) -> list[dict[str, Any]]:
        """The issues the merge request closes when merged."""
        ...


def gitlab_com_project(remote_url: str) -> str | None:
    """``group/name`` of a gitlab.com remote URL, else None."""
    match = _REMOTE.match(remote_url.strip())
    return match.group(1) if match else None


def merge_requests(message: str, project_path: str | None) -> list[int]:
    """The merge request numbers a commit message names in this project, once each."""
    seen: dict[int, None] = {}
    for match in _MERGE_REQUEST.finditer(message):
        where = match.group(1)
        if where is None or (project_path and where.lower() == project_path.lower()):
            seen.setdefault(int(match.group(2)), None)
    return list(seen)


def label_names(item: Mapping[str, Any]) -> set[str]:
    """The label names of an issue or merge request as GitLab gives them: names, or objects
    with a ``name`` (``with_labels_details``)."""
    names = set()
    for label in item.get("labels") or ():
        if isinstance(label, Mapping):
            label = label.get("name", "")
        if isinstance(label, str):
            names.add(label.strip().lower())
    return names


@dataclass
class GitLabBugLinks:
    """Asks GitLab whether what a message names is, or closes, a bug (cached)."""

    client: MergeRequestReader
    project_path: str | None = None
    labels: tuple[str, ...] = BUG_LABELS
    unreadable: int = 0
    _issues: dict[int, bool] = field(default_factory=dict)
    _merge_requests: dict[int, bool] = field(default_factory=dict)

    def _bug(self, item: Mapping[str, Any]) -> bool:
        return bool(label_names(item) & {label.lower() for label in self.labels})

    def _lookups(self) -> int:
        return len(self._issues) + len(self._merge_requests)

    def _issue_is_bug(self, iid: int) -> bool:
        from orch_review.hosts.http_errors import HostApiError

        if iid not in self._issues:
            if self._lookups() >= MAX_LOOKUPS:
                return False
            try:
                self._issues[iid] = self._bug(self.client.issue(iid))
            except HostApiError:
                self.unreadable += 1
                self._issues[iid] = False
        return self._issues[iid]

    def _merge_request_is_bug(self, iid: int) -> bool:
        from orch_review.hosts.http_errors import HostApiError

        if iid not in self._merge_requests:
            if self._lookups() >= MAX_LOOKUPS:
                return False
            try:
                bug = self._bug(self.client.merge_request(iid))
                if not bug:
                    bug = any(self._closed_bug(issue) for issue in self.client.closes_issues(iid))
            except HostApiError:
                self.unreadable += 1
                bug = False
            self._merge_requests[iid] = bug
        return self._merge_requests[iid]

    def _closed_bug(self, issue: Mapping[str, Any]) -> bool:
        iid = issue.get("iid")
        bug = self._bug(issue)
        if isinstance(iid, int) and not isinstance(iid, bool):
            self._issues.setdefault(iid, bug)
        return bug

    def __call__(self, message: str) -> bool:
        """True when a bug-labelled issue or merge request is among those the message names,
        or a merge request it names closes one."""
        return any(self._issue_is_bug(n) for n in references(message)) or any(
            self._merge_request_is_bug(n) for n in merge_requests(message, self.project_path)
        )
