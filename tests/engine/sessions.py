"""A review session for engine unit tests: files in memory, a scripted stand-in client.

The stand-in client answers the engine's Completer interface directly (no HTTP): each
subagent reports one finding on the first file its task names (none for a ``clean`` file),
each verifier confirms every finding it is given. Agents' shells are real but never asked to
run anything.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from orch_review.config.guidance import Guidance
from orch_review.config.settings import Config
from orch_review.engine.agents.review_session import Session
from orch_review.engine.api.budget import Budget, Caps
from orch_review.engine.api.client import Reply
from orch_review.engine.api.scheduler import PriorityPool
from orch_review.engine.memory.journal import Journal
from orch_review.engine.shell.sandbox import PlainLauncher, Sandbox
from orch_review.events import EventSink
from orch_review.trust import Signer


class Files:
    """The content under review, from a dict of path -> bytes (a ``ReviewedContent``)."""

    def __init__(
        self, root: Path, files: Mapping[str, bytes], refused: Mapping[str, str] | None = None
    ) -> None:
        self.root = root
        self.files = dict(files)
        self.refused = dict(refused or {})  # path -> why a subtask naming it may not run

    def wait(self) -> None:
        pass

    def read(self, path: str) -> bytes | None:
        return self.files.get(path)

    def line_count(self, path: str) -> int | None:
        data = self.files.get(path)
        return None if data is None else max(1, data.count(b"\n"))

    def mentioned_files(self, text: str) -> list[str]:
        return [path for path in sorted(self.files) if path in text]

    def canonical_path(self, path: str) -> str:
        return path

    def refusal(self, text: str) -> str | None:
        return next((why for path, why in self.refused.items() if path in text), None)

    def content_key(self, text: str) -> str:
        digest = hashlib.sha256()
        for path in self.mentioned_files(text) or sorted(self.files):
            digest.update(path.encode() + b"\0" + hashlib.sha256(self.files[path]).digest())
        return digest.hexdigest()


def _task(messages: Sequence[Mapping[str, Any]]) -> str:
    content = messages[0]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


class StandIn:
    """A Completer: subagents report a finding on the first file named, verifiers confirm.

    ``silent_subagents``: every subagent answers with text, never its report; ``silent`` and
    ``clean``: those whose first file is one of these answer with text, or report no finding;
    ``before``: called with a subagent's first file before it answers (it may block or raise)."""

    def __init__(
        self,
        files: Files,
        *,
        silent_subagents: bool = False,
        silent: frozenset[str] = frozenset(),
        clean: frozenset[str] = frozenset(),
        before: Callable[[str], None] | None = None,
    ) -> None:
        self._files = files
        self._silent = silent_subagents
        self._silent_files = silent
        self._clean = clean
        self._before = before
        self._lock = threading.Lock()
        self.tasks: dict[str, list[str]] = {"subagent": [], "verifier": []}

    def complete(
        self,
        *,
        model: str,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        tool_choice: Mapping[str, Any] | None = None,
    ) -> Reply:
        names = {tool["name"] for tool in tools}
        task = _task(messages)
        if "report_findings" in names:
            with self._lock:
                self.tasks["subagent"].append(task)
            named = self._files.mentioned_files(task)
            path = named[0] if named else ""
            if self._before is not None:
                self._before(path)
            if self._silent or path in self._silent_files:
                return Reply([{"type": "text", "text": "Nothing to say."}], "end_turn", 1, 1, 0, 0)
            finding = {
                "path": path,
                "start_line": 1,
                "end_line": 1,
                "severity": "high",
                "category": "correctness",
                "claim": f"{path} is wrong",
                "evidence": "line 1",
            }
            found = [] if not path or path in self._clean else [finding]
            name, tool_input = "report_findings", {"summary": "one", "findings": found}
        else:
            with self._lock:
                self.tasks["verifier"].append(task)
            verdicts = [{"finding": 1, "verdict": "confirmed", "reason": "holds"}]
            name, tool_input = "report_verdicts", {"verdicts": verdicts}
        block = {"type": "tool_use", "id": "call-1", "name": name, "input": tool_input}
        return Reply([block], "tool_use", 100, 10, 0, 0)


@contextmanager
def session(
    root: Path,
    files: Files,
    client: StandIn,
    *,
    journal: Path,
    config: Config | None = None,
    guidance: Guidance | None = None,
    caps: Caps | None = None,
    events: EventSink | None = None,
    serial: bool = False,
) -> Iterator[Session]:
    """A session over ``files`` with a real journal at ``journal``; ``serial``: one agent
    at a time, in the order queued."""
    config = config or Config(sandbox="off")
    pool = PriorityPool(1, agents=1) if serial else PriorityPool(2)
    try:
        with Journal(journal, signer=Signer(b"k" * 32, "credential")) as opened:
            yield Session(
                config=config,
                client=client,
                budget=Budget(caps or Caps(), lambda *_: (0.0, True)),
                journal=opened,
                workspace=files,
                pool=pool,
                bash_env={"PATH": "/usr/bin:/bin"},
                cancel=threading.Event(),
                sandbox=Sandbox("none", PlainLauncher()),
                guidance=guidance,
                events=events,
            )
    finally:
        pool.shutdown()
