"""The one place that talks to the GitHub REST API, through ``httpx2`` (the HTTP client the
anthropic SDK already installs), with one retry policy from ``tenacity``.

Retried, bounded: rate limits, and for requests that may be repeated (not POST) connection
errors and 5xx. GitHub answers a rate-limited
request with 403 or 429 and says how long to wait in ``retry-after`` (seconds) or, when
``x-ratelimit-remaining`` is 0, in ``x-ratelimit-reset`` (epoch seconds); a secondary limit
may give neither, and then the docs say to wait at least a minute ("Rate limits for the REST
API", docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api). A wait longer
than ``max_wait`` is not waited for: the request fails at once with :class:`RateLimited`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

import httpx2
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base

from orch_review.hosts.http_errors import HostApiError, RateLimited, ServerError
from orch_review.version import __version__

API_VERSION = "2022-11-28"
#: Who Actions' GITHUB_TOKEN posts as. It is an installation token, which may not read
#: ``GET /user`` (403 "Resource not accessible by integration").
ACTIONS_BOT = "github-actions[bot]"
SECONDARY_LIMIT_WAIT = 60.0  # the docs' "wait at least one minute" when no header says more


class GitHubApiError(HostApiError):
    """A request the GitHub API refused or could not answer."""


class PermissionDenied(GitHubApiError):
    """401, 403 (not a rate limit) or 404: the token may not do this (fork PRs, read-only)."""


class Unprocessable(GitHubApiError):
    """422: GitHub refused the content (e.g. a review comment on a line outside the diff)."""


def rate_limit_wait(response: httpx2.Response, now: float) -> float | None:
    """Seconds GitHub asks to wait before retrying ``response``; None if it is no rate limit."""
    if response.status_code not in (403, 429):
        return None
    headers = response.headers
    retry_after = headers.get("retry-after")
    if retry_after is not None:
        try:
            return max(float(retry_after), 0.0)
        except ValueError:
            pass
    if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset"):
        try:
            return max(float(headers["x-ratelimit-reset"]) - now, 0.0)
        except ValueError:
            pass
    # A secondary limit with neither header: the message is the documented signal.
    if "rate limit" in _message(response).lower():
        return SECONDARY_LIMIT_WAIT
    if response.status_code == 429:
        return SECONDARY_LIMIT_WAIT
    return None


def _message(response: httpx2.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200]
    if not isinstance(data, dict):
        return ""
    message = str(data.get("message") or "")
    details = [
        e if isinstance(e, str) else str(e.get("message") or e.get("code") or e)
        for e in data.get("errors") or []
        if isinstance(e, str | dict)
    ]
    return f"{message} ({'; '.join(details)})" if details else message


def default_graphql_url(api_url: str) -> str:
    """Where GraphQL lives next to a REST base: ``https://api.github.com/graphql``, and on
    GitHub Enterprise Server ``https://HOST/api/graphql`` for ``https://HOST/api/v3``."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base.removesuffix("/v3") + "/graphql"
    return base + "/graphql"


def _graphql_error(
    errors: list[dict[str, Any]], response: httpx2.Response, now: float
) -> HostApiError:
    """The exception for a GraphQL ``errors`` array (the first error decides)."""
    kinds = {str(e.get("type") or "") for e in errors}
    message = "POST graphql: " + "; ".join(str(e.get("message") or e.get("type")) for e in errors)
    if kinds & {"RATE_LIMIT", "RATE_LIMITED"}:
        wait = rate_limit_wait(response, now) if response.status_code in (403, 429) else None
        if wait is None:
            reset = response.headers.get("x-ratelimit-reset")
            retry_after = response.headers.get("retry-after")
            try:
                wait = max(float(retry_after), 0.0) if retry_after else None
                if wait is None and reset:
                    wait = max(float(reset) - now, 0.0)
            except ValueError:
                wait = None
        return RateLimited(
            message, response.status_code, SECONDARY_LIMIT_WAIT if wait is None else wait
        )
    if "FORBIDDEN" in kinds:
        return PermissionDenied(message, 403)
    if "NOT_FOUND" in kinds:
        return PermissionDenied(message, 404)
    return GitHubApiError(message, response.status_code)


