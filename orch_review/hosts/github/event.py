"""The pull request a GitHub Actions run is about, read from the environment Actions sets.

``GITHUB_EVENT_PATH`` holds the webhook payload of the event that started the workflow;
``GITHUB_REPOSITORY``, ``GITHUB_API_URL``, ``GITHUB_GRAPHQL_URL`` and ``GITHUB_SERVER_URL``
say where it lives (on GitHub Enterprise Server the API is ``https://HOST/api/v3`` and
GraphQL ``https://HOST/api/graphql``, not under the REST base). The token comes from
``GITHUB_TOKEN`` (or ``GH_TOKEN``). Everything is read once, into a frozen record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orch_review.errors import OrchReviewError

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_SERVER_URL = "https://github.com"


class GitHubEventError(OrchReviewError):
    """The environment does not describe a pull request (exit code 2)."""


@dataclass(frozen=True, slots=True)
class GitHubContext:
    """Where the repository lives and how to authenticate; the token is kept out of repr."""

    repository: str  # "owner/name"
    api_url: str = DEFAULT_API_URL
    server_url: str = DEFAULT_SERVER_URL
    token: str | None = field(default=None, repr=False)
    graphql_url: str | None = None  # None: next to api_url (see api.default_graphql_url)

    @classmethod
    def from_env(cls, env: Mapping[str, str], repository: str | None = None) -> GitHubContext:
        """Read ``GITHUB_REPOSITORY``, ``GITHUB_API_URL``, ``GITHUB_GRAPHQL_URL``,
        ``GITHUB_SERVER_URL`` and the token."""
        repo = repository or env.get("GITHUB_REPOSITORY") or ""
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise GitHubEventError(
                "GITHUB_REPOSITORY is not set to `owner/name`: run in GitHub Actions, or pass "
                "--repo owner/name."
            )
        return cls(
            repository=repo,
            api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            server_url=(env.get("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL).rstrip("/"),
            token=env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or None,
            graphql_url=(env.get("GITHUB_GRAPHQL_URL") or "").rstrip("/") or None,
        )


@dataclass(frozen=True, slots=True)
class PullRequest:
    """The pull request under review: its number and the two commits that define its diff."""

    number: int
    base_sha: str
    head_sha: str
    base_ref: str
    head_repository: str | None  # "owner/name" of the head; None when the fork was deleted
    base_repository: str
    draft: bool = False
    # What the author says it does (hostile text, bounded and checked by the intent concern).
    title: str = field(default="", repr=False)
    body: str = field(default="", repr=False)

    @property
    def from_fork(self) -> bool:
        """True when the head lives in another repository (its token is read-only there)."""
        return self.head_repository != self.base_repository

    @classmethod
    def from_payload(cls, pull: Mapping[str, Any], repository: str) -> PullRequest:
        """From the ``pull_request`` object of a webhook payload or of ``GET /pulls/N``."""
        try:
            head, base = pull["head"], pull["base"]
            head_repo = head.get("repo") or {}
            return cls(
                number=int(pull["number"]),
                base_sha=str(base["sha"]),
                head_sha=str(head["sha"]),
                base_ref=str(base.get("ref") or ""),
                head_repository=head_repo.get("full_name"),
                base_repository=(base.get("repo") or {}).get("full_name") or repository,
                draft=bool(pull.get("draft", False)),
                title=_text(pull.get("title")),
                body=_text(pull.get("body")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GitHubEventError(
                f"the pull request payload lacks {exc}: is this a `pull_request` event?"
            ) from None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def load_event(env: Mapping[str, str], path: Path | None = None) -> tuple[str, dict[str, Any]]:
    """The event name and payload (``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH`` or ``path``)."""
    name = env.get("GITHUB_EVENT_NAME", "")
    where = path or (Path(env["GITHUB_EVENT_PATH"]) if env.get("GITHUB_EVENT_PATH") else None)
    if where is None:
        raise GitHubEventError(
            "GITHUB_EVENT_PATH is not set: run in a GitHub Actions job started by "
            "`pull_request`, or pass --pr NUMBER with a token."
        )
    try:
        payload = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GitHubEventError(f"the event payload {where} could not be read: {exc}") from None
    if not isinstance(payload, dict):
        raise GitHubEventError(f"the event payload {where} is not a JSON object.")
    return name, payload


def pull_request_from_event(name: str, payload: Mapping[str, Any], repository: str) -> PullRequest:
    """The pull request of a ``pull_request`` (or ``pull_request_target``) event."""
    pull = payload.get("pull_request")
    if not isinstance(pull, Mapping):
        shown = f"`{name}`" if name else "this"
        raise GitHubEventError(
            f"the {shown} event is not about a pull request: run on `pull_request` "
            "(see docs/github-actions.md), or pass --pr NUMBER."
        )
    return PullRequest.from_payload(pull, repository)


COMMENT_EVENTS = frozenset({"issue_comment", "pull_request_review_comment"})


@dataclass(frozen=True, slots=True)
class CommentEvent:
    """A comment on a pull request (``issue_comment`` or ``pull_request_review_comment``).

    ``pull`` is the pull request as the payload gives it: a review comment's payload holds
    it whole, an issue comment's only its number (read it with ``GET /pulls/{n}``).
    ``in_reply_to`` is the thread's top comment for a reply in a review thread.
    """

    event: str
    action: str
    number: int
    comment_id: int
    body: str
    user: Mapping[str, Any] | None
    on_pull_request: bool
    in_review_thread: bool
    in_reply_to: int | None = None
    pull: PullRequest | None = None
    created_at: str = ""

    @property
    def login(self) -> str:
        """The author's login ("" when the payload has none)."""
        return str((self.user or {}).get("login") or "")

    @property
    def thread_top(self) -> int | None:
        """The id of the review thread's top comment, which replies go under."""
        if not self.in_review_thread:
            return None
        return self.in_reply_to or self.comment_id


def comment_from_event(name: str, payload: Mapping[str, Any], repository: str) -> CommentEvent:
    """The comment of an ``issue_comment`` or ``pull_request_review_comment`` payload (see
    GitHub's "Webhook events and payloads"); GitHubEventError when it has none."""
    comment = payload.get("comment")
    if name not in COMMENT_EVENTS or not isinstance(comment, Mapping):
        raise GitHubEventError(f"the `{name}` event carries no comment on a pull request.")
    try:
        user = comment.get("user")
        reply_to = comment.get("in_reply_to_id")
        common: dict[str, Any] = {
            "event": name,
            "action": str(payload.get("action") or ""),
            "comment_id": _positive(comment["id"]),
            "body": str(comment.get("body") or ""),
            "user": user if isinstance(user, Mapping) else None,
            "created_at": str(comment.get("created_at") or ""),
        }
        if name == "issue_comment":
            issue = payload["issue"]
            return CommentEvent(
                number=_positive(issue["number"]),
                on_pull_request=isinstance(issue.get("pull_request"), Mapping),
                in_review_thread=False,
                **common,
            )
        pull = PullRequest.from_payload(payload["pull_request"], repository)
        return CommentEvent(
            number=pull.number,
            on_pull_request=True,
            in_review_thread=True,
            in_reply_to=_positive(reply_to) if reply_to is not None else None,
            pull=pull,
            **common,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise GitHubEventError(f"the `{name}` payload lacks {exc}.") from None


def _positive(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"a positive id (got {value!r})")
    return value
