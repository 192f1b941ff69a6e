"""Fake GitHub REST API: the endpoints orch-review uses, on 127.0.0.1, with GitHub's rules.

Enforced as GitHub does: a review whose comments name a line outside the diff (right side,
inside a hunk; ``start_line`` before ``line`` in the same hunk) fails whole with 422; lists
are paginated with ``Link`` headers (``page_size`` caps a page, small in tests); a read-only
token may read but gets 403 on every write; an unknown token gets 401; a conversation comment
can be edited only by its author, except by a person with write access (GitHub's "Managing
disruptive comments": anyone with write access can edit comments on issues and pull
requests); an installation token, such as Actions' ``GITHUB_TOKEN``, is refused with 403;
``GET /user`` answers user tokens and refuses installation tokens with 403. Every comment
and review carries the ``user`` (``login``, ``type``) the token acts as. Faults: rate limits
answered with 403/429 and ``retry-after`` or ``x-ratelimit-reset``. Every request is
recorded::

    with FakeGitHubAPI(page_size=2) as gh:
        gh.add_pull(1, base_sha=..., head_sha=..., files=files_from_git(repo, base, head))
        env["GITHUB_API_URL"] = gh.base_url
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, unquote, urlsplit

from tests.fakes.http_server import Exchange, LocalHTTPServer

WRITE_TOKEN = "ghs_write_token"
READ_TOKEN = "ghs_read_only_token"
MAINTAINER_TOKEN = "ghp_maintainer_token"  # a personal access token of a maintainer
BOT = {"login": "github-actions[bot]", "type": "Bot"}
MAINTAINER = {"login": "octo-maintainer", "type": "User"}
DOCS = "https://docs.github.com/rest"
Answer = tuple[int, Any, dict[str, str]]
Route = Callable[["FakeGitHubAPI", str, str, str, Any, dict[str, str]], "Answer | None"]
#: ``handler(fake, token, body)`` for ``POST`` to the GraphQL endpoint.
GraphQLRoute = Callable[["FakeGitHubAPI", str, Any], "Answer"]
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


@dataclass(frozen=True)
class Recorded:
    """One request as received, and the status it got."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int = 0


@dataclass
class RateLimit:
    """A scheduled rate-limit (or, with ``message``, server error) answer for the next
    ``times`` requests."""

    times: int = 1
    status: int = 403
    retry_after: str | None = "0"
    reset_in: float | None = None  # x-ratelimit-remaining: 0 and a reset this far ahead
    message: str = "You have exceeded a secondary rate limit. Please wait and retry."
    hits: int = 0


@dataclass
class FakePull:
    """One pull request: its commits, files (with patches) and comments."""

    number: int
    base_sha: str
    head_sha: str
    base_ref: str
    head_repo: str
    files: list[dict[str, Any]]
    commits: set[str] = field(default_factory=set)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    issue_comments: list[dict[str, Any]] = field(default_factory=list)
    # "Get a pull request": ``title``, and ``body`` (null when the description is empty).
    title: str = "A pull request"
    body: str | None = None

    def hunks(self, path: str) -> list[tuple[int, int]] | None:
        """Right-side (first, last) lines of each hunk, from the hunk headers' counts."""
        for entry in self.files:
            if entry["filename"] == path and entry.get("patch"):
                ranges = []
                for match in _HUNK.finditer(entry["patch"]):
                    start, count = int(match.group(1)), int(match.group(2) or "1")
                    if count:
                        ranges.append((start, start + count - 1))
                return ranges
        return None


