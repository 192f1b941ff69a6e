"""The interface every code host's adapter implements.

A host is where a change is reviewed in CI and discussed: GitHub's pull requests, GitLab's
merge requests. The command line knows a host only through this interface and the
registry (:mod:`orch_review.hosts.registry`); the review itself never knows which host it
serves.

:class:`Host` declares each step of a host's run as a method, and each adapter's ``host``
module implements them by delegating to the adapter's own modules:

- :meth:`Host.read_event`: the change the CI job is for, from its environment (``event``);
- :meth:`Host.connect`: an open session with the host's API about that change
  (:class:`Connection`, the adapter's own record; ``api``);
- :meth:`Host.read_intent`: the change's title, description and linked issues (``intent``);
- :meth:`Host.read_dismissals`: the team's dismissals in orch-review's threads
  (``dismissals``), as the shared :class:`~orch_review.hosts.dismissals.Collected`;
- :meth:`Host.place`: where a finding sits on the change's diff, or why it does not
  (``comments`` or ``positions``), as the shared :class:`DiffPlace`;
- :meth:`Host.publish`: the findings posted, the summary kept and orch-review's own threads
  reconciled (resolved when their finding is gone) in one step (``publish``), as a
  :class:`PublishOutcome`;
- :meth:`Host.keep_summary`: the one summary comment, edited in place (``publish``);
- :meth:`Host.answer_questions`: the questions asked of orch-review on the change answered
  where they were asked, as the shared :class:`Answered` (``conversation_run`` for GitHub,
  ``questions`` for GitLab), from the run's :class:`Asking`;
- :meth:`Host.review_local`: fetch a change into a local clone and review it (``pr N``,
  ``mr N``; ``local``);
- :meth:`Host.run_ci`: the CI command (``run``), which takes the steps above and the
  shared ones of :mod:`orch_review.hosts.run_flow`.

The two hosts start answering from different events, and :meth:`Host.supports` says which:
GitHub's run started by a comment answers that comment (``comment-trigger``; the connection
carries it), GitLab's pipeline run answers the questions asked since the last one, after
publishing (``questions-on-push``).

What adapters share (markers, comment body, suggestion block, summary, dismissal record and
conversation rules, mention parser, replies, the local request, HTTP errors, the run flow)
lives in ``hosts/`` itself; an adapter imports it and the core, never another adapter.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    import git

    from orch_review.config.settings import Config
    from orch_review.core import PreparedReview
    from orch_review.errors import ExitCode
    from orch_review.events import EventSink
    from orch_review.findings.records import Finding
    from orch_review.findings.report import Report
    from orch_review.hosts.dismissals import Collected, ConversationRules
    from orch_review.hosts.local import LocalRequest
    from orch_review.scope.stated_intent import Intent

Echo = Callable[[str], None]  # prints one line (stdout or stderr, as the caller chose)

#: What a host may lack (pr-agent's ``is_supported``): ask before relying on it.
Capability = Literal[
    "comment-trigger",  # a comment mentioning orch-review starts a run that answers it
    "questions-on-push",  # each run answers the questions asked since the last one
    "resolve-threads",  # orch-review's threads are resolved when their finding is gone
    "suggestions",  # a verified fix is offered as a change the author can apply
    "dismiss-by-reaction",  # a reaction on orch-review's comment dismisses its finding
    "annotations",  # findings can fall back to CI annotations when posting is refused
]


@dataclass(frozen=True, slots=True)
class LocalReview:
    """What ``pr N`` or ``mr N`` did: the report, the prepared review (its configuration
    says what fails), and one line saying what was posted (None when nothing was asked)."""

    report: Report
    prepared: PreparedReview
    posted: str | None = None


class ChangeOnHost(Protocol):
    """The change a CI job is for, as the host's event says (the adapter's own record:
    GitHub's ``PullRequest``, GitLab's ``MergeRequestJob``)."""

    @property
    def number(self) -> int:
        """The change's number on the host: ``#N``, ``!N``."""
        ...

    @property
    def head_sha(self) -> str:
        """The commit under review."""
        ...

    @property
    def from_fork(self) -> bool:
        """Whether the change comes from another repository (whose jobs get no secrets or a
        read-only token)."""
        ...


class Connection(Protocol):
    """An open session with the host's API about one change (the adapter's own record,
    made by :meth:`Host.connect`)."""

    @property
    def change(self) -> ChangeOnHost:
        """The change the session is about."""
        ...


@dataclass(frozen=True, slots=True)
class DiffPlace:
    """Where a finding sits on the change's diff: its file and the lines a comment covers
    (``first`` is None when it covers line ``last`` alone)."""

    path: str
    first: int | None
    last: int


