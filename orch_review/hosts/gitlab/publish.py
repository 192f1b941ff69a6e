"""Keeping orch-review's discussions and summary note on a merge request.

Each finding on the diff is a discussion whose first note starts with the finding's hidden
fingerprint marker, placed by :mod:`.positions`; a verified fix is a GitLab suggestion
(```` ```suggestion:-N+0 ````, the lines above the note's line through it; never one with a
line starting with `/`, which GitLab could run as a quick action). A re-run posts no
finding twice. A thread of orch-review's own (its first note written by the token's user
and marked) whose finding is gone is resolved, with one reply: when its file was covered by
this review, or left the merge request. A thread a person started is never touched. One
summary note, found by its marker and its author, is edited in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from orch_review.config.learnings import Learning
from orch_review.findings.records import Finding
from orch_review.findings.report import Report
from orch_review.hosts.comment_body import comment_body
from orch_review.hosts.dismissals import Dismissal
from orch_review.hosts.gitlab.api import BadRequest, Forbidden, GitLabClient
from orch_review.hosts.gitlab.positions import FileDiff, Refs, place
from orch_review.hosts.markers import SUMMARY_MARKER, marked_fingerprint
from orch_review.hosts.summary import Placement, fit_comment, render
from orch_review.sanitize import controls, fence

NOTE_LIMIT = 1_000_000  # GitLab's note body limit, in characters
# "Suggestions for multiple lines are limited to 100 lines above and 100 lines below the
# commented diff line" (https://docs.gitlab.com/user/project/merge_requests/reviews/suggestions/).
SUGGESTION_LINES_ABOVE = 100
RESOLVED_REPLY = "orch-review: this finding is gone in {sha}; resolving the thread."
LEFT_REPLY = "orch-review: this file is no longer part of the merge request; resolving."
DISMISSED_REPLY = (
    "orch-review: dismissed; it will not be reported again in this merge request (the "
    "summary has the learning to commit to .orch-review/learnings.toml)."
)


@dataclass(frozen=True, slots=True)
class OwnThread:
    """A discussion orch-review started in an earlier run."""

    discussion_id: str
    fingerprint: str
    path: str | None
    resolved: bool


@dataclass(slots=True)
class Published:
    """What the run did on the merge request."""

    posted: int = 0
    already: int = 0
    outside: list[tuple[Finding, str]] = field(default_factory=list)
    resolved: int = 0
    summary_note: int | None = None
    answered: int = 0
    not_resolved: int = 0  # threads GitLab would not let the token resolve
    report: Report | None = None  # the report with the team's dismissals suppressed

    @property
    def said(self) -> str:
        """One line saying what was posted, as ``mr N --post`` prints it."""
        return (
            f"orch-review: {self.posted} new discussion(s), {self.already} already posted, "
            f"{len(self.outside)} in the summary only, {self.resolved} resolved."
        )


def suggestion(finding: Finding, first: int, last: int) -> str | None:
    """A GitLab suggestion replacing lines ``first``..``last`` (the note sits on ``last``),
    when the finding has a verified patch for exactly those lines."""
    patch = finding.verified_patch
    if patch is None or (first, last) != (finding.start_line, finding.end_line):
        return None
    if last - first > SUGGESTION_LINES_ABOVE:
        return None  # more lines above the note than a GitLab suggestion may replace
    if controls(patch) != patch:
        return None
    # A line starting with `/` may be a quick action that GitLab runs on the merge request
    # (/merge, /approve). GitLab skips a code block's lines by regular expressions that a
    # patch holding backticks of its own can mislead, so no such line is posted at all.
    if any(line.startswith("/") for line in patch.split("\n")):
        return None
    fenced = fence(patch)
    return f"{fenced}suggestion:-{last - first}+0\n{patch}\n{fenced}"


def body(finding: Finding, first: int, last: int) -> str:
    """A discussion's first note: the marker, the finding, and its suggestion if any."""
    text = comment_body(finding, None)
    block = suggestion(finding, first, last)
    return text + ("\n" + block + "\n" if block else "")


def _author_id(note: Mapping[str, Any]) -> int | None:
    author = note.get("author")
    user_id = author.get("id") if isinstance(author, Mapping) else None
    return user_id if isinstance(user_id, int) and not isinstance(user_id, bool) else None


