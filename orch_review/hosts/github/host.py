"""GitHub as a :class:`~orch_review.hosts.base.Host`: pull requests, reviewed in Actions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from orch_review.hosts.base import (
    Answered,
    Asking,
    Capability,
    ChangeOnHost,
    Connection,
    DiffPlace,
    Echo,
    Host,
    LocalReview,
)

if TYPE_CHECKING:
    import git

    from orch_review.config.choices import CommentMode
    from orch_review.errors import ExitCode
    from orch_review.events import EventSink
    from orch_review.findings.records import Finding
    from orch_review.findings.report import Report
    from orch_review.hosts.dismissals import Collected, ConversationRules
    from orch_review.hosts.github.api import GitHubClient
    from orch_review.hosts.github.comments import DiffLines
    from orch_review.hosts.github.event import CommentEvent, GitHubContext, PullRequest
    from orch_review.hosts.github.publish import Outcome
    from orch_review.hosts.local import LocalRequest
    from orch_review.scope.stated_intent import Intent

_CAPABILITIES: frozenset[Capability] = frozenset(
    {"comment-trigger", "resolve-threads", "suggestions", "dismiss-by-reaction", "annotations"}
)


@dataclass(slots=True)
class GitHubConnection:
    """An API session about one pull request; ``mode`` is how findings are posted,
    ``comment`` the comment that started the run (None for a review's run) and ``today``
    the date a dismissal is learned on when the comment has none."""

    client: GitHubClient
    context: GitHubContext
    pull: PullRequest
    mode: CommentMode = "review"
    comment: CommentEvent | None = None
    today: Callable[[], dt.date] = dt.date.today
    _diff: DiffLines | None = field(default=None, repr=False)

    @property
    def change(self) -> PullRequest:
        """The pull request."""
        return self.pull

    def diff(self) -> DiffLines:
        """The pull request's diff lines, read once."""
        if self._diff is None:
            from orch_review.hosts.github.comments import DiffLines

            self._diff = DiffLines.from_files(self.client.pull_files(self.pull.number))
        return self._diff


@contextmanager
def connect(
    context: GitHubContext, pull: PullRequest, mode: CommentMode = "review"
) -> Iterator[GitHubConnection]:
    """A session with ``context``'s API (REST and GraphQL) about ``pull``."""
    from orch_review.hosts.github.api import GitHubClient

    with GitHubClient(
        context.api_url, context.repository, context.token, graphql_url=context.graphql_url
    ) as client:
        yield GitHubConnection(client, context, pull, mode)


def _own(connection: Connection) -> GitHubConnection:
    if not isinstance(connection, GitHubConnection):
        raise TypeError(f"the GitHub adapter needs a GitHubConnection, not {type(connection)}")
    return connection


class GitHubHost:
    """The GitHub adapter."""

    name = "github"
    title = "GitHub"
    change = "pull request"
    local_command = "pr"

    def supports(self, capability: Capability) -> bool:
        """Whether GitHub does ``capability`` (it answers comments when they are written,
        not on the next push)."""
        return capability in _CAPABILITIES

    def review_local(
        self,
        repo: git.Repo,
        request: LocalRequest,
        env: Mapping[str, str],
        *,
        events: EventSink | None = None,
        warn: Echo | None = None,
    ) -> LocalReview:
        """``orch-review pr N``."""
        from orch_review.hosts.github.local import review_pull

        report, prepared, outcome = review_pull(repo, request, env, events=events, warn=warn)
        return LocalReview(report, prepared, None if outcome is None else outcome.said)

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
        """``orch-review github`` (``run`` is a :class:`~orch_review.hosts.github.run.GitHubRun`);
        the report is not returned: the command prints annotations, not the report."""
        from orch_review.hosts.github.run import GitHubRun, run_github

        if not isinstance(run, GitHubRun):
            raise TypeError(f"the GitHub adapter runs a GitHubRun, not {type(run).__name__}")
        return run_github(repo, run, env, echo=echo, warn=warn, events=events), None

    def read_event(self, env: Mapping[str, str], *, warn: Echo) -> PullRequest:
        """The pull request of the Actions event in ``env`` (``GITHUB_EVENT_PATH``)."""
        from orch_review.hosts.github.event import GitHubContext
        from orch_review.hosts.github.run import GitHubRun, find_pull_request

        return find_pull_request(GitHubRun(), GitHubContext.from_env(env), env, warn)

    def connect(
        self, env: Mapping[str, str], change: ChangeOnHost
    ) -> AbstractContextManager[GitHubConnection]:
        """A session with ``env``'s GitHub API and token about pull request ``change``."""
        from orch_review.hosts.github.event import GitHubContext, PullRequest

        if not isinstance(change, PullRequest):
            raise TypeError(f"the GitHub adapter needs a PullRequest, not {type(change)}")
        return connect(GitHubContext.from_env(env, change.base_repository), change)

    def read_intent(self, connection: Connection, other_projects: Collection[str] = ()) -> Intent:
        """The pull request's title, body and linked issues."""
        from orch_review.hosts.github.intent import pull_intent

        own = _own(connection)
        return pull_intent(own.context, own.pull, other_projects, own.client)

    def read_dismissals(self, connection: Connection, rules: ConversationRules) -> Collected:
        """The writers' ``ignore`` replies and reactions in orch-review's threads."""
        from orch_review.hosts.github.api import ACTIONS_BOT
        from orch_review.hosts.github.publish import read_threads

        own = _own(connection)
        author = own.client.login() or ACTIONS_BOT
        return read_threads(own.client, own.pull, author, rules)[3]

    def place(self, connection: Connection, finding: Finding) -> DiffPlace | str:
        """The lines of the pull request's diff an inline comment on ``finding`` covers."""
        placed = _own(connection).diff().place(finding)
        if isinstance(placed, str):
            return placed
        first, last = placed
        return DiffPlace(finding.path, first, last)

    def publish(self, connection: Connection, report: Report, rules: ConversationRules) -> Outcome:
        """Post ``report`` as the connection's comment mode asks; a refusal falls back in the
        outcome (``fallback``), never raised."""
        from orch_review.hosts.github.publish import publish

        own = _own(connection)
        return publish(own.client, own.pull, report, own.mode, conversation=rules)

    def keep_summary(self, connection: Connection, body: str) -> None:
        """Edit orch-review's summary comment on the pull request, or add it."""
        from orch_review.hosts.github.api import ACTIONS_BOT
        from orch_review.hosts.github.publish import upsert_summary

        own = _own(connection)
        upsert_summary(own.client, own.pull.number, body, own.client.login() or ACTIONS_BOT)

    def answer_questions(self, connection: Connection, asking: Asking) -> Answered:
        """Reply to the comment that started the run (``connection.comment``), in its
        review thread or as a conversation comment: the answer continues the review's
        conversation stored with the run's artifact (``asking.conversation`` is not used),
        or acknowledges an ``ignore``. Nothing when the run was not started by a comment
        asking orch-review something."""
        from orch_review.hosts.github.conversation_run import answer_comment

        return answer_comment(_own(connection), asking)


GITHUB = GitHubHost()  # the adapter, as its own modules call it
HOST: Host = GITHUB
