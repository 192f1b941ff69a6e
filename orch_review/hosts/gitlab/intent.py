"""What a merge request says it does: its ``title``, its ``description`` and the issues it
links ("Closes #12", "Fixes group/proj#3", ``{server}/group/proj/-/issues/3``), read with
the token already in use ("Issues API", "Single project issue").

An issue the token cannot read (404, 403) is noted, not fatal.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from functools import partial
from typing import Any

from orch_review.hosts.gitlab.api import GitLabClient
from orch_review.hosts.http_errors import HostApiError
from orch_review.scope.stated_intent import (
    DESCRIPTION_LIMIT,
    ISSUE_BODY_LIMIT,
    TITLE_LIMIT,
    Intent,
    IssueRef,
    LinkedIssue,
    clean,
    linked_issues,
    read_linked,
    url_pattern,
)

_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}")


def _project_path(project: str) -> bool:
    """Whether ``project`` is a path GitLab can have (no empty, ``.`` or ``..`` part)."""
    parts = project.split("/")
    return len(parts) >= 2 and all(_PART.fullmatch(p) and p not in {".", ".."} for p in parts)


def _read(client: GitLabClient, ref: IssueRef) -> LinkedIssue:
    if ref.project is not None and not _project_path(ref.project):
        return LinkedIssue(str(ref), unread="not a project path GitLab can have")
    try:
        data = client.issue(ref.number, ref.project)
    except HostApiError as exc:
        status = f" ({exc.status})" if exc.status else ""
        return LinkedIssue(str(ref), unread=f"this token cannot read it{status}")
    return LinkedIssue(
        str(ref),
        title=clean(data.get("title"), TITLE_LIMIT),
        body=clean(data.get("description"), ISSUE_BODY_LIMIT),
    )


def merge_request_intent(
    client: GitLabClient,
    merge_request: Mapping[str, Any],
    server_url: str,
    own_project: str | None = None,
    other_projects: Collection[str] = (),
) -> Intent:
    """The intent of ``merge_request`` (as ``GET /projects/:id/merge_requests/:iid``
    returns it); linked issues are read with ``client``, those of another project only when
    ``other_projects`` names it. ``own_project`` is the project's path, so that
    ``group/proj#3`` of the same project counts as ``#3``."""
    iid = merge_request.get("iid")
    source = f"merge request !{iid}" if isinstance(iid, int) else "the merge request"
    title = clean(merge_request.get("title"), TITLE_LIMIT)
    description = clean(merge_request.get("description"), DESCRIPTION_LIMIT)
    refs = linked_issues(
        f"{title}\n{description}",
        issue_url=url_pattern(server_url, "/-/issues/"),
        own_project=own_project or _own_path(merge_request),
    )
    issues = read_linked(refs, partial(_read, client), other_projects)
    return Intent(source, title, description, issues)


def _own_path(merge_request: Mapping[str, Any]) -> str | None:
    """The project's path from the merge request's ``references.full`` ("group/proj!3")."""
    references = merge_request.get("references")
    full = references.get("full") if isinstance(references, Mapping) else None
    if isinstance(full, str) and "!" in full:
        return full.rsplit("!", 1)[0] or None
    return None
