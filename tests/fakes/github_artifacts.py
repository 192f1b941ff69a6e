"""Workflow artifacts on the fake GitHub API, and the storage host their downloads go to.

As GitHub documents them ("REST API endpoints for GitHub Actions artifacts"):
``GET /repos/{o}/{r}/actions/artifacts?name=`` lists ``{"total_count", "artifacts"}``, newest
first, each with ``id``, ``name``, ``size_in_bytes``, ``expired``, ``created_at`` and its
``workflow_run`` (``id``, ``repository_id``, ``head_repository_id``, ``head_branch``,
``head_sha``); a token without ``actions: read`` gets 403. ``GET .../artifacts/{id}/zip``
answers 302 with a ``Location`` on another host that expires after a minute (here: works
once); an expired artifact is 410. The storage host serves the zip and refuses a request
that carries an ``Authorization`` header, as a pre-signed URL's host does::

    with ArtifactStore(gh) as store:
        store.add("orch-review-pr-7", zip_bytes, head_sha=head)
"""

from __future__ import annotations

import io
import re
import secrets
import threading
import zipfile
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from tests.fakes.github_api import DOCS, Answer, FakeGitHubAPI
from tests.fakes.http_server import Exchange, LocalHTTPServer

REPOSITORY_ID = 4_200
FORK_ID = 4_201
ARTIFACT_DOCS = f"{DOCS}/actions/artifacts"


def zipped(members: dict[str, bytes]) -> bytes:
    """A zip archive of ``members`` (what upload-artifact makes of a folder)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


class ArtifactStore:
    """The artifacts of the fake's repository; see the module docstring."""

    def __init__(self, fake: FakeGitHubAPI) -> None:
        self.fake = fake
        self.artifacts: list[dict[str, Any]] = []
        self.archives: dict[int, bytes] = {}
        #: Whether the token may read Actions (the job's `actions: read`).
        self.actions_read = True
        #: Headers of every request the storage host received.
        self.downloads: list[dict[str, str]] = []
        self._signed: dict[str, int] = {}
        self._lock = threading.Lock()
        self._ids = iter(range(9_000, 10_000))
        self._storage = LocalHTTPServer(self._serve, name="fake-artifact-storage")
        fake.routes.append(self._route)

    def __enter__(self) -> Self:
        self._storage.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._storage.stop()

    def add(
        self,
        name: str,
        archive: bytes,
        *,
        head_sha: str,
        fork: bool = False,
        expired: bool = False,
        created_at: str = "2026-11-30T12:00:00Z",
    ) -> dict[str, Any]:
        """An artifact uploaded by a run for ``head_sha`` (of a fork's run with ``fork``)."""
        with self._lock:
            artifact_id = next(self._ids)
            artifact = {
                "id": artifact_id,
                "node_id": f"MDg6QXJ0aWZhY3Q{artifact_id}",
                "name": name,
                "size_in_bytes": len(archive),
                "url": f"{self.fake.base_url}/repos/{self.fake.repository}/actions/artifacts/"
                f"{artifact_id}",
                "archive_download_url": f"{self.fake.base_url}/repos/{self.fake.repository}/"
                f"actions/artifacts/{artifact_id}/zip",
                "expired": expired,
                "created_at": created_at,
                "updated_at": created_at,
                "expires_at": "2027-02-28T12:00:00Z",
                "workflow_run": {
                    "id": artifact_id * 10,
                    "repository_id": REPOSITORY_ID,
                    "head_repository_id": FORK_ID if fork else REPOSITORY_ID,
                    "head_branch": "feature",
                    "head_sha": head_sha,
                },
            }
            self.artifacts.append(artifact)
            self.archives[artifact_id] = archive
            return artifact

    def _route(
        self,
        fake: FakeGitHubAPI,
        method: str,
        rest: str,
        query: str,
        body: Any,
        user: dict[str, str],
    ) -> Answer | None:
        if method != "GET" or not rest.startswith("/actions/artifacts"):
            return None
        if not self.actions_read:
            return 403, {"message": "Resource not accessible by integration"}, {}
        if rest == "/actions/artifacts":
            params = parse_qs(query)
            name = params.get("name", [None])[0]
            per_page = min(int(params.get("per_page", ["30"])[0]), 100)
            found = [a for a in self.artifacts if name is None or a["name"] == name]
            found.sort(key=lambda a: (a["created_at"], a["id"]), reverse=True)
            return 200, {"total_count": len(found), "artifacts": found[:per_page]}, {}
        m = re.fullmatch(r"/actions/artifacts/(\d+)/(\w+)", rest)
        artifact = next((a for a in self.artifacts if m and a["id"] == int(m.group(1))), None)
        if m is None or artifact is None or m.group(2) != "zip":
            return 404, {"message": "Not Found", "documentation_url": ARTIFACT_DOCS}, {}
        if artifact["expired"]:
            return 410, {"message": "Artifact has expired", "documentation_url": ARTIFACT_DOCS}, {}
        signature = secrets.token_hex(8)
        with self._lock:
            self._signed[signature] = artifact["id"]
        location = f"{self._storage.base_url}/blobs/{artifact['id']}.zip?sig={signature}"
        return 302, {}, {"location": location}

    def _serve(self, exchange: Exchange) -> None:
        headers = {k.lower(): v for k, v in exchange.headers.items()}
        with self._lock:
            self.downloads.append(headers)
            signature = parse_qs(urlsplit(exchange.path).query).get("sig", [""])[0]
            artifact_id = self._signed.pop(signature, None)
        if "authorization" in headers:
            refused = b"<Error><Code>InvalidAuthenticationInfo</Code></Error>"
            exchange.begin(400, "application/xml", {"content-length": str(len(refused))})
            exchange.wfile.write(refused)
            return
        if artifact_id is None:
            refused = b"<Error><Code>AuthenticationFailed</Code></Error>"
            exchange.begin(403, "application/xml", {"content-length": str(len(refused))})
            exchange.wfile.write(refused)
            return
        data = self.archives[artifact_id]
        exchange.begin(200, "application/zip", {"content-length": str(len(data))})
        exchange.wfile.write(data)
