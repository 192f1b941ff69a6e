"""Incremental reviews by content, not by the model's wording.

After a complete review, each covered file's verified findings are stored in the journal
under a key of what its review saw: the base the change is compared with, the file's path and
content, the review guidance for it and the settings that change an answer. On a later
review of the same base, a file whose key is found is covered by that earlier review: its
findings are carried over, the main agent is told not to ask for it again, and a subtask that
names only such files is answered from the earlier review instead of being run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence

from orch_review.engine.journal import journal_key
from orch_review.engine.session import Session
from orch_review.engine.tools import TOOLS_VERSION
from orch_review.findings.codec import finding_from_json, finding_to_json
from orch_review.findings.coverage import Coverage
from orch_review.findings.records import Finding

KIND = "file"
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
            KIND,
            TOOLS_VERSION,
            config.agent_model,
            config.effort,
            config.subagent_max_turns,
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
        """What the main agent is told (empty when nothing is reused)."""
        if not self.findings:
            return ""
        paths = sorted(self.findings)
        listed = "\n".join(paths[:LISTED])
        more = f"\n({len(paths) - LISTED} more.)" if len(paths) > LISTED else ""
        return (
            f"\n\n{len(paths)} changed file(s) are unchanged since an earlier complete review "
            "of the same base and are already covered by it; do not send subtasks about "
            "them alone (such subtasks are answered from the earlier review):\n"
            f"<already_covered>\n{listed}{more}\n</already_covered>"
        )

    def store(self, coverage: Coverage, findings: Mapping[str, Sequence[Finding]]) -> None:
        """Record each file this review covered, with its verified findings."""
        for file in coverage.files:
            if file.status != "covered":
                continue
            key = self._keys.get(file.path)
            if key is not None:
                stored = [finding_to_json(f) for f in findings.get(file.path, ())]
                self._session.journal.put(key, KIND, {"findings": stored})
