"""The review's conversation, kept where a later comment's run can reach it.

A ``pull_request`` run reviews and writes :data:`MEMBER` (the main agent's conversation and
the findings); the Action uploads it as the workflow artifact ``orch-review-pr-<N>``. A run
started by a comment (``issue_comment`` runs on the default branch and cannot restore the
pull request's Actions cache) lists the artifacts of that name through the REST API and
downloads the newest usable one.

Anyone who can run a workflow with the pull request's code can upload an artifact under
that name, so its content is hostile data: only artifacts of runs of this repository (not
a fork's) for the pull request's current head are considered; the archive and the member
are bounded in size; only the expected member is read, never extracted to a path; and the
content is validated strictly. It cannot change what is read: the conversation must be
about the pull request's head commit, whose objects git fetches from GitHub.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orch_review.findings.codec import finding_from_json, finding_to_json
from orch_review.findings.records import Finding
from orch_review.hosts.github.api import GitHubClient
from orch_review.hosts.http_errors import HostApiError

FORMAT = "orch-review-conversation"
VERSION = 1
MEMBER = "orch-review-conversation.json"
MAX_ARCHIVE_BYTES = 32 * 1024 * 1024
MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_FINDINGS = 2000
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_ROLES = frozenset({"user", "assistant", "system"})


class ArtifactUnusable(Exception):
    """No usable conversation: the reason says why, in one phrase for the reply."""


def artifact_name(number: int) -> str:
    """The artifact that holds pull request ``number``'s review conversation."""
    return f"orch-review-pr-{number}"


@dataclass(frozen=True)
class StoredReview:
    """What a review run keeps for comments: its conversation and its findings."""

    repository: str
    number: int
    head_sha: str
    conversation: Mapping[str, Any]
    findings: tuple[Finding, ...]

    def finding(self, fingerprint: str) -> Finding | None:
        """The finding with ``fingerprint``, if the review reported it."""
        return next((f for f in self.findings if f.fingerprint == fingerprint), None)

    def to_json(self) -> dict[str, Any]:
        """The member's content."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "repository": self.repository,
            "pull_request": self.number,
            "head_sha": self.head_sha,
            "conversation": dict(self.conversation),
            "findings": [finding_to_json(f) for f in self.findings],
        }


def write(path: Path, stored: StoredReview) -> None:
    """Write the member to ``path`` (the Action uploads its folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(stored.to_json(), sort_keys=True, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")


def parse(raw: bytes, repository: str, number: int, head_sha: str) -> StoredReview:
    """The member's content validated for pull request ``number`` at ``head_sha``."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ArtifactUnusable("the stored conversation is not JSON") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ArtifactUnusable("the artifact holds no orch-review conversation")
    if data.get("version") != VERSION:
        raise ArtifactUnusable(f"the stored conversation has version {data.get('version')!r}")
    if (data.get("repository"), data.get("pull_request")) != (repository, number):
        raise ArtifactUnusable("the stored conversation is about another pull request")
    if data.get("head_sha") != head_sha:
        raise ArtifactUnusable("the stored conversation is about an earlier head")
    conversation = data.get("conversation")
    _check_conversation(conversation, head_sha)
    assert isinstance(conversation, dict)
    findings = data.get("findings")
    if not isinstance(findings, list) or len(findings) > MAX_FINDINGS:
        raise ArtifactUnusable("the stored findings are not a list")
    try:
        parsed = tuple(finding_from_json(f) for f in findings)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ArtifactUnusable("a stored finding is malformed") from None
    return StoredReview(repository, number, head_sha, conversation, parsed)


def _check_conversation(conversation: object, head_sha: str) -> None:
    if not isinstance(conversation, dict):
        raise ArtifactUnusable("the stored conversation is malformed")
    messages = conversation.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ArtifactUnusable("the stored conversation has no messages")
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise ArtifactUnusable("a stored message is malformed")
        content = message.get("content")
        if not isinstance(content, str | list) or (
            isinstance(content, list) and not all(isinstance(b, dict) for b in content)
        ):
            raise ArtifactUnusable("a stored message is malformed")
    if conversation.get("snapshot_commit") != head_sha or not _SHA.fullmatch(head_sha):
        raise ArtifactUnusable("the stored conversation is about other content")
    if not isinstance(conversation.get("mode"), dict) or not isinstance(
        conversation.get("scope"), str
    ):
        raise ArtifactUnusable("the stored conversation is malformed")


def read_member(archive: bytes) -> bytes:
    """The member's bytes from a zip ``archive``, bounded; nothing is written to disk."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            try:
                info = zipped.getinfo(MEMBER)
            except KeyError:
                raise ArtifactUnusable(f"the artifact has no {MEMBER}") from None
            if info.file_size > MAX_MEMBER_BYTES:
                raise ArtifactUnusable("the stored conversation is too large")
            with zipped.open(info) as member:
                # The size in the header is the archive's word: read no more than allowed.
                content = member.read(MAX_MEMBER_BYTES + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError):
        raise ArtifactUnusable("the artifact is not a readable zip archive") from None
    if len(content) > MAX_MEMBER_BYTES:
        raise ArtifactUnusable("the stored conversation is too large")
    return content


def candidates(artifacts: Sequence[Mapping[str, Any]], head_sha: str) -> list[Mapping[str, Any]]:
    """Artifacts worth downloading, newest first: not expired, bounded, and uploaded by a run
    of this repository (not a fork's) for ``head_sha``."""
    usable = []
    for artifact in artifacts:
        run = artifact.get("workflow_run")
        if not isinstance(run, Mapping) or artifact.get("expired") is not False:
            continue
        size = artifact.get("size_in_bytes")
        if not isinstance(size, int) or size > MAX_ARCHIVE_BYTES:
            continue
        if run.get("head_sha") != head_sha or not isinstance(artifact.get("id"), int):
            continue
        if run.get("repository_id") is None or run.get("head_repository_id") != run.get(
            "repository_id"
        ):
            continue
        usable.append(artifact)
    return sorted(usable, key=lambda a: (str(a.get("created_at") or ""), a["id"]), reverse=True)


def fetch_review(client: GitHubClient, repository: str, number: int, head_sha: str) -> StoredReview:
    """The newest usable stored review of pull request ``number`` at ``head_sha``; raises
    :class:`ArtifactUnusable` with the reason when there is none."""
    try:
        listed = client.artifacts(artifact_name(number))
    except HostApiError as exc:
        raise ArtifactUnusable(
            f"the artifacts could not be listed ({exc.status or 'no answer'}; the job needs "
            "`actions: read`)"
        ) from None
    found = candidates(listed, head_sha)
    if not found:
        raise ArtifactUnusable(f"no review of the head {head_sha[:12]} is stored")
    reasons = []
    for artifact in found[:3]:
        try:
            archive = client.download_artifact(int(artifact["id"]), MAX_ARCHIVE_BYTES)
            return parse(read_member(archive), repository, number, head_sha)
        except HostApiError:
            reasons.append("the artifact could not be downloaded")
        except ArtifactUnusable as exc:
            reasons.append(str(exc))
    raise ArtifactUnusable(reasons[0])
