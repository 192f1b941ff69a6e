"""The merge request a GitLab CI job runs for, read once from GitLab's predefined variables.

A ``merge_request_event`` pipeline sets ``CI_API_V4_URL``, ``CI_PROJECT_ID``,
``CI_MERGE_REQUEST_IID``, ``CI_MERGE_REQUEST_DIFF_BASE_SHA``, ``CI_COMMIT_SHA``,
``CI_SERVER_URL`` and, for a merge request from a fork, a ``CI_MERGE_REQUEST_SOURCE_PROJECT_ID``
other than ``CI_MERGE_REQUEST_PROJECT_ID`` (docs.gitlab.com, "Predefined CI/CD variables
reference"). The token is ``GITLAB_TOKEN`` (a project or group access token with ``api``
scope); ``CI_JOB_TOKEN`` cannot write merge request notes. Tokens are kept out of repr.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from orch_review.errors import OrchReviewError

_SHA = re.compile(r"^[0-9a-f]{40}$")
DEFAULT_API_URL = "https://gitlab.com/api/v4"


class GitLabEventError(OrchReviewError):
    """The environment does not describe a merge request pipeline (exit code 2)."""


def api_url_from_env(env: Mapping[str, str]) -> str:
    """``CI_API_V4_URL`` (else gitlab.com's), which must be an http(s) URL."""
    api_url = (env.get("CI_API_V4_URL") or DEFAULT_API_URL).strip().rstrip("/")
    if not api_url.startswith(("https://", "http://")):
        raise GitLabEventError(f"CI_API_V4_URL is not an http(s) URL: {api_url[:80]!r}.")
    return api_url


def ca_file_from_env(env: Mapping[str, str]) -> str | None:
    """``CI_SERVER_TLS_CA_FILE``: the CA of a self-managed instance, when one is set."""
    return (env.get("CI_SERVER_TLS_CA_FILE") or "").strip() or None


def _required(env: Mapping[str, str], name: str, what: str) -> str:
    value = (env.get(name) or "").strip()
    if not value:
        raise GitLabEventError(
            f"{name} is not set: orch-review gitlab runs in a merge request pipeline "
            f'({what}); add `rules: - if: $CI_PIPELINE_SOURCE == "merge_request_event"` '
            "to the job."
        )
    return value


def _number(env: Mapping[str, str], name: str, what: str) -> int:
    value = _required(env, name, what)
    if not value.isdigit() or int(value) < 1:
        raise GitLabEventError(f"{name} must be a positive number, not {value[:40]!r}.")
    return int(value)


def _sha(env: Mapping[str, str], name: str, what: str) -> str:
    value = _required(env, name, what).lower()
    if not _SHA.match(value):
        raise GitLabEventError(f"{name} is not a commit id: {value[:60]!r}.")
    return value


@dataclass(frozen=True, slots=True)
class MergeRequestJob:
    """The merge request under review and how to reach GitLab."""

    api_url: str
    server_url: str
    project_id: int
    iid: int
    diff_base_sha: str
    head_sha: str
    source_project_id: int | None = None
    token: str | None = field(default=None, repr=False)
    job_token: str | None = field(default=None, repr=False)
    ca_file: str | None = None

    @property
    def number(self) -> int:
        """The merge request's number in its project (``!N``): its iid."""
        return self.iid

    @property
    def from_fork(self) -> bool:
        """A merge request whose source branch lives in another project."""
        return self.source_project_id is not None and self.source_project_id != self.project_id

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> MergeRequestJob:
        """Read GitLab CI's predefined variables and the tokens."""
        _required(env, "CI_API_V4_URL", "the API's address")
        api_url = api_url_from_env(env)
        project = _number(env, "CI_MERGE_REQUEST_PROJECT_ID", "the target project")
        source = (env.get("CI_MERGE_REQUEST_SOURCE_PROJECT_ID") or "").strip()
        return cls(
            api_url=api_url,
            server_url=(env.get("CI_SERVER_URL") or api_url.removesuffix("/api/v4")).rstrip("/"),
            project_id=project,
            iid=_number(env, "CI_MERGE_REQUEST_IID", "the merge request"),
            diff_base_sha=_sha(env, "CI_MERGE_REQUEST_DIFF_BASE_SHA", "the diff's base"),
            head_sha=_sha(env, "CI_COMMIT_SHA", "the commit under review"),
            source_project_id=int(source) if source.isdigit() else None,
            token=(env.get("GITLAB_TOKEN") or "").strip() or None,
            job_token=(env.get("CI_JOB_TOKEN") or "").strip() or None,
            ca_file=ca_file_from_env(env),
        )