class _Backoff:
    """The server's wait for rate limits; exponential backoff with jitter otherwise."""

    def __init__(self) -> None:
        self._exponential = wait_exponential_jitter(initial=1, max=30)

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RateLimited):
            return exc.wait
        return float(self._exponential(state))


class _StopWhenWaitTooLong(stop_base):
    """Stop retrying when the next wait (computed before ``stop`` runs) exceeds the bound."""

    def __init__(self, max_wait: float) -> None:
        self.max_wait = max_wait

    def __call__(self, state: RetryCallState) -> bool:
        return state.upcoming_sleep > self.max_wait


def origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    """Scheme, host and port (None for the scheme's default): where a token may go."""
    return (url.scheme, url.host, url.port)


def _download(url: httpx2.URL, max_bytes: int, timeout: httpx2.Timeout) -> bytes:
    """GET ``url`` with a client of its own (no token, no redirects), at most ``max_bytes``."""
    shown = f"GET {url.scheme}://{url.host}{url.path}"  # the query holds the signature
    chunks: list[bytes] = []
    size = 0
    try:
        with httpx2.Client(timeout=timeout) as storage, storage.stream("GET", url) as response:
            if response.status_code != 200:
                raise GitHubApiError(f"{shown} failed with {response.status_code}")
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise GitHubApiError(f"{shown}: larger than {max_bytes} bytes")
                chunks.append(chunk)
    except httpx2.HTTPError as exc:
        raise ServerError(f"{shown}: no answer ({type(exc).__name__})") from exc
    return b"".join(chunks)