def own_threads(discussions: Sequence[Mapping[str, Any]], me: int) -> list[OwnThread]:
    """orch-review's threads: the first note by ``me`` and starting with a finding marker."""
    threads: list[OwnThread] = []
    for discussion in discussions:
        notes = discussion.get("notes")
        if not isinstance(notes, list) or not notes or not isinstance(notes[0], Mapping):
            continue
        first = notes[0]
        fingerprint = marked_fingerprint(str(first.get("body") or ""))
        if fingerprint is None or _author_id(first) != me:
            continue
        position = first.get("position")
        path = position.get("new_path") if isinstance(position, Mapping) else None
        threads.append(
            OwnThread(
                str(discussion.get("id") or ""),
                fingerprint,
                path if isinstance(path, str) else None,
                bool(first.get("resolved")),
            )
        )
    return [t for t in threads if t.discussion_id]


def _covered(report: Report) -> set[str]:
    coverage = report.coverage
    if coverage is None:
        return set()
    return {f.path for f in (*coverage.covered, *coverage.reused)}


def whoami(client: GitLabClient) -> int:
    """The id of the user the token acts as."""
    me = client.current_user().get("id")
    if not isinstance(me, int) or isinstance(me, bool):
        raise BadRequest("GET /user did not say who the token acts as")
    return me


def publish(
    client: GitLabClient,
    iid: int,
    report: Report,
    refs: Refs,
    files: Mapping[str, FileDiff],
    *,
    me: int,
    threads: Sequence[OwnThread],
    dismissed: Sequence[Dismissal] = (),
    to_learn: Sequence[Learning] = (),
) -> Published:
    """Post the new findings of ``report`` (dismissed ones already suppressed in it), resolve
    what is gone or dismissed, and keep the summary note."""
    posted = {t.fingerprint for t in threads}
    gone_by_dismissal = {d.fingerprint for d in dismissed}
    done = Published()
    inline: list[Finding] = []
    for finding in report.confirmed:
        placed = place(finding, files, refs)
        if isinstance(placed, str):
            done.outside.append((finding, placed))
            continue
        inline.append(finding)
        if finding.fingerprint in posted:
            done.already += 1
            continue
        client.create_discussion(iid, body(finding, placed.first, placed.last), placed.position)
        done.posted += 1
    current = {f.fingerprint for f in report.confirmed}
    covered = _covered(report)
    for thread in threads:
        if thread.fingerprint in current or thread.resolved:
            continue
        left = thread.path is not None and thread.path not in files
        dismissal = thread.fingerprint in gone_by_dismissal
        if not left and not dismissal and thread.path not in covered:
            continue  # not reviewed this time: the finding may still be there
        if dismissal:
            reply = DISMISSED_REPLY
        else:
            reply = LEFT_REPLY if left else RESOLVED_REPLY.format(sha=refs.head_sha[:12])
        client.reply(iid, thread.discussion_id, reply)
        try:
            client.resolve(iid, thread.discussion_id)
        except Forbidden:
            # Resolving needs the Developer role or the merge request's authorship (Discussions
            # API, "Resolve a merge request thread"); the summary is still worth keeping.
            done.not_resolved += 1
            continue
        done.resolved += 1
    placement = Placement(
        inline=tuple(inline),
        not_inline=tuple(done.outside),
        already_posted=done.already,
        dismissed=tuple(dismissed),
        to_learn=tuple(to_learn),
    )
    summary = fit_comment(render(report, placement, head_sha=refs.head_sha), NOTE_LIMIT)
    done.summary_note = upsert_summary(client, iid, summary, me)
    return done


def upsert_summary(client: GitLabClient, iid: int, text: str, me: int) -> int | None:
    """Edit orch-review's summary note (marker and author both ours), or add one."""
    for note in client.notes(iid):
        if _author_id(note) == me and str(note.get("body") or "").startswith(SUMMARY_MARKER):
            note_id = note.get("id")
            if isinstance(note_id, int):
                client.update_note(iid, note_id, text)
                return note_id
    created = client.create_note(iid, text)
    note_id = created.get("id")
    return note_id if isinstance(note_id, int) else None
