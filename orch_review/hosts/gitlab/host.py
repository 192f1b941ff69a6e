"""GitLab as a :class:`~orch_review.hosts.base.Host`: merge requests, reviewed in GitLab CI."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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

    from orch_review.errors import ExitCode
    from orch_review.events import EventSink
    from orch_review.findings.records import Finding
    from orch_review.findings.report import Report
    from orch_review.hosts.dismissals import Collected, ConversationRules
    from orch_review.hosts.gitlab.api import GitLabClient
    from orch_review.hosts.gitlab.dismissals import Developers
    from orch_review.hosts.gitlab.event import MergeRequestJob
    from orch_review.hosts.gitlab.positions import Refs
    from orch_review.hosts.gitlab.publish import OwnThread, Published
    from orch_review.hosts.local import LocalRequest
    from orch_review.scope.stated_intent import Intent

# GitLab CI has no comment trigger: questions are answered on the next pipeline run.
_CAPABILITIES: frozenset[Capability] = frozenset(
    {"questions-on-push", "resolve-threads", "suggestions", "dismiss-by-reaction"}
)


@dataclass(frozen=True, slots=True)
class Discussions:
    """The merge request's discussions as one run reads them: who the token acts as, the
    discussions, orch-review's threads among them, and who counts as a Developer."""

    me: int
    found: list[dict[str, Any]]
    threads: Sequence[OwnThread]
    developer: Developers


@dataclass(slots=True)
class GitLabConnection:
    """An API session about one merge request. ``latest`` is its diff version (refs and
    the version's diffs) when the run read it already; the discussions are read once."""

    client: GitLabClient
    job: MergeRequestJob
    env: Mapping[str, str]
    latest: tuple[Refs, dict[str, object]] | None = None
    _discussions: Discussions | None = field(default=None, repr=False)

    @property
    def change(self) -> MergeRequestJob:
        """The merge request."""
        return self.job

    def version(self) -> tuple[Refs, dict[str, object]]:
        """The diff version under review, read once."""
        if self.latest is None:
            from orch_review.hosts.gitlab.run import latest_version

            self.latest = latest_version(self.client, self.job)
        return self.latest

    def discussions(self) -> Discussions:
        """The merge request's discussions and orch-review's threads, read once."""
        if self._discussions is None:
            from orch_review.hosts.gitlab.dismissals import Developers
            from orch_review.hosts.gitlab.publish import own_threads, whoami

            me = whoami(self.client)
            found = self.client.discussions(self.job.iid)
            self._discussions = Discussions(
                me, found, own_threads(found, me), Developers(self.client, me)
            )
        return self._discussions


@contextmanager
def connect(job: MergeRequestJob, env: Mapping[str, str]) -> Iterator[GitLabConnection]:
    """A session with ``job``'s GitLab API, with ``GITLAB_TOKEN`` or the job token."""
    from orch_review.hosts.gitlab.api import GitLabClient

    with GitLabClient(
        job.api_url, job.project_id, job.token, job_token=job.job_token, ca_file=job.ca_file
    ) as client:
        yield GitLabConnection(client, job, env)


def _own(connection: Connection) -> GitLabConnection:
    if not isinstance(connection, GitLabConnection):
        raise TypeError(f"the GitLab adapter needs a GitLabConnection, not {type(connection)}")
    return connection


