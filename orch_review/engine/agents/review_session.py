"""Everything one review session's agents share, passed down explicitly."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from orch_review.config.guidance import Guidance
from orch_review.config.settings import Config
from orch_review.engine.api.budget import Budget
from orch_review.engine.api.client import Completer
from orch_review.engine.api.hedging import Hedging
from orch_review.engine.api.scheduler import PriorityPool
from orch_review.engine.memory.journal import JournalLike
from orch_review.engine.shell.bash import BASH_TOOL, BashSession
from orch_review.engine.shell.read_tools import READ_TOOLS, ToolHandler
from orch_review.engine.shell.sandbox import Sandbox, resolve_sandbox
from orch_review.engine.shell.snapshot_tools import SnapshotTools
from orch_review.events import AgentEvent, EventSink

if TYPE_CHECKING:
    import git

_log = logging.getLogger("orch_review.sandbox")


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

    def revisions(self) -> tuple[git.Repo, str, str | None] | None:
        """The repository, commit and base the content is read from through git, if known."""
        ...


@dataclass(frozen=True, slots=True)
class AgentTools:
    """What an agent is offered to look at the content: bash, or the read-only tools."""

    definitions: tuple[dict[str, Any], ...]
    bash: BashSession | None
    handlers: Mapping[str, ToolHandler]


class _SharedTools:
    """The read-only tools of a session, made once: their listing is read once for all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value: SnapshotTools | None = None

    def get(self, session: Session) -> SnapshotTools | None:
        with self._lock:
            if self._value is None:
                known = session.workspace.revisions()
                if known is None:
                    return None
                repo, head, base = known
                self._value = SnapshotTools(
                    repo,
                    head,
                    base,
                    canonical=session.workspace.canonical_path,
                    output_cap=session.config.tool_output_cap,
                    timeout=session.config.bash_timeout,
                )
            return self._value


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
                    _log.warning("orch-review: %s", self._value.notice)
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
    budget: Budget
    journal: JournalLike
    workspace: ReviewedContent
    pool: PriorityPool
    bash_env: Mapping[str, str]
    cancel: threading.Event
    events: EventSink | None = None
    sandbox: Sandbox | None = None
    guidance: Guidance | None = None
    shell_starter: Executor | None = None
    hedging: Hedging | None = None  # late fan-out requests are sent twice (None: never)
    _resolved: _Once = field(default_factory=_Once, init=False, repr=False, compare=False)
    # Passed on by dataclasses.replace (an init field), so every agent shares one.
    shared_tools: _SharedTools = field(default_factory=_SharedTools, repr=False, compare=False)

    @property
    def shell_sandbox(self) -> Sandbox:
        """The sandbox agents' shells run in."""
        return self.sandbox if self.sandbox is not None else self._resolved.get(self)

    @property
    def has_shell(self) -> bool:
        """Whether agents get a shell (else the read-only tools)."""
        return self.shell_sandbox.has_shell

    @property
    def toolset(self) -> str:
        """The name of what agents look at the content with, for journal keys."""
        return "bash" if self.has_shell else "read-only tools"

    @property
    def shell_tools(self) -> tuple[dict[str, Any], ...]:
        """The definitions of the tools agents look at the content with."""
        return (BASH_TOOL,) if self.has_shell else READ_TOOLS

    @contextlib.contextmanager
    def agent_tools(self) -> Iterator[AgentTools]:
        """For one agent: a fresh shell in the sandbox, or the session's read-only tools."""
        if self.has_shell:
            with self.bash_session() as bash:
                yield AgentTools(self.shell_tools, bash, {})
            return
        tools = self.shared_tools.get(self)
        yield AgentTools(self.shell_tools, None, tools.handlers() if tools is not None else {})

    def emit(self, agent_id: str, role: str, label: str, state: str, detail: str = "") -> None:
        """Send a progress event (no-op without a sink)."""
        if self.events is not None:
            self.events(AgentEvent(agent_id, role, label, state, detail=detail))

    def bash_session(self) -> BashSession:
        """A fresh persistent shell in the workspace for one agent, in the sandbox (which
        must have a shell: see :attr:`has_shell`)."""
        return BashSession(
            self.workspace.root,
            env=self.bash_env,
            timeout=self.config.bash_timeout,
            output_cap=self.config.tool_output_cap,
            sandbox=self.shell_sandbox,
            starter=self.shell_starter,
            before_start=self.workspace.wait,
        )
