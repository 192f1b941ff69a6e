"""Findings the team dismissed on the merge request: an ``@orch-review ignore <reason>`` reply
in one of orch-review's threads, or a thumbs-down award on its first note, from a member
with at least Developer access (30, as the members API reports it, inherited access
included). Anyone else's dismissal is not taken. A dismissed finding is not posted again,
is listed as dismissed with the learning to commit, and does not fail the job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from orch_review.hosts.dismissals import Dismissal
from orch_review.hosts.gitlab.api import GitLabClient
from orch_review.hosts.gitlab.publish import OwnThread
from orch_review.hosts.http_errors import HostApiError
from orch_review.hosts.mentions import parse

DEVELOPER = 30
THUMBS_DOWN = "thumbsdown"
MAX_THREADS = 200  # threads whose award emoji are read in one run


def _user(note: Mapping[str, Any]) -> tuple[int | None, str]:
    author = note.get("author")
    if not isinstance(author, Mapping):
        return None, "someone"
    user_id, name = author.get("id"), author.get("username")
    shown = str(name) if name else "someone"
    if isinstance(user_id, int) and not isinstance(user_id, bool):
        return user_id, shown
    return None, shown


class Developers:
    """Who has Developer access or more, asked once per user."""

    def __init__(self, client: GitLabClient, me: int) -> None:
        self._client, self._me = client, me
        self._known: dict[int, bool] = {}

    def __call__(self, user_id: int | None) -> bool:
        if user_id is None or user_id == self._me:
            return False
        if user_id not in self._known:
            self._known[user_id] = self._client.access_level(user_id) >= DEVELOPER
        return self._known[user_id]


def collect(
    client: GitLabClient,
    iid: int,
    discussions: Sequence[Mapping[str, Any]],
    threads: Sequence[OwnThread],
    me: int,
    developer: Developers | None = None,
) -> dict[str, Dismissal]:
    """Fingerprint -> its dismissal, from replies and award emoji in orch-review's threads."""
    developer = developer or Developers(client, me)
    by_id = {str(d.get("id")): d for d in discussions}
    dismissed: dict[str, Dismissal] = {}
    for thread in threads[:MAX_THREADS]:
        notes = by_id.get(thread.discussion_id, {}).get("notes") or []
        for note in notes[1:]:
            if not isinstance(note, Mapping):
                continue
            mention = parse(str(note.get("body") or ""))
            user_id, who = _user(note)
            if mention is not None and mention.kind == "ignore" and developer(user_id):
                reason = mention.text or "dismissed without a reason"
                dismissed[thread.fingerprint] = _dismissal(thread, reason, who, note)
                break
        if thread.fingerprint in dismissed or not notes or not isinstance(notes[0], Mapping):
            continue
        first_id = notes[0].get("id")
        if not isinstance(first_id, int):
            continue
        try:
            awards = client.award_emoji(iid, first_id)
        except HostApiError:
            continue
        for award in awards:
            user_id, who = _user({"author": award.get("user")})
            if award.get("name") == THUMBS_DOWN and developer(user_id):
                dismissed[thread.fingerprint] = _dismissal(
                    thread, "dismissed with a thumbs-down", who, award
                )
                break
    return dismissed


def _dismissal(thread: OwnThread, reason: str, who: str, source: Mapping[str, Any]) -> Dismissal:
    created = str(source.get("created_at") or "")[:10]
    return Dismissal(
        fingerprint=thread.fingerprint,
        reason=" ".join(reason.split())[:500],
        who=who[:100],
        when=created if len(created) == 10 and created[4] == "-" else "",
        path=thread.path or "",
        category=None,
        url="",
    )
