"""Follow-up questions about the last review: ``orch-review ask`` and ``chat``.

The stored conversation continues with orchestration mode switched off: the model gets the
exit notice once and answers on its own, checking facts with bash in the same content it
reviewed. Asking with orchestration switches the mode back on (its full text is sent again)
so a heavy question can fan out through Workflow.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from orch_review.config.settings import Config
from orch_review.engine.agents.main_agent import run_turn
from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.session_setup import new_client, open_journal, open_session
from orch_review.engine.agents.workflow import Workflow
from orch_review.engine.memory.conversation import (
    Conversation,
    load_conversation,
    update_conversation,
)
from orch_review.errors import GitError
from orch_review.events import EventSink
from orch_review.findings.records import ConcernOutcome
from orch_review.scope import git as gitops
from orch_review.scope.snapshot import checkout
from orch_review.scope.workspace import Workspace

if TYPE_CHECKING:
    import git


@dataclass(frozen=True, slots=True)
class Answer:
    """The model's answer and any concerns it reviewed to give it."""

    text: str
    outcomes: tuple[ConcernOutcome, ...]
    orchestrated: bool


class FollowUp:
    """An open follow-up session on the last review; ask as many questions as you like.

    ``conversation`` continues that conversation instead of the journal's; without ``shell``
    the model answers without running commands (see :func:`run_turn`).
    """

    def __init__(
        self,
        config: Config,
        repo: git.Repo,
        env: Mapping[str, str],
        *,
        events: EventSink | None = None,
        notices: Callable[[str], None] | None = None,
        conversation: Conversation | None = None,
        shell: bool = True,
    ) -> None:
        self._config, self._repo, self._env = config, repo, env
        self._events, self._notices = events, notices
        self._stack = contextlib.ExitStack()
        self._session: Session | None = None
        # Given, it is continued instead of the journal's (a pull request comment's run).
        self._conversation: Conversation | None = conversation
        self._shell = shell

    @property
    def scope(self) -> str:
        """What the reviewed content was."""
        assert self._conversation is not None
        return self._conversation.scope

    @property
    def has_shell(self) -> bool:
        """Whether the model had a shell (else the read-only tools); once entered."""
        assert self._session is not None
        return self._session.has_shell

    def __enter__(self) -> FollowUp:
        git_dir = gitops.git_dir(self._repo)
        if self._conversation is None:
            tree = gitops.work_tree(self._repo)
            with open_journal(self._config, git_dir, self._env, checkout=tree) as journal:
                self._conversation = load_conversation(journal, gitops.work_tree(self._repo))
        commit = self._conversation.snapshot_commit
        objects = self._conversation.snapshot_objects
        with self._stack:
            client = self._stack.enter_context(
                contextlib.closing(new_client(self._config, self._env))
            )
            try:
                content = self._stack.enter_context(
                    checkout(self._repo, commit, gitops.work_tree(self._repo), objects)
                )
            except GitError:
                raise GitError(
                    "the content of the last review is no longer in this repository (git "
                    "gc?): run the review again, then ask."
                ) from None
            workspace = Workspace(content.root, (), global_key=commit, content=content)
            self._session = self._stack.enter_context(
                open_session(
                    self._config,
                    self._env,
                    client=client,
                    git_dir=git_dir,
                    workspace=workspace,
                    checkout=gitops.work_tree(self._repo),
                    events=self._events,
                    notices=self._notices,
                )
            )
            self._stack = self._stack.pop_all()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stack.__exit__(exc_type, exc, tb)

    def ask(self, question: str, *, orchestrate: bool = False) -> Answer:
        """One question; the conversation is stored again after it."""
        assert self._session is not None and self._conversation is not None
        workflow = Workflow(self._session)
        before = self._conversation
        result = run_turn(
            self._session,
            workflow,
            before.messages,
            before.mode.switch(orchestrate),
            question,
            shell=self._shell,
        )
        update_conversation(
            self._session.journal, before, result, work_tree=gitops.work_tree(self._repo)
        )
        self._conversation = Conversation(
            result.messages,
            result.mode,
            before.snapshot_commit,
            before.scope,
            before.snapshot_objects,
        )
        return Answer(result.summary or result.note, tuple(workflow.outcomes), orchestrate)