class PublishOutcome(Protocol):
    """What publishing did (the adapter's own record: GitHub's ``Outcome``, GitLab's
    ``Published``)."""

    @property
    def report(self) -> Report | None:
        """The report with the team's dismissals suppressed; None when nothing was read."""
        ...

    @property
    def said(self) -> str:
        """One line saying what was posted, as ``pr N --post`` prints it."""
        ...


@dataclass(frozen=True, slots=True)
class Asking:
    """What answering questions takes from the run: the clone, the configuration (its
    trigger, model and sandbox), the environment, the review's conversation to continue
    (JSON-ready, as :func:`orch_review.core.review_conversation` gives it; None when the run
    made none or the adapter keeps it elsewhere, as GitHub's artifact) and the run's
    findings by fingerprint (the thread's finding is given with its question)."""

    repo: git.Repo
    config: Config
    env: Mapping[str, str]
    conversation: Mapping[str, Any] | None = None
    findings: Mapping[str, Finding] = field(default_factory=dict)
    events: EventSink | None = None


@dataclass(frozen=True, slots=True)
class Answered:
    """What answering did: the replies posted, in order, and the address of each one where
    the host gives it ("" otherwise)."""

    replies: tuple[str, ...] = ()
    links: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """How many questions were answered."""
        return len(self.replies)


class Host(Protocol):
    """A code host's adapter."""

    @property
    def name(self) -> str:
        """The CI command's name, and the registry's key: ``github``, ``gitlab``."""
        ...

    @property
    def title(self) -> str:
        """The host's name as people write it: ``GitHub``."""
        ...

    @property
    def change(self) -> str:
        """What the host calls a change under review: ``pull request``."""
        ...

    @property
    def local_command(self) -> str:
        """The command that reviews one of its changes from a clone: ``pr``, ``mr``."""
        ...

    def supports(self, capability: Capability) -> bool:
        """Whether the host does ``capability``."""
        ...

    def review_local(
        self,
        repo: git.Repo,
        request: LocalRequest,
        env: Mapping[str, str],
        *,
        events: EventSink | None = None,
        warn: Echo | None = None,
    ) -> LocalReview:
        """Fetch change ``request.number`` from the clone's remote, review it, and post the
        results when ``request.post`` asks."""
        ...

    def run_ci(
        self,
        repo: git.Repo,
        run: object,
        env: Mapping[str, str],
        *,
        echo: Echo,
        warn: Echo,
        events: EventSink | None = None,
    ) -> tuple[ExitCode, Report | None]:
        """The CI command: review the change the CI job is for and discuss it on the host;
        ``run`` is the adapter's own record of the command's options. The exit code, and
        the report when the command prints it."""
        ...

    def read_event(self, env: Mapping[str, str], *, warn: Echo) -> ChangeOnHost:
        """The change the CI job in ``env`` is for (``warn`` says what is unsafe about the
        event, such as GitHub's ``pull_request_target``)."""
        ...

    def connect(
        self, env: Mapping[str, str], change: ChangeOnHost
    ) -> AbstractContextManager[Connection]:
        """An API session about ``change`` with ``env``'s token, closed on leaving."""
        ...

    def read_intent(self, connection: Connection, other_projects: Collection[str] = ()) -> Intent:
        """The change's title, description and linked issues; issues of another project are
        read only when ``other_projects`` names it."""
        ...

    def read_dismissals(self, connection: Connection, rules: ConversationRules) -> Collected:
        """The team's dismissals in orch-review's threads on the change."""
        ...

    def place(self, connection: Connection, finding: Finding) -> DiffPlace | str:
        """Where ``finding`` sits on the change's diff, or why a comment cannot sit there."""
        ...

    def publish(
        self, connection: Connection, report: Report, rules: ConversationRules
    ) -> PublishOutcome:
        """Post ``report`` on the change: the team's dismissals suppressed, the findings
        on the diff, the rest in the one summary, orch-review's own threads reconciled.
        A refusal to write is the adapter's to report: GitHub's falls back in the outcome,
        GitLab's is raised for its run to say."""
        ...

    def keep_summary(self, connection: Connection, body: str) -> None:
        """Edit orch-review's summary comment on the change in place, or add it."""
        ...

    def answer_questions(self, connection: Connection, asking: Asking) -> Answered:
        """Answer the questions asked of orch-review on the change, each where it was
        asked: the comment that started the run (``comment-trigger``), or the questions
        pending in orch-review's threads (``questions-on-push``)."""
        ...
