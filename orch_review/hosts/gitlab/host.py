"""GitLab as a :class:`~orch_review.hosts.base.Host`: merge requests, reviewed in GitLab CI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from orch_review.hosts.base import Capability, Echo, Host, LocalReview

if TYPE_CHECKING:
    import git

    from orch_review.errors import ExitCode
    from orch_review.events import EventSink
    from orch_review.findings.report import Report
    from orch_review.hosts.gitlab.publish import Published
    from orch_review.hosts.local import LocalRequest

# GitLab CI has no comment trigger: questions are answered on the next pipeline run.
_CAPABILITIES: frozenset[Capability] = frozenset(
    {"questions-on-push", "resolve-threads", "suggestions", "dismiss-by-reaction"}
)


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
        return LocalReview(report, prepared, None if done is None else _posted(done))

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


def _posted(done: Published) -> str:
    return (
        f"orch-review: {done.posted} new discussion(s), {done.already} already posted, "
        f"{len(done.outside)} in the summary only, {done.resolved} resolved."
    )


HOST: Host = GitLabHost()