class GitHubClient:
    """The REST endpoints orch-review uses, for one repository."""

    def __init__(
        self,
        api_url: str,
        repository: str,
        token: str | None,
        *,
        max_attempts: int = 5,
        max_wait: float = 120.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        graphql_url: str | None = None,
    ) -> None:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"orch-review/{__version__}",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        # The trailing slash makes relative paths extend the base (GHES: HOST/api/v3/).
        self._http = httpx2.Client(
            base_url=api_url.rstrip("/") + "/", headers=headers, timeout=timeout
        )
        self._repo = repository
        self._clock = clock
        self._graphql_url = graphql_url or default_graphql_url(api_url)
        # The token goes to these origins only (the REST base and the GraphQL endpoint).
        self._origins = frozenset(
            {origin(self._http.base_url), origin(httpx2.URL(self._graphql_url))}
        )
        self._retrying = Retrying(
            retry=retry_if_exception_type((RateLimited, ServerError)),
            wait=_Backoff(),
            stop=stop_after_attempt(max_attempts) | _StopWhenWaitTooLong(max_wait),
            sleep=sleep,
            reraise=True,
        )
        # A POST that failed with 5xx or a lost connection may have been done all the same:
        # retried, it could post a second review. A rate-limited one was not done.
        self._retrying_posts = self._retrying.copy(retry=retry_if_exception_type(RateLimited))

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connections."""
        self._http.close()

    # -- the endpoints ---------------------------------------------------------------------

    def login(self) -> str | None:
        """The login the token acts as (``GET /user``), or None when GitHub does not say: an
        installation token (Actions' ``GITHUB_TOKEN``, a GitHub App's) may not read it."""
        try:
            data = self._json("GET", "user")
        except PermissionDenied:
            return None
        login = data.get("login") if isinstance(data, dict) else None
        return str(login) if login else None

    def pull(self, number: int) -> dict[str, Any]:
        """``GET /repos/{repo}/pulls/{number}``."""
        return self._json("GET", f"repos/{self._repo}/pulls/{number}")

    def issue(self, number: int, repository: str | None = None) -> dict[str, Any]:
        """``GET /repos/{repo}/issues/{number}`` (a pull request is an issue too), of this
        repository or of ``repository`` ("owner/name") on the same host."""
        data = self._json("GET", f"repos/{repository or self._repo}/issues/{number}")
        return data if isinstance(data, dict) else {}

    def pull_files(self, number: int) -> list[dict[str, Any]]:
        """Every file of the pull request with its ``patch`` (GitHub lists at most 3000)."""
        # 30 a page (the default), not 100: GitHub drops the patches of files past a
        # response's diff size limit, so smaller pages keep more of them.
        return self._paginate(f"repos/{self._repo}/pulls/{number}/files", per_page=30)

    def review_comments(self, number: int) -> list[dict[str, Any]]:
        """Every review (inline) comment on the pull request."""
        return self._paginate(f"repos/{self._repo}/pulls/{number}/comments", per_page=100)

    def create_review(
        self, number: int, commit_id: str, body: str, comments: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """One review with event ``COMMENT`` and inline ``comments`` (all or nothing)."""
        payload = {"commit_id": commit_id, "body": body, "event": "COMMENT", "comments": comments}
        return self._json("POST", f"repos/{self._repo}/pulls/{number}/reviews", payload)

    def issue_comments(self, number: int) -> list[dict[str, Any]]:
        """Every conversation comment on the pull request."""
        return self._paginate(f"repos/{self._repo}/issues/{number}/comments", per_page=100)

    def create_issue_comment(self, number: int, body: str) -> dict[str, Any]:
        """A new conversation comment."""
        return self._json("POST", f"repos/{self._repo}/issues/{number}/comments", {"body": body})

    def update_issue_comment(self, comment_id: int, body: str) -> dict[str, Any]:
        """Replace the body of a conversation comment."""
        path = f"repos/{self._repo}/issues/comments/{comment_id}"
        return self._json("PATCH", path, {"body": body})

    def permission(self, login: str) -> str:
        """``login``'s base role on the repository: ``admin``, ``write``, ``read`` or ``none``
        (``GET /collaborators/{login}/permission``; GitHub maps maintain to write and triage to
        read). A login GitHub does not know (404) has ``none``."""
        try:
            who = quote(login, safe="")  # from an event payload: never a path of its own
            data = self._json("GET", f"repos/{self._repo}/collaborators/{who}/permission")
        except PermissionDenied as exc:
            if exc.status == 404:
                return "none"
            raise
        permission = data.get("permission") if isinstance(data, dict) else None
        return permission if permission in ("admin", "write", "read") else "none"

    def may_write(self, login: str) -> bool:
        """Whether ``login`` has write access (write, maintain or admin) to the repository."""
        return self.permission(login) in ("admin", "write")

    def review_comment(self, comment_id: int) -> dict[str, Any]:
        """``GET /repos/{repo}/pulls/comments/{comment_id}``: one review (inline) comment."""
        return self._json("GET", f"repos/{self._repo}/pulls/comments/{comment_id}")

    def reply_to_review_comment(self, number: int, comment_id: int, body: str) -> dict[str, Any]:
        """A reply in the review thread of the top-level comment ``comment_id`` (GitHub does
        not take replies to replies)."""
        path = f"repos/{self._repo}/pulls/{number}/comments/{comment_id}/replies"
        return self._json("POST", path, {"body": body})

    def artifacts(self, name: str) -> list[dict[str, Any]]:
        """The repository's newest workflow artifacts called ``name`` (one page of 100)."""
        data = self._request(
            "GET", f"repos/{self._repo}/actions/artifacts", None, {"name": name, "per_page": 100}
        ).json()
        found = data.get("artifacts") if isinstance(data, dict) else None
        return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []

    def download_artifact(self, artifact_id: int, max_bytes: int) -> bytes:
        """The zip archive of an artifact, at most ``max_bytes`` long. GitHub answers with a
        redirect to a short-lived URL on another host; that request carries no token."""
        response = self._request(
            "GET", f"repos/{self._repo}/actions/artifacts/{artifact_id}/zip", None, None
        )
        if response.status_code not in (301, 302, 303, 307, 308):
            raise GitHubApiError(
                f"GET artifact {artifact_id}: expected a redirect, got {response.status_code}",
                response.status_code,
            )
        location = httpx2.URL(response.headers.get("location", ""))
        if location.scheme not in ("https", "http") or not location.host:
            raise GitHubApiError(f"GET artifact {artifact_id}: no usable download URL")
        return _download(location, max_bytes, self._http.timeout)

    def review_comment_reactions(self, comment_id: int) -> list[dict[str, Any]]:
        """Every reaction to a review comment (``GET /pulls/comments/{id}/reactions``)."""
        path = f"repos/{self._repo}/pulls/comments/{comment_id}/reactions"
        return self._paginate(path, per_page=100)

    def graphql(self, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """The ``data`` of a GraphQL request. GitHub answers most GraphQL errors with 200 and
        an ``errors`` array: FORBIDDEN becomes :class:`PermissionDenied` (403), NOT_FOUND
        :class:`PermissionDenied` (404), a rate limit (``RATE_LIMIT``, formerly
        ``RATE_LIMITED``) :class:`RateLimited`, retried as in REST; any other
        :class:`GitHubApiError`."""
        payload = {"query": query, "variables": dict(variables)}
        for attempt in self._retrying_posts:
            with attempt:
                return self._graphql_once(payload)
        raise AssertionError("unreachable: tenacity reraises the last error")

    # -- plumbing --------------------------------------------------------------------------

    def _graphql_once(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        response = self._send("POST", self._graphql_url, payload, None)
        try:
            answer = response.json()
        except ValueError:
            raise ServerError(
                "POST graphql: the answer is not JSON", response.status_code
            ) from None
        if not isinstance(answer, dict):
            raise ServerError("POST graphql: the answer is not a JSON object")
        errors = [e for e in answer.get("errors") or [] if isinstance(e, dict)]
        if errors:
            raise _graphql_error(errors, response, self._clock())
        data = answer.get("data")
        if not isinstance(data, dict):
            raise GitHubApiError("POST graphql: no data in the answer")
        return data

    def _json(self, method: str, url: str, payload: Any = None) -> Any:
        return self._request(method, url, payload, None).json()

    def _paginate(self, url: str, per_page: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for page in self._pages(url, per_page):
            items.extend(page)
        return items

    def _pages(self, url: str, per_page: int) -> Iterator[list[dict[str, Any]]]:
        params: dict[str, Any] | None = {"per_page": per_page}
        next_url: str | None = url
        while next_url is not None:
            response = self._request("GET", next_url, None, params)
            data = response.json()
            if not isinstance(data, list):
                raise GitHubApiError(f"GET {next_url} did not return a list", response.status_code)
            yield data
            # The `next` link carries the query (page, per_page) itself. The token goes to
            # the API's scheme, host and port only, whatever a Link header says.
            next_url = response.links.get("next", {}).get("url")
            if next_url is not None and not self._trusted(next_url):
                raise GitHubApiError(
                    f"GET {url}: a `next` link leads away from the GitHub API "
                    f"({self._http.base_url.scheme}://{self._http.base_url.netloc.decode()}): "
                    f"{next_url.split('?')[0]}"
                )
            params = None

    def _trusted(self, url: str) -> bool:
        """Whether ``url`` (relative, or absolute on one of the API's origins) may get the
        token."""
        target = httpx2.URL(url)
        return (not target.scheme and not target.host) or origin(target) in self._origins

    def _request(
        self, method: str, url: str, payload: Any, params: Mapping[str, Any] | None
    ) -> httpx2.Response:
        retrying = self._retrying_posts if method == "POST" else self._retrying
        for attempt in retrying:
            with attempt:
                return self._send(method, url, payload, params)
        raise AssertionError("unreachable: tenacity reraises the last error")

    def _send(
        self, method: str, url: str, payload: Any, params: Mapping[str, Any] | None
    ) -> httpx2.Response:
        shown = f"{method} {url.split('?')[0]}"
        if not self._trusted(url):  # every request carries the token
            raise GitHubApiError(f"{shown}: not the GitHub API's origin; the token is not sent")
        try:
            response = self._http.request(method, url, json=payload, params=params)
        except httpx2.TransportError as exc:
            raise ServerError(f"{shown}: no answer from the GitHub API ({exc})") from exc
        status = response.status_code
        if status < 400:
            return response
        message = f"{shown} failed with {status}: {_message(response)}"
        wait = rate_limit_wait(response, self._clock())
        if wait is not None:
            raise RateLimited(message, status, wait)
        if status in (401, 403, 404):
            raise PermissionDenied(message, status)
        if status == 422:
            raise Unprocessable(message, status)
        if status >= 500:
            raise ServerError(message, status)
        raise GitHubApiError(message, status)
