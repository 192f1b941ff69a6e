"""What a pull request says it does: its title, its description and the issues it links,
read with the token already in use ("Get an issue", ``GET /repos/{owner}/{repo}/issues/{n}``).

An issue the token cannot read (404, 403, 410 for a deleted one, 301 for one transferred
to another repository: redirects are not followed) is noted, not fatal.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import partial

from orch_review.hosts.github.api import GitHubClient
from orch_review.hosts.github.event import GitHubContext, PullRequest
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

_REPOSITORY = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9_.-]{1,100}")


def _repository_name(project: str) -> bool:
    """Whether ``project`` is an ``owner/name`` GitHub can have."""
    return bool(_REPOSITORY.fullmatch(project)) and project.split("/")[-1] not in {".", ".."}


def _read(client: GitHubClient, ref: IssueRef) -> LinkedIssue:
    if ref.project is not None and not _repository_name(ref.project):
        return LinkedIssue(str(ref), unread="not a repository name GitHub can have")
    try:
        data = client.issue(ref.number, ref.project)
    except HostApiError as exc:
        status = f" ({exc.status})" if exc.status else ""
        return LinkedIssue(str(ref), unread=f"this token cannot read it{status}")
    if not isinstance(data.get("title"), str):  # 301: transferred to another repository
        return LinkedIssue(str(ref), unread="GitHub did not return it (moved elsewhere?)")
    return LinkedIssue(
        str(ref),
        title=clean(data.get("title"), TITLE_LIMIT),
        body=clean(data.get("body"), ISSUE_BODY_LIMIT),
    )


def pull_intent(
    context: GitHubContext,
    pull: PullRequest,
    other_projects: Collection[str] = (),
    client: GitHubClient | None = None,
) -> Intent:
    """The pull request's intent; its linked issues are read through the API (``client``,
    else one opened for them), those of another repository only when ``other_projects``
    names it."""
    title = clean(pull.title, TITLE_LIMIT)
    body = clean(pull.body, DESCRIPTION_LIMIT)
    refs = linked_issues(
        f"{title}\n{body}",
        issue_url=url_pattern(context.server_url, "/issues/"),
        own_project=pull.base_repository,
    )
    refs = [r for r in refs if r != IssueRef(None, pull.number)]  # the pull request itself
    issues: tuple[LinkedIssue, ...] = ()
    if refs and client is not None:
        issues = read_linked(refs, partial(_read, client), other_projects)
    elif refs:
        with GitHubClient(context.api_url, context.repository, context.token) as opened:
            issues = read_linked(refs, partial(_read, opened), other_projects)
    return Intent(f"pull request #{pull.number}", title, body, issues)
