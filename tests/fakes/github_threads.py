"""Review threads on the fake GitHub API: replies, reactions, and the GraphQL endpoint that
lists threads and resolves them.

Following GitHub's documentation:

- ``POST /repos/{o}/{r}/pulls/{n}/comments/{id}/replies`` (REST "Create a reply for a review
  comment") answers 201 with the new comment (``in_reply_to_id`` set); the id must be a
  top-level review comment of that pull request ("replies to replies are not supported");
  a body is required (422).
- ``GET /repos/{o}/{r}/pulls/comments/{id}`` answers one review comment, or 404.
- ``GET /repos/{o}/{r}/pulls/comments/{id}/reactions`` (REST "List reactions for a pull
  request review comment") lists reaction objects (``id``, ``user``, ``content``,
  ``created_at``), paginated; 404 for an unknown comment.
- GraphQL (``POST /graphql``; ``/api/graphql`` on GHES) answers with HTTP 200 and an
  ``errors`` array for errors (``type`` NOT_FOUND, FORBIDDEN; a validation error has no
  type), ``data`` null where a field failed. ``repository.pullRequest.reviewThreads`` lists
  one thread per top-level review comment, paginated with ``first`` (1 to 100, required)
  and ``after``. ``resolveReviewThread`` and ``unresolveReviewThread`` take
  ``input: {threadId}``. GitHub gates them on ``contents: write``: an Actions
  ``GITHUB_TOKEN`` with only ``pull-requests: write`` sees ``viewerCanResolve: false`` and
  gets FORBIDDEN "Resource not accessible by integration" (github/gh-aw#35726 and the reports
  it links); :attr:`FakeGitHubAPI.contents_write` says which tokens have it. In GraphQL a
  bot's ``login`` has no ``[bot]`` suffix (``github-actions``), and ``__typename`` is Bot.
- A review comment is ``Reactable``: ``reactions(first, after, last, before, content,
  orderBy)`` is a ``ReactionConnection`` (``pageInfo``, ``totalCount``, ``nodes`` of
  ``Reaction``: ``content``, ``createdAt``, ``user``). ``content`` filters by a
  ``ReactionContent`` value (THUMBS_UP, THUMBS_DOWN, LAUGH, HOORAY, CONFUSED, HEART, ROCKET,
  EYES): another value is a validation error, and no data. ``orderBy`` takes
  ``{field: CREATED_AT, direction: ASC|DESC}``. A connection needs ``first`` or ``last`` (1
  to 100). ``Reaction.user`` is a nullable ``User``: a bot is not one, so its reactions come
  with ``user: null``.

The query and mutations are recognised by their GitHub field names, not by orch-review's
operation names. Every mutation is recorded in :attr:`ReviewThreads.mutations`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tests.fakes.github_api import DOCS, Answer, FakeGitHubAPI, FakePull

INTEGRATION = "Resource not accessible by integration"
REACTION_CONTENT = {
    "THUMBS_UP": "+1",
    "THUMBS_DOWN": "-1",
    "LAUGH": "laugh",
    "HOORAY": "hooray",
    "CONFUSED": "confused",
    "HEART": "heart",
    "ROCKET": "rocket",
    "EYES": "eyes",
}


@dataclass
class ReviewThreads:
    """Thread state of a fake: resolved threads, reactions, and the mutations received."""

    fake: FakeGitHubAPI
    resolved: set[int] = field(default_factory=set)  # root comment ids
    reactions: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    mutations: list[tuple[str, int]] = field(default_factory=list)  # (field, root id)

    # -- helpers for tests -----------------------------------------------------------------

    def add_reply(
        self,
        number: int,
        comment_id: int,
        body: str,
        login: str = "someone",
        *,
        bot: bool = False,
        created_at: str = "2026-11-30T10:00:00Z",
    ) -> dict[str, Any]:
        """A reply by ``login`` in the thread of review comment ``comment_id``."""
        kind = "Bot" if bot else "User"
        return add_reply(self.fake, number, comment_id, body, login, kind, created_at)

    def add_reaction(
        self,
        comment_id: int,
        login: str,
        content: str = "-1",
        *,
        bot: bool = False,
        created_at: str = "2026-11-30T11:00:00Z",
    ) -> None:
        """``login`` reacts to review comment ``comment_id`` with ``content`` (REST form)."""
        with self.fake._lock:
            reactions = self.reactions.setdefault(comment_id, [])
            reactions.append(
                {
                    "id": next(self.fake._ids),
                    "node_id": f"REA_{len(reactions)}",
                    "user": {"login": login, "type": "Bot" if bot else "User"},
                    "content": content,
                    "created_at": created_at,
                }
            )

    def thread_of(self, comment_id: int) -> str:
        """The GraphQL node id of the thread that comment ``comment_id`` opened."""
        return f"PRRT_{comment_id}"

    def replies(self, number: int, comment_id: int) -> list[dict[str, Any]]:
        """The replies in the thread of ``comment_id``, oldest first."""
        return thread(self.fake, number, comment_id)

    # -- REST --------------------------------------------------------------------------------

    def route(
        self,
        fake: FakeGitHubAPI,
        method: str,
        rest: str,
        query: str,
        body: Any,
        user: dict[str, str],
    ) -> Answer | None:
        """The REST endpoints of this module (``routes`` handler)."""
        if (m := re.fullmatch(r"/pulls/comments/(\d+)", rest)) and method == "GET":
            found = next(
                (c for p in fake.pulls.values() if (c := _comment(p, int(m.group(1))))), None
            )
            if found is None:
                return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
            return 200, found, {}
        m = re.fullmatch(r"/pulls/(\d+)/comments/(\d+)/replies", rest)
        if m and method == "POST":
            pull = fake.pulls.get(int(m.group(1)))
            root = _comment(pull, int(m.group(2))) if pull else None
            if pull is None or root is None:
                return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
            if "in_reply_to_id" in root:
                return _unprocessable("in_reply_to_id: replies to replies are not supported")
            text = body.get("body") if isinstance(body, dict) else None
            if not isinstance(text, str) or not text:
                return _unprocessable("body is missing")
            return 201, _reply(fake, pull, root, text, user, _now()), {}
        m = re.fullmatch(r"/pulls/comments/(\d+)/reactions", rest)
        if m and method == "GET":
            comment_id = int(m.group(1))
            if not any(_comment(p, comment_id) for p in fake.pulls.values()):
                return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
            path = f"{fake.prefix}/repos/{fake.repository}{rest}"
            return fake._page(path, query, self.reactions.get(comment_id, []))
        return None

    # -- GraphQL -----------------------------------------------------------------------------

    def graphql(self, fake: FakeGitHubAPI, token: str, body: Any) -> Answer:
        """The GraphQL endpoint (``fake.graphql`` handler)."""
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return 400, {"message": "Problems parsing JSON", "documentation_url": DOCS}, {}
        text: str = body["query"]
        variables = body.get("variables") or {}
        if not isinstance(variables, dict):
            return _errors([{"message": "Variables are invalid JSON."}])
        may_write = token in fake.contents_write and fake.tokens.get(token) == "write"
        for name in ("unresolveReviewThread", "resolveReviewThread"):
            if re.search(rf"\b{name}\s*\(", text):
                return self._mutation(name, variables, may_write)
        if re.search(r"\breviewThreads\s*\(", text):
            reactions = re.search(r"\breactions\s*\(([^)]*)\)", text)
            wanted: dict[str, Any] | None = None
            if reactions is not None:
                wanted, problems = _reaction_arguments(reactions.group(1), variables)
                if problems:
                    return _errors(problems)
            return self._threads(variables, may_write, wanted)
        return _errors([{"message": "this fake answers only the review thread operations"}])

    def _threads(
        self, variables: dict[str, Any], may_write: bool, reactions: dict[str, Any] | None
    ) -> Answer:
        problems = _wrong_types(
            variables, {"owner": str, "name": str, "number": int}, {"after": (str, type(None))}
        )
        if problems:
            return _errors(problems)
        first = variables.get("first", 100)
        if not isinstance(first, int) or not 1 <= first <= 100:
            message = "Requesting more than 100 records on the `reviewThreads` connection"
            return _errors([{"type": "EXCESSIVE_PAGINATION", "message": message}])
        if f"{variables['owner']}/{variables['name']}" != self.fake.repository:
            message = (
                f"Could not resolve to a Repository with the name "
                f"'{variables['owner']}/{variables['name']}'."
            )
            return _errors([_not_found(message, ["repository"])], {"repository": None})
        pull = self.fake.pulls.get(variables["number"])
        if pull is None:
            message = (
                f"Could not resolve to a PullRequest with the number of {variables['number']}."
            )
            return _errors(
                [_not_found(message, ["repository", "pullRequest"])],
                {"repository": {"pullRequest": None}},
            )
        roots = [c for c in pull.review_comments if "in_reply_to_id" not in c]
        start = 0
        after = variables.get("after")
        if after is not None:
            m = re.fullmatch(r"cursor:(\d+)", after)
            if m is None:
                return _errors([{"message": f"`{after}` does not appear to be a valid cursor."}])
            start = int(m.group(1))
        size = min(first, self.fake.page_size)
        page = roots[start : start + size]
        end = start + len(page)
        nodes = [self._thread_node(root, may_write, reactions) for root in page]
        threads = {
            "pageInfo": {"hasNextPage": end < len(roots), "endCursor": f"cursor:{end}"},
            "nodes": nodes,
        }
        data = {"repository": {"pullRequest": {"reviewThreads": threads}}}
        return 200, {"data": data}, {}

    def _thread_node(
        self, root: dict[str, Any], may_write: bool, reactions: dict[str, Any] | None
    ) -> dict[str, Any]:
        resolved = root["id"] in self.resolved
        user = root.get("user") or {}
        login = str(user.get("login") or "")
        is_bot = user.get("type") == "Bot"
        author = {"__typename": "Bot" if is_bot else "User", "login": login.removesuffix("[bot]")}
        first = {"databaseId": root["id"], "author": author, "body": root["body"]}
        if reactions is not None:
            first["reactions"] = self._reaction_connection(root["id"], reactions)
        return {
            "id": self.thread_of(root["id"]),
            "isResolved": resolved,
            "isOutdated": False,
            "viewerCanResolve": may_write and not resolved,
            "viewerCanUnresolve": may_write and resolved,
            "path": root.get("path"),
            "comments": {"nodes": [first]},
        }

    def _reaction_connection(self, comment_id: int, wanted: dict[str, Any]) -> dict[str, Any]:
        content = wanted.get("content")
        chosen = [
            r
            for r in self.reactions.get(comment_id, [])
            if content is None or r["content"] == REACTION_CONTENT[content]
        ]
        chosen.sort(key=lambda r: str(r["created_at"]), reverse=wanted["descending"])
        page = chosen[: wanted["first"]] if "first" in wanted else chosen[-wanted["last"] :]
        return {
            "totalCount": len(chosen),
            "pageInfo": {"hasNextPage": len(page) < len(chosen) and "first" in wanted},
            "nodes": [
                {
                    "content": next(k for k, v in REACTION_CONTENT.items() if v == r["content"]),
                    "createdAt": r["created_at"],
                    "user": None  # Reaction.user is a User: a bot is not one
                    if r["user"].get("type") == "Bot"
                    else {"login": r["user"]["login"]},
                }
                for r in page
            ],
        }

    def _mutation(self, name: str, variables: dict[str, Any], may_write: bool) -> Answer:
        thread = variables.get("threadId")
        if not isinstance(thread, str):
            message = f"Variable $threadId of type ID! was provided invalid value: {thread!r}"
            return _errors([{"message": message}])
        m = re.fullmatch(r"PRRT_(\d+)", thread)
        root_id = int(m.group(1)) if m else -1
        if not any(_comment(p, root_id) for p in self.fake.pulls.values()):
            message = f"Could not resolve to a node with the global id of '{thread}'"
            return _errors([_not_found(message, [name])], {name: None})
        if not may_write:
            error = {"type": "FORBIDDEN", "path": [name], "message": INTEGRATION}
            return _errors([error], {name: None})
        self.mutations.append((name, root_id))
        if name == "resolveReviewThread":
            self.resolved.add(root_id)
        else:
            self.resolved.discard(root_id)
        node = {"id": thread, "isResolved": root_id in self.resolved}
        return 200, {"data": {name: {"thread": node}}}, {}


def install(fake: FakeGitHubAPI) -> ReviewThreads:
    """Add replies, reactions and the GraphQL thread operations to ``fake``."""
    threads = ReviewThreads(fake)
    fake.routes.append(threads.route)
    fake.graphql = threads.graphql
    return threads


def add_reply(
    fake: FakeGitHubAPI,
    number: int,
    top_id: int,
    body: str,
    login: str,
    kind: str = "User",
    created_at: str = "2026-11-30T10:00:00Z",
) -> dict[str, Any]:
    """A reply written by ``login`` (a ``kind`` account: User or Bot) in the thread of the
    top-level review comment ``top_id``."""
    with fake._lock:
        pull = fake.pulls[number]
        root = _comment(pull, top_id)
        assert root is not None and "in_reply_to_id" not in root, "reply to a top comment"
        return _reply(fake, pull, root, body, {"login": login, "type": kind}, created_at)


def thread(fake: FakeGitHubAPI, number: int, top_id: int) -> list[dict[str, Any]]:
    """The replies in the thread of ``top_id``, oldest first."""
    return [c for c in fake.pulls[number].review_comments if c.get("in_reply_to_id") == top_id]


def _comment(pull: FakePull | None, comment_id: int) -> dict[str, Any] | None:
    if pull is None:
        return None
    return next((c for c in pull.review_comments if c["id"] == comment_id), None)


def _reply(
    fake: FakeGitHubAPI,
    pull: FakePull,
    root: dict[str, Any],
    body: str,
    user: dict[str, str],
    created_at: str,
) -> dict[str, Any]:
    comment_id = next(fake._ids)
    reply = {
        "id": comment_id,
        "in_reply_to_id": root["id"],
        "pull_request_review_id": next(fake._ids),
        "path": root["path"],
        "line": root.get("line"),
        "original_line": root.get("original_line"),
        "start_line": root.get("start_line"),
        "side": root.get("side", "RIGHT"),
        "commit_id": pull.head_sha,
        "body": body,
        "user": user,
        "created_at": created_at,
        "html_url": f"https://github.test/{fake.repository}/pull/{pull.number}"
        f"#discussion_r{comment_id}",
    }
    pull.review_comments.append(reply)
    return reply


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _reaction_arguments(
    arguments: str, variables: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``reactions`` connection's arguments (literals or ``$variables``), validated as
    GitHub validates them."""
    found: dict[str, Any] = {"descending": bool(re.search(r"direction:\s*DESC\b", arguments))}
    for name in ("first", "last", "content"):
        m = re.search(rf"\b{name}:\s*(\$?\w+)", arguments)
        if m is None:
            continue
        token = m.group(1)
        if token.startswith("$"):
            value = variables.get(token[1:])
            if name == "content" and value not in REACTION_CONTENT:
                message = f"Variable {token} of type ReactionContent! was provided invalid value"
                return found, [{"message": message}]
        else:
            value = int(token) if token.isdigit() else token
            if name == "content" and value not in REACTION_CONTENT:
                message = (
                    f"Argument 'content' on Field 'reactions' has an invalid value ({value})."
                    " Expected type 'ReactionContent'."
                )
                return found, [{"message": message}]
        found[name] = value
    limit = found.get("first", found.get("last"))
    if not isinstance(limit, int) or isinstance(limit, bool):
        message = (
            "You must provide a `first` or `last` value to properly paginate the "
            "`reactions` connection."
        )
        return found, [{"message": message}]
    if not 1 <= limit <= 100:
        message = (
            f"Requesting {limit} records on the `reactions` connection exceeds the "
            "`first` limit of 100 records."
        )
        return found, [{"type": "EXCESSIVE_PAGINATION", "message": message}]
    return found, []


def _not_found(message: str, path: list[str]) -> dict[str, Any]:
    return {"type": "NOT_FOUND", "path": path, "message": message}


def _errors(errors: list[dict[str, Any]], data: dict[str, Any] | None = None) -> Answer:
    located = [{"locations": [{"line": 1, "column": 1}], **e} for e in errors]
    payload: dict[str, Any] = {"errors": located}
    if data is not None:
        payload["data"] = data
    return 200, payload, {}


def _wrong_types(
    variables: dict[str, Any],
    required: dict[str, type],
    optional: dict[str, tuple[type, ...]],
) -> list[dict[str, Any]]:
    problems = []
    for name, kind in required.items():
        value = variables.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            problems.append(
                {"message": f"Variable ${name} of type {kind.__name__} was provided invalid value"}
            )
    for name, kinds in optional.items():
        if name in variables and not isinstance(variables[name], kinds):
            problems.append({"message": f"Variable ${name} was provided invalid value"})
    return problems


def _unprocessable(error: str) -> Answer:
    body = {"message": "Validation Failed", "errors": [error], "status": "422"}
    return 422, {**body, "documentation_url": DOCS}, {}
