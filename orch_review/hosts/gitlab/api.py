"""The one place that talks to the GitLab REST API (v4), through ``httpx2`` with one retry
policy from ``tenacity``.

Pages are read by GitLab's documented ``x-next-page`` header ("REST API", "Pagination":
offset pagination, ``per_page`` at most 100), each page requested from this client's own
base URL: a ``Link`` header is never followed, so the token goes to the API's scheme, host
and port and nowhere else. A 429 is retried after its ``Retry-After`` ("Rate limits");
GETs are retried on connection errors and 5xx; a wait longer than ``max_wait`` is not
waited for. A custom CA (``CI_SERVER_TLS_CA_FILE`` on self-managed GitLab) is honoured.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

import httpx2
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt
from tenacity import wait_exponential_jitter as exponential

from orch_review.hosts.http_errors import HostApiError, RateLimited, ServerError
from orch_review.version import __version__

PER_PAGE = 100
MAX_PAGES = 200  # 20,000 items: a bound whatever a server says


class GitLabApiError(HostApiError):
    """A request the GitLab API refused or could not answer."""


class Forbidden(GitLabApiError):
    """401/403: the token may not do this (a job token cannot write notes)."""


class NotFound(GitLabApiError):
    """404: no such object, or the token may not see it."""


class BadRequest(GitLabApiError):
    """400: GitLab refused the request's content (a position outside the diff)."""


def _message(response: httpx2.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(data, dict):
        message = data.get("message") or data.get("error") or ""
        return str(message)[:500]
    return ""


def _retry_after(response: httpx2.Response) -> float:
    try:
        return max(float(response.headers.get("retry-after", "60")), 0.0)
    except ValueError:
        return 60.0


class _Backoff:
    def __init__(self) -> None:
        self._exponential = exponential(initial=1, max=30)

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RateLimited):
            return exc.wait
        return float(self._exponential(state))