def files_from_git(repo: Path, base: str, head: str) -> list[dict[str, Any]]:
    """What ``GET /pulls/{n}/files`` returns for ``base...head`` of a real repository."""
    out = subprocess.run(
        ["git", "diff", "--no-color", "-M", f"{base}...{head}"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    files = []
    for section in re.split(r"^diff --git ", out, flags=re.MULTILINE)[1:]:
        header, _, rest = section.partition("\n")
        old = new = header.split(" b/", 1)[1]
        status = "modified"
        if "\nnew file mode" in "\n" + rest:
            status = "added"
        elif "\ndeleted file mode" in "\n" + rest:
            status = "removed"
        renamed = re.search(r"^rename from (.+)$", rest, re.MULTILINE)
        if renamed:
            status, old = "renamed", renamed.group(1)
        at = rest.find("\n@@")
        patch = rest[at + 1 :].rstrip("\n") if at >= 0 else None
        entry: dict[str, Any] = {"filename": new, "status": status}
        if status == "renamed":
            entry["previous_filename"] = old
        if patch is not None:
            entry["patch"] = patch
            lines = patch.splitlines()
            entry["additions"] = sum(1 for x in lines if x.startswith("+"))
            entry["deletions"] = sum(1 for x in lines if x.startswith("-"))
        files.append(entry)
    return files


class FakeGitHubAPI:
    """The fake server; see the module docstring."""

    def __init__(
        self, repository: str = "octo/demo", page_size: int = 100, prefix: str = ""
    ) -> None:
        self.repository = repository
        self.page_size = page_size
        self.prefix = prefix.rstrip("/")
        self.tokens = {WRITE_TOKEN: "write", READ_TOKEN: "read", MAINTAINER_TOKEN: "write"}
        #: Who each token acts as; tokens starting "ghs_" are installation tokens.
        self.identities = {WRITE_TOKEN: BOT, READ_TOKEN: BOT, MAINTAINER_TOKEN: MAINTAINER}
        self.pulls: dict[int, FakePull] = {}
        #: Each login's base role ("admin", "write", "read"); anyone else has "read" on this
        #: public repository, and a login GitHub does not know is ``unknown_logins``.
        self.roles: dict[str, str] = {MAINTAINER["login"]: "admin", BOT["login"]: "write"}
        self.unknown_logins: set[str] = set()
        #: More routes: ``handler(fake, method, path under /repos/{repo}, query, body, user)``
        #: returns a (status, payload, headers) answer or None to pass. Extensions of this
        #: fake register here, so each family of endpoints can live in its own module.
        self.routes: list[Route] = []
        #: The GraphQL endpoint (``graphql_url``), when an extension installs one.
        self.graphql: GraphQLRoute | None = None
        #: Tokens whose holder has ``contents: write`` on the repository (a maintainer's
        #: token; an installation token only when the workflow grants it).
        self.contents_write: set[str] = {MAINTAINER_TOKEN}
        #: (path, line) pairs refused with 422 although in the diff (e.g. the head moved).
        self.refuse_lines: set[tuple[str, int]] = set()
        self.requests: list[Recorded] = []
        self._rate_limits: list[RateLimit] = []
        self._ids = itertools.count(1000)
        self._lock = threading.RLock()
        self._http = LocalHTTPServer(self._serve, name="fake-github-api")

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> Self:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    @property
    def base_url(self) -> str:
        """What ``GITHUB_API_URL`` is set to."""
        return self._http.base_url + self.prefix

    @property
    def graphql_path(self) -> str:
        """GraphQL's path: ``/graphql``, or ``/api/graphql`` next to GHES's ``/api/v3``."""
        if self.prefix.endswith("/v3"):
            return self.prefix.removesuffix("/v3") + "/graphql"
        return self.prefix + "/graphql"

    @property
    def graphql_url(self) -> str:
        """What ``GITHUB_GRAPHQL_URL`` is set to."""
        return self._http.base_url + self.graphql_path

    # -- state -------------------------------------------------------------------------------

    def add_pull(
        self,
        number: int,
        *,
        base_sha: str,
        head_sha: str,
        files: list[dict[str, Any]],
        base_ref: str = "main",
        head_repo: str | None = None,
    ) -> FakePull:
        """Open (or push to) pull request ``number``; comments of an earlier push are kept."""
        with self._lock:
            pull = self.pulls.get(number)
            if pull is None:
                pull = FakePull(
                    number, base_sha, head_sha, base_ref, head_repo or self.repository, files
                )
                self.pulls[number] = pull
            pull.base_sha, pull.head_sha, pull.files = base_sha, head_sha, files
            pull.commits.add(head_sha)
            return pull

    def pull_json(self, number: int) -> dict[str, Any]:
        """The pull request object, as in ``GET /pulls/{n}`` and in event payloads."""
        pull = self.pulls[number]
        owner = self.repository.split("/")[0]
        return {
            "number": number,
            "draft": False,
            "state": "open",
            "html_url": f"https://github.test/{self.repository}/pull/{number}",
            "title": pull.title,
            "body": pull.body,
            "base": {
                "ref": pull.base_ref,
                "sha": pull.base_sha,
                "repo": {"full_name": self.repository},
            },
            "head": {
                "ref": "feature",
                "sha": pull.head_sha,
                "repo": {"full_name": pull.head_repo},
                "user": {"login": owner},
            },
        }

    def rate_limit(self, **kwargs: Any) -> RateLimit:
        """Answer the next request(s) with a rate limit; see :class:`RateLimit`."""
        limit = RateLimit(**kwargs)
        with self._lock:
            self._rate_limits.append(limit)
        return limit

    def server_error(self, times: int = 1, status: int = 502) -> RateLimit:
        """Answer the next request(s) with a server error."""
        return self.rate_limit(times=times, status=status, retry_after=None, message="Bad Gateway")

    def writes(self) -> list[Recorded]:
        """Recorded POST and PATCH requests."""
        return [r for r in self.requests if r.method in ("POST", "PATCH")]

    # -- serving -----------------------------------------------------------------------------

    def _serve(self, exchange: Exchange) -> None:
        raw = exchange.read_body()
        split = urlsplit(exchange.path)
        body = json.loads(raw) if raw else None
        path = split.path
        status, payload, headers = 404, {"message": "Not Found"}, dict[str, str]()
        try:
            with self._lock:
                if path == self.graphql_path:
                    status, payload, headers = self._route(
                        exchange, exchange.command, "/graphql", split.query, body
                    )
                elif self.prefix and not path.startswith(self.prefix + "/"):
                    status, payload, headers = 404, {"message": "Not Found"}, {}
                else:
                    status, payload, headers = self._route(
                        exchange, exchange.command, path[len(self.prefix) :], split.query, body
                    )
        finally:
            with self._lock:
                self.requests.append(
                    Recorded(
                        exchange.command,
                        path,
                        parse_qs(split.query),
                        {k.lower(): v for k, v in exchange.headers.items()},
                        body,
                        status,
                    )
                )
        exchange.send_json(status, payload, headers)

    def _route(
        self, exchange: Exchange, method: str, path: str, query: str, body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        limited = self._take_rate_limit()
        if limited is not None:
            return limited
        auth = exchange.headers.get("authorization", "")
        token = auth.split(" ", 1)[1] if " " in auth else ""
        access = self.tokens.get(token)
        if access is None:
            return 401, {"message": "Bad credentials", "documentation_url": DOCS}, {}
        if path == "/graphql" and method == "POST" and self.graphql is not None:
            return self.graphql(self, token, body)  # read-only tokens may query: it decides
        if method != "GET" and access != "write":
            return 403, {"message": "Resource not accessible by integration"}, {}
        user = self.identities[token]
        if (method, path) == ("GET", "/user"):
            if token.startswith("ghs_"):
                documentation = f"{DOCS}/users/users#get-the-authenticated-user"
                refused = {"message": "Resource not accessible by integration", "status": "403"}
                return 403, {**refused, "documentation_url": documentation}, {}
            return 200, {**user, "id": 4242}, {}
        base = f"/repos/{self.repository}"
        if not path.startswith(base + "/"):
            return 404, {"message": "Not Found"}, {}
        rest = path[len(base) :]
        if (m := re.fullmatch(r"/collaborators/([^/]+)/permission", rest)) and method == "GET":
            return self._permission(unquote(m.group(1)))
        for handler in self.routes:
            answer = handler(self, method, rest, query, body, user)
            if answer is not None:
                return answer
        if (m := re.fullmatch(r"/issues/comments/(\d+)", rest)) and method == "PATCH":
            return self._edit_comment(int(m.group(1)), body, token)
        m = re.fullmatch(r"/(pulls|issues)/(\d+)(/\w+)?", rest)
        pull = self.pulls.get(int(m.group(2))) if m else None
        if m is None or pull is None:
            return 404, {"message": "Not Found"}, {}
        route = (method, m.group(1), m.group(3))
        if route == ("GET", "pulls", None):
            return 200, self.pull_json(pull.number), {}
        if route == ("GET", "pulls", "/files"):
            return self._page(path, query, pull.files)
        if route == ("GET", "pulls", "/comments"):
            return self._page(path, query, pull.review_comments)
        if route == ("POST", "pulls", "/reviews"):
            return self._create_review(pull, body, user)
        if route == ("GET", "issues", "/comments"):
            return self._page(path, query, pull.issue_comments)
        if route == ("POST", "issues", "/comments"):
            comment = self._comment(pull, str(body["body"]), user=user)
            return 201, comment, {}
        return 404, {"message": "Not Found"}, {}

    def _permission(self, login: str) -> tuple[int, Any, dict[str, str]]:
        # docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user
        if login in self.unknown_logins:
            return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
        role = self.roles.get(login, "read")
        legacy = {"maintain": "write", "triage": "read"}.get(role, role)
        user = {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"}
        return 200, {"permission": legacy, "role_name": role, "user": user}, {}

    def _take_rate_limit(self) -> tuple[int, Any, dict[str, str]] | None:
        for limit in self._rate_limits:
            if limit.hits < limit.times:
                limit.hits += 1
                headers = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4000"}
                if limit.retry_after is not None:
                    headers["retry-after"] = limit.retry_after
                if limit.reset_in is not None:
                    headers["x-ratelimit-remaining"] = "0"
                    headers["x-ratelimit-reset"] = str(int(time.time() + limit.reset_in))
                return limit.status, {"message": limit.message, "documentation_url": DOCS}, headers
        return None

    def _page(
        self, path: str, query: str, items: list[dict[str, Any]]
    ) -> tuple[int, Any, dict[str, str]]:
        params = parse_qs(query)
        per_page = min(int(params.get("per_page", ["30"])[0]), 100, self.page_size)
        page = int(params.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        url = f"{self.base_url}{path}?per_page={per_page}&page="
        links = []
        if page < last:
            links += [f'<{url}{page + 1}>; rel="next"', f'<{url}{last}>; rel="last"']
        if page > 1:
            links += [f'<{url}{page - 1}>; rel="prev"', f'<{url}1>; rel="first"']
        return 200, chunk, {"link": ", ".join(links)} if links else {}

    def _create_review(
        self, pull: FakePull, body: Any, user: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        if body.get("commit_id") not in pull.commits:
            return _unprocessable("commit_id is not part of the pull request")
        event = body.get("event")
        if event in ("COMMENT", "REQUEST_CHANGES") and not body.get("body"):
            return _unprocessable(f"Body is required for {event} reviews")
        for comment in body.get("comments") or []:
            problem = self._comment_problem(pull, comment)
            if problem:
                return _unprocessable(problem)
        review_id = next(self._ids)
        review = {
            "id": review_id,
            "body": body.get("body"),
            "state": "COMMENTED" if event == "COMMENT" else "PENDING",
            "commit_id": body["commit_id"],
            "user": user,
        }
        pull.reviews.append(review)
        for comment in body.get("comments") or []:
            comment_id = next(self._ids)
            pull.review_comments.append(
                {
                    "id": comment_id,
                    "pull_request_review_id": review_id,
                    "path": comment["path"],
                    "line": comment["line"],
                    "original_line": comment["line"],
                    "start_line": comment.get("start_line"),
                    "side": comment.get("side", "RIGHT"),
                    "start_side": comment.get("start_side"),
                    "commit_id": body["commit_id"],
                    "body": comment["body"],
                    "user": user,
                    "html_url": f"https://github.test/{self.repository}/pull/{pull.number}"
                    f"#discussion_r{comment_id}",
                }
            )
        return 200, review, {}

    def _comment_problem(self, pull: FakePull, comment: dict[str, Any]) -> str | None:
        if "position" in comment:
            return "this fake does not accept the deprecated `position`"
        hunks = pull.hunks(comment["path"])
        line = comment.get("line")
        if hunks is None or not isinstance(line, int):
            return "Pull request review thread path is invalid"
        if comment.get("side", "RIGHT") != "RIGHT" or (comment["path"], line) in self.refuse_lines:
            return "Line could not be resolved"
        hunk = next((h for h in hunks if h[0] <= line <= h[1]), None)
        if hunk is None:
            return "Pull request review thread line must be part of the diff"
        start = comment.get("start_line")
        if start is not None:
            if not isinstance(start, int) or start >= line:
                return "start_line must precede line"
            if comment.get("start_side", "RIGHT") != "RIGHT" or not hunk[0] <= start <= hunk[1]:
                return "Pull request review thread start line must be part of the same hunk"
        return None

    def _comment(self, pull: FakePull, body: str, user: dict[str, str]) -> dict[str, Any]:
        comment_id = next(self._ids)
        comment = {
            "id": comment_id,
            "body": body,
            "user": user,
            "html_url": f"https://github.test/{self.repository}/pull/{pull.number}"
            f"#issuecomment-{comment_id}",
        }
        pull.issue_comments.append(comment)
        return comment

    def add_issue_comment(self, number: int, body: str, login: str = "someone") -> None:
        """A conversation comment written by another user (the bot may not edit it)."""
        with self._lock:
            self._comment(self.pulls[number], body, {"login": login, "type": "User"})

    def add_review_comment(
        self, number: int, body: str, path: str, line: int, login: str = "someone"
    ) -> None:
        """An inline comment written by another user on ``path:line``."""
        with self._lock:
            pull = self.pulls[number]
            comment_id = next(self._ids)
            pull.review_comments.append(
                {
                    "id": comment_id,
                    "path": path,
                    "line": line,
                    "original_line": line,
                    "side": "RIGHT",
                    "commit_id": pull.head_sha,
                    "body": body,
                    "user": {"login": login, "type": "User"},
                    "html_url": f"https://github.test/{self.repository}/pull/{number}"
                    f"#discussion_r{comment_id}",
                }
            )

    def _edit_comment(
        self, comment_id: int, body: Any, token: str
    ) -> tuple[int, Any, dict[str, str]]:
        user = self.identities[token]
        # docs.github.com "Managing disruptive comments": people with write access may edit
        # others' comments; an app's installation token edits only what it wrote.
        may_edit_others = user is MAINTAINER
        for pull in self.pulls.values():
            for comment in pull.issue_comments:
                if comment["id"] == comment_id:
                    if comment["user"] != user and not may_edit_others:
                        return 403, {"message": "Resource not accessible by integration"}, {}
                    comment["body"] = str(body["body"])
                    return 200, comment, {}
        return 404, {"message": "Not Found"}, {}


def _unprocessable(error: str) -> tuple[int, Any, dict[str, str]]:
    body = {
        "message": "Unprocessable Entity",
        "errors": [error],
        "documentation_url": f"{DOCS}/pulls/reviews#create-a-review-for-a-pull-request",
        "status": "422",
    }
    return 422, body, {}
