"""Everything one review session's agents share, passed down explicitly."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from orch_review.config import Config
from orch_review.engine.agent import AgentEvent, EventSink
from orch_review.engine.bash import BashSession
from orch_review.engine.budget import Ledger
from orch_review.engine.client import ModelClient
from orch_review.engine.journal import JournalLike
from orch_review.engine.scheduler import PriorityPool


class Workspace(Protocol):
    """The content under review, as the agents see it."""

    @property
    def root(self) -> Path:
        """Directory the agents' bash runs in."""
        ...

    def line_count(self, path: str) -> int | None:
        """Lines of a reviewable file, or None when ``path`` is not one."""
        ...

    def content_key(self, text: str) -> str:
        """A hash of the content ``text`` is about (the files it names, else everything)."""
        ...


@dataclass(frozen=True, slots=True)
class Session:
    """The collaborators of one review session."""

    config: Config
    client: ModelClient
    ledger: Ledger
    journal: JournalLike
    workspace: Workspace
    pool: PriorityPool
    bash_env: Mapping[str, str]
    cancel: threading.Event
    events: EventSink | None = None

    def emit(self, agent_id: str, role: str, label: str, state: str, detail: str = "") -> None:
        """Send a progress event (no-op without a sink)."""
        if self.events is not None:
            self.events(AgentEvent(agent_id, role, label, state, detail=detail))

    def bash_session(self) -> BashSession:
        """A fresh persistent shell in the workspace for one agent."""
        return BashSession(
            self.workspace.root,
            env=self.bash_env,
            timeout=self.config.bash_timeout,
            output_cap=self.config.tool_output_cap,
        )
