"""GitHub as a :class:`~orch_review.hosts.base.Host`: pull requests, reviewed in Actions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from orch_review.hosts.base import Capability, Echo, Host, LocalReview

if TYPE_CHECKING:
    import git

    from orch_review.errors import ExitCode
    from orch_review.events import EventSink
    from orch_review.findings.report import Report
    from orch_review.hosts.github.publish import Outcome
    from orch_review.hosts.local import LocalRequest

_CAPABILITIES: frozenset[Capability] = frozenset(
    {"comment-trigger", "resolve-threads", "suggestions", "dismiss-by-reaction", "annotations"}
)


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
        return LocalReview(report, prepared, None if outcome is None else _posted(outcome))

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


def _posted(outcome: Outcome) -> str:
    inline = len(outcome.placement.inline)
    if outcome.fallback:
        return f"orch-review: not posted: {outcome.fallback}."
    return f"orch-review: posted the summary comment and {inline} inline comment(s)."


HOST: Host = GitHubHost()
