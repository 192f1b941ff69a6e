"""``orch-review mr N``: review a GitLab merge request from a local clone.

The project is ``--repo`` or the path in the ``origin`` remote's URL; the API (GITLAB_TOKEN,
CI_API_V4_URL) gives the merge request's latest diff version (its base), its title, its
description and the issues it links. Its head is fetched from ``origin`` as
``refs/merge-requests/N/head`` (GitLab keeps it for every merge request) into
``refs/orch-review/merge-requests/N/head``, nothing is checked out, and the review is the
one of ``--base BASE --head HEAD``. With ``post`` the results are posted as
``orch-review gitlab`` posts them: diff discussions and the summary note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from orch_review.errors import CredentialsMissing, UsageError
from orch_review.hosts.gitlab.api import GitLabClient
from orch_review.hosts.gitlab.event import (
    GitLabEventError,
    MergeRequestJob,
    api_url_from_env,
    ca_file_from_env,
)
from orch_review.hosts.local import REMOTE, LocalRequest

if TYPE_CHECKING:
    import git

    from orch_review.core import PreparedReview
    from orch_review.events import EventSink
    from orch_review.findings.report import Report
    from orch_review.hosts.gitlab.publish import Published


def project_of(repo: git.Repo, given: str | None) -> str:
    """``--repo``, else the project path in the ``origin`` remote's URL."""
    from orch_review.scope.git import remote_url
    from orch_review.scope.remotes import gitlab_project

    if given is not None:
        if gitlab_project(f"https://host/{given}") != given:
            raise UsageError(f"--repo {given[:80]!r}: give the project's path, GROUP/NAME.")
        return given
    url = remote_url(repo, REMOTE)
    found = gitlab_project(url) if url else None
    if found is None:
        raise UsageError(
            "cannot tell the GitLab project from the `origin` remote's URL: pass --repo GROUP/NAME."
        )
    return found


def review_merge_request(
    repo: git.Repo,
    request: LocalRequest,
    env: Mapping[str, str],
    *,
    events: EventSink | None = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[Report, PreparedReview, Published | None]:
    """Review merge request ``request.number``; post the results if asked."""
    from orch_review.hosts.gitlab.host import GitLabConnection
    from orch_review.hosts.gitlab.intent import merge_request_intent
    from orch_review.hosts.gitlab.run import _discuss, latest_version
    from orch_review.hosts.run_flow import FetchedChange, learned_fingerprints, review_fetched

    token = (env.get("GITLAB_TOKEN") or "").strip() or None
    if token is None:
        raise CredentialsMissing(
            "GITLAB_TOKEN is not set: give a token that may read the project (`read_api`; "
            "`api` to --post)."
        )
    api_url = api_url_from_env(env)
    server_url = (env.get("CI_SERVER_URL") or api_url.removesuffix("/api/v4")).rstrip("/")
    ca_file = ca_file_from_env(env)
    path = project_of(repo, request.repository)
    with GitLabClient(api_url, path, token, ca_file=ca_file) as by_path:
        project = by_path.project()
    project_id = project.get("id")
    if not isinstance(project_id, int) or isinstance(project_id, bool):
        raise GitLabEventError(f"GitLab did not give the id of project {path}.")
    own = project.get("path_with_namespace")
    with GitLabClient(api_url, project_id, token, ca_file=ca_file) as client:
        merge_request = client.merge_request(request.number)
        sha = merge_request.get("sha")
        job = MergeRequestJob(
            api_url=api_url,
            server_url=server_url,
            project_id=project_id,
            iid=request.number,
            diff_base_sha="",
            head_sha=sha if isinstance(sha, str) else "",
            token=token,
            ca_file=ca_file,
        )
        refs, version = latest_version(client, job)
        change = FetchedChange(
            source_ref=f"refs/merge-requests/{request.number}/head",
            local_ref=f"refs/orch-review/merge-requests/{request.number}/head",
            base_sha=refs.base_sha,
            head_sha=refs.head_sha,
            head_named="the latest diff version's head is",
        )
        own_project = own if isinstance(own, str) else path
        report, prepared, _ = review_fetched(
            repo,
            request,
            env,
            change,
            lambda projects: merge_request_intent(
                client, merge_request, server_url, own_project, projects
            ),
            events=events,
            warn=warn,
        )
        if not request.post:
            return report, prepared, None
        connection = GitLabConnection(client, job, env, latest=(refs, version))
        report, done = _discuss(connection, report, learned_fingerprints(prepared))
    return report, prepared, done
