"""The interface every code host's adapter implements.

A host is where a change is reviewed in CI and discussed: GitHub's pull requests, GitLab's
merge requests. The command line knows a host only through this interface and the
registry (:mod:`orch_review.hosts.registry`); the review itself never knows which host it
serves.

An adapter is a package ``hosts/<name>/`` with one module per step of a host's run, each
holding the same-named operation whatever the host:

- ``event``: read the CI event (the change, its base and head, the token) from the
  environment;
- ``comments`` or ``positions``: place a finding on the change's diff, or say why not;
- ``publish``: publish the findings (``publish``), keep one summary comment edited in place,
  and reconcile orch-review's own threads (resolve those whose finding is gone);
- ``dismissals``: read the team's dismissals (``collect``);
- ``questions`` or ``conversation_run``: answer the questions asked in orch-review's threads;
- ``intent``: read the change's title, description and linked issues;
- ``local``: fetch a change into a local clone and review it (``pr N``, ``mr N``);
- ``run``: the CI command's flow;
- ``host``: the adapter object this module describes, registered by name.

What adapters share (markers, comment body, suggestion block, summary, dismissal record,
mention parser, replies, the local request, HTTP errors) lives in ``hosts/`` itself; an
adapter imports it and the core, never another adapter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    import git

    from orch_review.core import PreparedReview
    from orch_review.errors import ExitCode
    from orch_review.events import EventSink
    from orch_review.findings.report import Report
    from orch_review.hosts.local import LocalRequest

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
