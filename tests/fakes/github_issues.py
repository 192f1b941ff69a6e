"""The fake GitHub's issues, as "Get an issue" documents them
(docs.github.com/rest/issues/issues#get-an-issue): ``GET /repos/{owner}/{repo}/issues/{n}``
answers 200 with the issue and its ``labels`` (objects with a ``name``), 404 for an issue
the token cannot see or that does not exist, and 410 for a deleted one. The issue's
``title`` and ``body`` (markdown, null when empty) are its own, or made up."""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.github_api import DOCS, FakeGitHubAPI


class IssueTracker:
    """Issues of the fake's repository: ``add(n, labels)``, ``deleted``, ``hidden``."""

    def __init__(self, fake: FakeGitHubAPI) -> None:
        self.issues: dict[int, list[str]] = {}
        self.texts: dict[int, tuple[str, str | None]] = {}
        self.deleted: set[int] = set()
        self.asked: list[int] = []
        fake.routes.append(self._route)

    def add(
        self, number: int, *labels: str, title: str | None = None, body: str | None = None
    ) -> None:
        self.issues[number] = list(labels)
        if title is not None or body is not None:
            self.texts[number] = (title or f"Issue {number}", body)

    def _route(
        self, fake: FakeGitHubAPI, method: str, rest: str, query: str, body: Any, user: Any
    ) -> tuple[int, Any, dict[str, str]] | None:
        match = re.fullmatch(r"/issues/(\d+)", rest)
        if match is None or method != "GET":
            return None
        number = int(match.group(1))
        self.asked.append(number)
        if number in self.deleted:
            return 410, {"message": "This issue was deleted", "documentation_url": DOCS}, {}
        if number not in self.issues:
            return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
        labels = [
            {"id": 100 + n, "name": name, "color": "d73a4a", "default": name == "bug"}
            for n, name in enumerate(self.issues[number])
        ]
        title, text = self.texts.get(number, (f"Issue {number}", None))
        issue = {"number": number, "title": title, "body": text, "state": "closed"}
        return 200, {**issue, "labels": labels}, {}