class GitLabClient:
    """The REST endpoints orch-review uses, for one project's merge request."""

    def __init__(
        self,
        api_url: str,
        project_id: int | str,
        token: str | None,
        *,
        job_token: str | None = None,
        ca_file: str | None = None,
        max_attempts: int = 5,
        max_wait: float = 120.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        headers = {"User-Agent": f"orch-review/{__version__}", "Accept": "application/json"}
        if token:
            headers["PRIVATE-TOKEN"] = token
        elif job_token:
            headers["JOB-TOKEN"] = job_token
        self._http = httpx2.Client(
            base_url=api_url.rstrip("/") + "/",
            headers=headers,
            timeout=timeout,
            verify=ca_file or True,
            follow_redirects=False,
        )
        # A project is its numeric id or its path ("group/proj"), URL-encoded as one segment.
        self._project = f"projects/{quote(str(project_id), safe='')}"
        self._max_wait = max_wait
        self._retrying = Retrying(
            retry=retry_if_exception_type((RateLimited, ServerError)),
            wait=_Backoff(),
            stop=stop_after_attempt(max_attempts),
            sleep=sleep,
            reraise=True,
        )
        # A write that failed with 5xx may have been done all the same: retried, it could
        # post twice. A rate-limited one was not done.
        self._retrying_writes = self._retrying.copy(retry=retry_if_exception_type(RateLimited))

    def __enter__(self) -> GitLabClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connections."""
        self._http.close()

    # -- the endpoints ---------------------------------------------------------------------

    def current_user(self) -> dict[str, Any]:
        """``GET /user``: who the token acts as (a project access token is a bot user)."""
        return self._object("GET", "user")

    def merge_request(self, iid: int) -> dict[str, Any]:
        """``GET /projects/:id/merge_requests/:iid``."""
        return self._object("GET", f"{self._project}/merge_requests/{iid}")

    def project(self) -> dict[str, Any]:
        """``GET /projects/:id``: the project (its numeric ``id``, ``path_with_namespace``)."""
        return self._object("GET", self._project)

    def issue(self, iid: int, project: str | None = None) -> dict[str, Any]:
        """``GET /projects/:id/issues/:issue_iid`` ("Issues API", "Single project issue"), of
        this project or of ``project`` (its path, "group/proj") on the same instance."""
        where = f"projects/{quote(project, safe='')}" if project else self._project
        return self._object("GET", f"{where}/issues/{iid}")

    def closes_issues(self, iid: int) -> list[dict[str, Any]]:
        """``GET /projects/:id/merge_requests/:iid/closes_issues``: the issues the merge
        request closes when merged."""
        return self._list(f"{self._project}/merge_requests/{iid}/closes_issues")

    def versions(self, iid: int) -> list[dict[str, Any]]:
        """The merge request's diff versions, the latest first."""
        return self._list(f"{self._project}/merge_requests/{iid}/versions")

    def version(self, iid: int, version_id: int) -> dict[str, Any]:
        """One diff version with its ``diffs``."""
        return self._object("GET", f"{self._project}/merge_requests/{iid}/versions/{version_id}")

    def discussions(self, iid: int) -> list[dict[str, Any]]:
        """Every discussion of the merge request, with its notes."""
        return self._list(f"{self._project}/merge_requests/{iid}/discussions")

    def create_discussion(
        self, iid: int, body: str, position: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A new thread, on the diff when ``position`` is given."""
        payload: dict[str, Any] = {"body": body}
        if position is not None:
            payload["position"] = dict(position)
        return self._object("POST", f"{self._project}/merge_requests/{iid}/discussions", payload)

    def reply(self, iid: int, discussion_id: str, body: str) -> dict[str, Any]:
        """A note added to a thread."""
        path = f"{self._project}/merge_requests/{iid}/discussions/{quote(discussion_id, safe='')}"
        return self._object("POST", f"{path}/notes", {"body": body})

    def resolve(self, iid: int, discussion_id: str, resolved: bool = True) -> dict[str, Any]:
        """Resolve (or reopen) a thread."""
        path = f"{self._project}/merge_requests/{iid}/discussions/{quote(discussion_id, safe='')}"
        return self._object("PUT", path, {"resolved": resolved})

    def notes(self, iid: int) -> list[dict[str, Any]]:
        """Every note of the merge request."""
        return self._list(f"{self._project}/merge_requests/{iid}/notes")

    def create_note(self, iid: int, body: str) -> dict[str, Any]:
        """A note on the merge request (not on a line)."""
        return self._object("POST", f"{self._project}/merge_requests/{iid}/notes", {"body": body})

    def update_note(self, iid: int, note_id: int, body: str) -> dict[str, Any]:
        """Edit a note (only its author may)."""
        path = f"{self._project}/merge_requests/{iid}/notes/{note_id}"
        return self._object("PUT", path, {"body": body})

    def award_emoji(self, iid: int, note_id: int) -> list[dict[str, Any]]:
        """The emoji reactions on a note."""
        return self._list(f"{self._project}/merge_requests/{iid}/notes/{note_id}/award_emoji")

    def access_level(self, user_id: int) -> int:
        """A user's access level in the project, inherited ones included (0: not a member)."""
        try:
            member = self._object("GET", f"{self._project}/members/all/{user_id}")
        except NotFound:
            return 0
        level = member.get("access_level")
        return level if isinstance(level, int) and not isinstance(level, bool) else 0

    # -- plumbing --------------------------------------------------------------------------

    def _object(self, method: str, path: str, payload: Any = None) -> dict[str, Any]:
        data = self._request(method, path, payload, None).json()
        if not isinstance(data, dict):
            raise GitLabApiError(f"{method} {path} did not return an object")
        return data

    def _list(self, path: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for page in self._pages(path):
            items.extend(item for item in page if isinstance(item, dict))
        return items

    def _pages(self, path: str) -> Iterator[list[Any]]:
        page: str | None = "1"
        for _ in range(MAX_PAGES):
            if page is None:
                return
            response = self._request("GET", path, None, {"per_page": PER_PAGE, "page": page})
            data = response.json()
            if not isinstance(data, list):
                raise GitLabApiError(f"GET {path} did not return a list", response.status_code)
            yield data
            following = response.headers.get("x-next-page", "").strip()
            page = following if following.isdigit() else None
        raise GitLabApiError(f"GET {path}: more than {MAX_PAGES} pages")

    def _request(
        self, method: str, path: str, payload: Any, params: Mapping[str, Any] | None
    ) -> httpx2.Response:
        retrying = self._retrying if method == "GET" else self._retrying_writes
        for attempt in retrying:
            with attempt:
                return self._send(method, path, payload, params)
        raise AssertionError("unreachable: tenacity reraises the last error")

    def _send(
        self, method: str, path: str, payload: Any, params: Mapping[str, Any] | None
    ) -> httpx2.Response:
        shown = f"{method} /{path}"
        try:
            response = self._http.request(method, path, json=payload, params=params)
        except httpx2.TransportError as exc:
            raise ServerError(f"{shown}: no answer from the GitLab API ({exc})") from exc
        status = response.status_code
        if status < 300:
            return response
        message = f"{shown} failed with {status}: {_message(response)}"
        if status == 429:
            wait = _retry_after(response)
            if wait > self._max_wait:
                raise GitLabApiError(f"{message} (GitLab asks to wait {wait:.0f} s)", status)
            raise RateLimited(message, status, wait)
        if status in (401, 403):
            raise Forbidden(message, status)
        if status == 404:
            raise NotFound(message, status)
        if status in (400, 422):
            raise BadRequest(message, status)
        if status >= 500:
            raise ServerError(message, status)
        raise GitLabApiError(message, status)
