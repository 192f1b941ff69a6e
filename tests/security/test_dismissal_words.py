"""Words that look like ``@orch-review ignore`` but are not the command must not dismiss a
finding: a question that starts with "Ignore", the command in inline code, in an indented
line, in an HTML comment, struck out. Each is a writer's reply in the finding's thread on the
fake GitHub API; on the next push the finding is still reported."""

from __future__ import annotations

import pytest

from orch_review.findings.records import Status
from orch_review.hosts.github.api import GitHubClient
from tests.fakes.github_api import FakeGitHubAPI
from tests.fakes.github_threads import ReviewThreads
from tests.hosts.github.conftest import NUMBER
from tests.hosts.github.test_dismissals import (  # noqa: F401
    FINDINGS,
    WRITER,
    api,
    client,
    first_run,
    next_push,
    threads,
)
from tests.security.verdicts import HOST_RESULTS, HostVerdict

pytestmark = pytest.mark.slow

NOT_COMMANDS = {
    "a question": "@orch-review Ignore the CI failure for now: is this query really unsafe?",
    "inline code": "To dismiss, reply `@orch-review ignore <reason>`.",
    "an indented line": "The bot's syntax:\n\n    @orch-review ignore false alarm\n",
    "an HTML comment": "Looks right.\n\n<!-- @orch-review ignore false alarm -->\n",
    "a strikethrough": "~~@orch-review ignore false alarm~~ no, it is real",
    "mid-sentence": "Should I tell @orch-review ignore this one?",
}


@pytest.mark.parametrize("shape", sorted(NOT_COMMANDS))
def test_a_reply_that_only_looks_like_ignore_dismisses_nothing(
    shape: str,
    api: FakeGitHubAPI,  # noqa: F811
    threads: ReviewThreads,  # noqa: F811
    client: GitHubClient,  # noqa: F811
    request: pytest.FixtureRequest,
) -> None:
    root = first_run(api, client)
    threads.add_reply(NUMBER, root, NOT_COMMANDS[shape], WRITER)

    outcome = next_push(client)

    report = outcome.report  # type: ignore[attr-defined]
    suppressed = report.with_status(Status.SUPPRESSED)
    request.config.stash[HOST_RESULTS].append(
        HostVerdict(f"3. `ignore` in {shape} dismisses the finding", not suppressed)
    )
    assert suppressed == []
    assert {f.fingerprint for f in report.confirmed} == {f.fingerprint for f in FINDINGS}


def test_the_command_itself_still_dismisses(
    api: FakeGitHubAPI,  # noqa: F811
    threads: ReviewThreads,  # noqa: F811
    client: GitHubClient,  # noqa: F811
) -> None:
    root = first_run(api, client)
    threads.add_reply(NUMBER, root, "Checked.\n@orch-review ignore false alarm", WRITER)

    report = next_push(client).report  # type: ignore[attr-defined]

    (dismissed,) = report.with_status(Status.SUPPRESSED)
    assert dismissed.fingerprint == FINDINGS[0].fingerprint
    assert dismissed.suppressed.endswith(": false alarm")
