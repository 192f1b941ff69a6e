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
PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target"})


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
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GitHubEventError(
                f"the pull request payload lacks {exc}: is this a `pull_request` event?"
            ) from None


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
            "(see the README), or pass --pr NUMBER."
        )
    return PullRequest.from_payload(pull, repository)
