"""Anyone who can comment on a pull request can write orch-review's hidden markers; through
the real `github` command, none of them steers what orch-review posts or edits."""

from __future__ import annotations

import pytest

from tests.fakes.github_api import FakeGitHubAPI
from tests.helpers import run_cli
from tests.hosts.github.conftest import NUMBER, PullRepo
from tests.security.verdicts import HOST_RESULTS, HostVerdict


def test_spoofed_markers_steer_nothing(
    opened_env: dict[str, str],
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    request: pytest.FixtureRequest,
) -> None:
    # Mallory comments before the first run: a finding marker on the line of the real
    # injection, a made-up one, and a "summary" for orch-review to edit.
    github_api.add_review_comment(
        NUMBER, "<!-- orch-review:finding x --> nothing here", "app.py", 6, login="mallory"
    )
    first = run_cli(pull_repo.path, opened_env, "github")
    assert first.returncode == 0, first.stderr
    real = next(c for c in github_api.pulls[NUMBER].review_comments if c["user"]["type"] == "Bot")
    fingerprint = real["body"].split()[2]
    github_api.add_review_comment(
        NUMBER, f"<!-- orch-review:finding {fingerprint} --> hush", "calc.py", 30, login="mallory"
    )
    github_api.add_review_comment(
        NUMBER, "<!-- orch-review:finding made-up --> gone", "app.py", 1, login="mallory"
    )
    github_api.add_issue_comment(NUMBER, "<!-- orch-review:summary --> edit me", login="mallory")

    second = run_cli(pull_repo.path, opened_env, "github")

    comments = github_api.pulls[NUMBER].issue_comments
    ours = [c for c in comments if c["user"]["login"] == "github-actions[bot]"]
    problems = []
    if any(c["body"] != "<!-- orch-review:summary --> edit me" for c in comments if c not in ours):
        problems.append("mallory's comment was edited")
    if len(ours) != 1:
        problems.append(f"{len(ours)} summaries by orch-review")
    elif "Resolved since an earlier run" in ours[0]["body"]:
        problems.append("made-up fingerprints listed as resolved")
    if any(r.status == 403 for r in github_api.requests if r.method == "PATCH"):
        problems.append("tried to edit someone else's comment")
    attack = "2. spoofed orch-review markers in PR comments"
    verdict = HostVerdict(attack, not problems, "; ".join(problems))
    request.config.stash[HOST_RESULTS].append(verdict)
    assert second.returncode == 0, second.stderr
    assert not problems, problems
    # The first run posted on app.py:6 despite mallory's marker there; the second posted
    # nothing twice (its own markers count) and edited its own summary.
    bot_lines = sorted(
        (c["path"], c["line"])
        for c in github_api.pulls[NUMBER].review_comments
        if c["user"]["type"] == "Bot"
    )
    assert bot_lines == [("app.py", 6), ("calc.py", 30)]
