"""Incremental reviews by content, not by the model's wording.

After a complete review, each covered file's verified findings are stored in the journal
under a key of what its review saw: the base the change is compared with, the file's path and
content, the review guidance for it and the settings that change an answer. On a later
review of the same base, a file whose key is found is covered by that earlier review: its
findings are carried over, the main agent is told not to ask for it again, and a subtask that
names only such files is answered from the earlier review instead of being run.

A complete review also stores its summary under a key of every file key it saw: a later
review whose files are all unchanged since then (the same inputs, file by file) has nothing
to ask a model and reuses that summary with the coverage (see docs/rereview.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence

from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.tools import TOOLS_VERSION
from orch_review.engine.memory.journal import journal_key
from orch_review.findings.codec import finding_from_json, finding_to_json
from orch_review.findings.coverage import Coverage
from orch_review.findings.records import Finding
from orch_review.wording import counted

FILE_KIND = "file"
#: The journal kind of a complete review's summary, under the key of all its files' keys.
REVIEW_KIND = "review"
#: Files listed by name in the main agent's note; beyond that it gets the count.
LISTED = 300


class EarlierReviews:
    """The files of this review already covered by an earlier complete one, and their findings."""

    def __init__(self, session: Session, base: str | None, guidance: Callable[[str], str]) -> None:
        self._session = session
        self._base = base
        self._guidance = guidance
        self.findings: dict[str, tuple[Finding, ...]] = {}
        self._keys: dict[str, str] = {}  # computed while the snapshot is there

    def _key(self, path: str) -> str | None:
        if self._base is None:  # a full audit or a first commit: nothing to compare with
            return None
        data = self._session.workspace.read(path)  # the content under review, from git
        if data is None:
            return None
        config = self._session.config
        return journal_key(
            FILE_KIND,
            TOOLS_VERSION,
            config.agent_model,
            config.effort,
            config.subagent_max_turns,
            self._session.toolset,
            self._base,
            path,
            hashlib.sha256(data).hexdigest(),
            self._guidance(path),
        )

    def load(self, paths: Iterable[str]) -> None:
        """Look every path up; those found are covered, with their stored findings."""
        for path in paths:
            key = self._key(path)
            if key is None:
                continue
            self._keys[path] = key
            stored = self._session.journal.get(key)
            if stored is not None:
                self.findings[path] = tuple(finding_from_json(f) for f in stored["findings"])

    @property
    def paths(self) -> frozenset[str]:
        """The files covered by an earlier review."""
        return frozenset(self.findings)

    def answers(self, named: Sequence[str]) -> bool:
        """Whether a concern naming ``named`` can be answered from earlier reviews."""
        return bool(named) and all(p in self.findings for p in named)

    def note(self) -> str:
        """What the main agent is told (empty when nothing is reused): which files an earlier
        complete review covers, and that their verified findings are carried over."""
        if not self.findings:
            return ""
        paths = sorted(self.findings)
        listed = "\n".join(paths[:LISTED])
        more = f"\n({len(paths) - LISTED} more.)" if len(paths) > LISTED else ""
        carried = sum(len(found) for found in self.findings.values())
        return (
            f"\n\nThis is a re-review. {len(paths)} changed file(s) are unchanged since an "
            "earlier complete review of the same base and are already covered by it (their "
            f"verified results are reused: {counted(carried, 'finding')} carried over). Scout "
            "only the files listed above, which changed since; do not send subtasks about the "
            "covered files alone (such subtasks are answered from the earlier review):\n"
            f"<already_covered>\n{listed}{more}\n</already_covered>"
        )

    def reused_note(self, files: int) -> str:
        """The report's note when every file of the review is covered by earlier reviews."""
        return (
            f"Every one of the {counted(files, 'changed file')} is unchanged since an earlier "
            "complete review of the same base: its coverage and verified findings were reused "
            "and no agent ran."
        )

    def _review_key(self) -> str | None:
        """The key of this review's inputs as a whole: every file's key (None without one)."""
        if not self._keys:
            return None
        return journal_key(REVIEW_KIND, self._session.config.model, sorted(self._keys.items()))

    def summary(self) -> str | None:
        """The summary of an earlier complete review of exactly these files, if stored."""
        key = self._review_key()
        stored = None if key is None else self._session.journal.get(key)
        summary = None if stored is None else stored.get("summary")
        return summary if isinstance(summary, str) and summary else None

    def store(
        self, coverage: Coverage, findings: Mapping[str, Sequence[Finding]], summary: str = ""
    ) -> None:
        """Record each file this complete review covered, with its verified findings, and the
        review's ``summary`` under the key of all its files."""
        for file in coverage.files:
            if file.status != "covered":
                continue
            key = self._keys.get(file.path)
            if key is not None:
                stored = [finding_to_json(f) for f in findings.get(file.path, ())]
                self._session.journal.put(key, FILE_KIND, {"findings": stored})
        key = self._review_key()
        if summary and key is not None and len(self._keys) == len(coverage.files):
            self._session.journal.put(key, REVIEW_KIND, {"summary": summary})