class GitLabHost:
    """The GitLab adapter."""

    name = "gitlab"
    title = "GitLab"
    change = "merge request"
    local_command = "mr"

    def supports(self, capability: Capability) -> bool:
        """Whether GitLab does ``capability``."""
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
        """``orch-review mr N``."""
        from orch_review.hosts.gitlab.local import review_merge_request

        report, prepared, done = review_merge_request(repo, request, env, events=events, warn=warn)
        return LocalReview(report, prepared, None if done is None else done.said)

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
        """``orch-review gitlab`` (``run``: a :class:`~orch_review.hosts.gitlab.run.GitLabRun`)."""
        from orch_review.hosts.gitlab.run import GitLabRun, run_gitlab

        if not isinstance(run, GitLabRun):
            raise TypeError(f"the GitLab adapter runs a GitLabRun, not {type(run).__name__}")
        return run_gitlab(repo, run, env, echo=echo, warn=warn, events=events)

    def read_event(self, env: Mapping[str, str], *, warn: Echo) -> MergeRequestJob:
        """The merge request of the GitLab CI job in ``env`` (its predefined variables)."""
        from orch_review.hosts.gitlab.event import MergeRequestJob

        return MergeRequestJob.from_env(env)

    def connect(
        self, env: Mapping[str, str], change: ChangeOnHost
    ) -> AbstractContextManager[GitLabConnection]:
        """A session with the GitLab API about merge request ``change``."""
        from orch_review.hosts.gitlab.event import MergeRequestJob

        if not isinstance(change, MergeRequestJob):
            raise TypeError(f"the GitLab adapter needs a MergeRequestJob, not {type(change)}")
        return connect(change, env)

    def read_intent(self, connection: Connection, other_projects: Collection[str] = ()) -> Intent:
        """The merge request's title, description and linked issues: from the API when
        ``GITLAB_TOKEN`` may read it, else from CI's variables (no linked issue then)."""
        from orch_review.hosts.gitlab.run import job_intent

        own = _own(connection)
        job = own.job
        return job_intent(own.client, job, own.env, job.token is not None, other_projects)

    def read_dismissals(self, connection: Connection, rules: ConversationRules) -> Collected:
        """A Developer's ``ignore`` reply or thumbs-down in orch-review's threads (GitLab's
        trigger and reaction are fixed: ``rules`` gives only the learned fingerprints)."""
        from orch_review.hosts.dismissals import Collected
        from orch_review.hosts.gitlab import dismissals

        own = _own(connection)
        read = own.discussions()
        found = dismissals.collect(
            own.client, own.job.iid, read.found, read.threads, read.me, read.developer
        )
        return Collected(found)

    def place(self, connection: Connection, finding: Finding) -> DiffPlace | str:
        """The lines of the latest diff version a discussion on ``finding`` covers."""
        from orch_review.hosts.gitlab.positions import files_from_version, place

        refs, version = _own(connection).version()
        placed = place(finding, files_from_version(version), refs)
        if isinstance(placed, str):
            return placed
        first = placed.first if placed.first < placed.last else None  # one line: as GitHub
        return DiffPlace(finding.path, first, placed.last)

    def publish(
        self, connection: Connection, report: Report, rules: ConversationRules
    ) -> Published:
        """The team's dismissals suppressed, the findings posted as discussions, orch-review's
        threads resolved when their finding is gone, the summary note kept. A refusal to
        write (``Forbidden``) is raised: the run says it and goes on."""
        from orch_review.hosts.dismissals import learnings_to_commit, suppress_dismissed
        from orch_review.hosts.gitlab.positions import files_from_version
        from orch_review.hosts.gitlab.publish import publish

        own = _own(connection)
        read = own.discussions()
        dismissed = self.read_dismissals(own, rules).dismissed
        report = suppress_dismissed(report, dismissed)
        refs, version = own.version()
        done = publish(
            own.client,
            own.job.iid,
            report,
            refs,
            files_from_version(version),
            me=read.me,
            threads=read.threads,
            dismissed=list(dismissed.values()),
            to_learn=learnings_to_commit(report, dismissed, rules.learned),
        )
        done.report = report
        return done

    def keep_summary(self, connection: Connection, body: str) -> None:
        """Edit orch-review's summary note on the merge request, or add it."""
        from orch_review.hosts.gitlab.publish import upsert_summary, whoami

        own = _own(connection)
        read = own._discussions
        upsert_summary(own.client, own.job.iid, body, read.me if read else whoami(own.client))

    def answer_questions(self, connection: Connection, asking: Asking) -> Answered:
        """The questions pending in orch-review's threads (at most
        :data:`~orch_review.hosts.gitlab.questions.MAX_ANSWERS`), each answered in its thread
        by a follow-up continuing ``asking.conversation`` (orchestration mode off unless
        ``deep``). Its replies have no address: GitLab's notes are answered in place."""
        from orch_review import core
        from orch_review.hosts.gitlab import questions

        own = _own(connection)
        read = own.discussions()
        asked = questions.pending(read.found, read.threads, read.me, read.developer)
        refs, _ = own.version()
        iid = own.job.iid

        def answer(question: str, deep: bool) -> tuple[str, bool, list[str]]:
            result = core.answer_follow_up(
                asking.repo,
                asking.config,
                asking.env,
                question,
                commit=refs.head_sha,
                scope=f"merge request !{iid} at {refs.head_sha[:12]}",
                conversation=asking.conversation,
                orchestrate=deep,
            )
            return result.text, result.orchestrated, list(result.notes)

        replies = questions.answer_all(
            own.client, iid, asked, asking.findings, answer, refs.head_sha
        )
        return Answered(tuple(replies), ("",) * len(replies))


GITLAB = GitLabHost()  # the adapter, as its own modules call it
HOST: Host = GITLAB
