"""The registry the command line picks a host's adapter from, and what each host says it does."""

from __future__ import annotations

import pytest

from orch_review.errors import ExitCode, UsageError
from orch_review.hosts import registry


def test_each_host_is_found_by_its_name_and_by_its_local_command() -> None:
    assert registry.names() == ("github", "gitlab")
    for name, command, change in (
        ("github", "pr", "pull request"),
        ("gitlab", "mr", "merge request"),
    ):
        adapter = registry.host(name)
        assert (adapter.name, adapter.local_command, adapter.change) == (name, command, change)
        assert registry.by_local_command(command) is adapter


def test_an_unknown_host_is_a_usage_error_that_names_the_known_ones() -> None:
    with pytest.raises(UsageError, match="knows github, gitlab") as caught:
        registry.host("bitbucket")
    assert caught.value.exit_code == ExitCode.USAGE
    with pytest.raises(UsageError, match="`cr`"):
        registry.by_local_command("cr")


def test_what_a_host_lacks_is_said_by_supports() -> None:
    github, gitlab = registry.host("github"), registry.host("gitlab")
    # GitHub answers a comment when it is written; GitLab CI, on the next pipeline run.
    assert github.supports("comment-trigger") and not gitlab.supports("comment-trigger")
    assert gitlab.supports("questions-on-push") and not github.supports("questions-on-push")
    # Only Actions has annotations to fall back on when the token may not comment.
    assert github.supports("annotations") and not gitlab.supports("annotations")
    for adapter in (github, gitlab):
        assert adapter.supports("resolve-threads") and adapter.supports("suggestions")


def test_an_adapter_refuses_another_hosts_run_record() -> None:
    from orch_review.hosts.gitlab.run import GitLabRun

    with pytest.raises(TypeError, match="GitHubRun, not GitLabRun"):
        registry.host("github").run_ci(
            None,  # type: ignore[arg-type]
            GitLabRun(),
            {},
            echo=print,
            warn=print,
        )
