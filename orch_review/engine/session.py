"""Everything one review session's agents share, passed down explicitly."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from orch_review.config.guidance import Guidance
from orch_review.config.settings import Config
from orch_review.engine.bash import BashSession
from orch_review.engine.budget import Ledger
from orch_review.engine.client import Completer
from orch_review.engine.journal import JournalLike
from orch_review.engine.sandbox import Sandbox, resolve_sandbox
from orch_review.engine.scheduler import PriorityPool
from orch_review.events import AgentEvent, EventSink

log = logging.getLogger("orch_review.sandbox")


class ReviewedContent(Protocol):
    """The content under review, as the agents see it."""

    @property
    def root(self) -> Path:
        """Directory the agents' bash runs in."""
        ...

    def wait(self) -> None:
        """Return once the content under ``root`` is in place."""
        ...

    def read(self, path: str) -> bytes | None:
        """The content of the file ``path`` under review, or None when it is none."""
        ...

    def line_count(self, path: str) -> int | None:
        """Lines of a reviewable file, or None when ``path`` is not one."""
        ...

    def mentioned_files(self, text: str) -> list[str]:
        """Paths under review that ``text`` names."""
        ...

    def canonical_path(self, path: str) -> str:
        """The path ``path`` names, also in the C-quoted form prompts show."""
        ...

    def refusal(self, text: str) -> str | None:
        """Why a subtask may not run (it names files out of scope), or None."""
        ...

    def content_key(self, text: str) -> str:
        """A hash of the content ``text`` is about (the files it names, else everything)."""
        ...


class _Once:
    """A sandbox resolved on first use, by one thread, so its warning is printed once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value: Sandbox | None = None

    def get(self, session: Session) -> Sandbox:
        with self._lock:
            if self._value is None:
                self._value = resolve_sandbox(
                    session.config.sandbox,
                    session.workspace.root,
                    search_path=session.bash_env.get("PATH", ""),
                    bwrap_path=session.config.bwrap_path,
                )
                if self._value.notice:
                    log.warning("orch-review: %s", self._value.notice)
            return self._value


@dataclass(frozen=True, slots=True)
class Session:
    """The collaborators of one review session.

    ``sandbox`` is the policy for agents' shells; left out, it is resolved from the config on
    first use (raising SandboxUnavailable for ``--sandbox on`` without bubblewrap).
    ``shell_starter`` launches agents' shells off the agents' threads (see
    :meth:`BashSession.start`); left out, each agent starts its own.
    """

    config: Config
    client: Completer
    ledger: Ledger
    journal: JournalLike
    workspace: ReviewedContent
    pool: PriorityPool
    bash_env: Mapping[str, str]
    cancel: threading.Event
    events: EventSink | None = None
    sandbox: Sandbox | None = None
    guidance: Guidance | None = None
    shell_starter: Executor | None = None
    _resolved: _Once = field(default_factory=_Once, init=False, repr=False, compare=False)

    @property
    def shell_sandbox(self) -> Sandbox:
        """The sandbox agents' shells run in."""
        return self.sandbox if self.sandbox is not None else self._resolved.get(self)

    def emit(self, agent_id: str, role: str, label: str, state: str, detail: str = "") -> None:
        """Send a progress event (no-op without a sink)."""
        if self.events is not None:
            self.events(AgentEvent(agent_id, role, label, state, detail=detail))

    def bash_session(self) -> BashSession:
        """A fresh persistent shell in the workspace for one agent, in the sandbox."""
        return BashSession(
            self.workspace.root,
            env=self.bash_env,
            timeout=self.config.bash_timeout,
            output_cap=self.config.tool_output_cap,
            sandbox=self.shell_sandbox,
            starter=self.shell_starter,
            before_start=self.workspace.wait,
        )
