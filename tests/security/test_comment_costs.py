"""What one ``@orch-review`` question may cost when the review's conversation is gone.

Without the stored conversation the answer starts afresh, with orchestration mode off: the
Workflow tool is not offered and a call to it fans nothing out, unless the question says
``deep``. A model eager to fan out gets at most three requests for ``@orch-review why?``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_api import BOT, FakeGitHubAPI
from tests.fakes.github_artifacts import ArtifactStore
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.model_io import ModelRequest, Reply
from tests.hosts.github.conftest import NUMBER, PullRepo, open_pull
from tests.hosts.github.test_comment_run import (
    MAINTAINER,
    _step_env,
    answer,
    default_branch_checkout,
    issue_comment_event,
    store,  # noqa: F401
)
from tests.security.verdicts import HOST_RESULTS, HostVerdict

pytestmark = pytest.mark.slow

MAX_REQUESTS = 3
SUBTASKS = [f"Audit concern {i} of app.py in depth." for i in range(20)]


def eager(request: ModelRequest) -> Reply:
    """A model that fans out whenever it can, whether or not it was offered Workflow."""
    if request.role in ("subagent", "verifier"):
        return Reply.tool_use("report_findings", {"summary": "nothing", "findings": []})
    if request.assistant_turns < 2:
        return Reply.tool_use("Workflow", {"subtasks": SUBTASKS})
    return Reply.text("The name reaches the SQL text.")


def _ask(
    body: str,
    actions_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    tmp_path: Path,
) -> Any:
    open_pull(github_api, pull_repo)
    github_api.add_issue_comment(NUMBER, body, login=MAINTAINER)
    comment = github_api.pulls[NUMBER].issue_comments[-1]
    env = _step_env(actions_env, tmp_path)
    event = issue_comment_event(comment["id"], comment["body"], comment["user"], tmp_path / "c")
    fake_api.policy = eager
    checkout = default_branch_checkout(pull_repo, tmp_path / "checkout")
    return answer({**env, **event}, checkout, fake_api)


def test_a_question_without_the_conversation_does_not_fan_out(
    actions_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,  # noqa: F811  (no artifact: the conversation is not found)
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    result = _ask("@orch-review why?", actions_env, fake_api, github_api, pull_repo, tmp_path)

    sent = fake_api.message_requests
    request.config.stash[HOST_RESULTS].append(
        HostVerdict(
            "4. `@orch-review why?` without the conversation fans out",
            0 < len(sent) <= MAX_REQUESTS,
            f"{len(sent)} requests to the Messages API",
        )
    )
    assert result.returncode == 0, result.stderr
    assert 0 < len(sent) <= MAX_REQUESTS, len(sent)
    assert {r.model_request().role for r in sent} == {"main"}
    assert not any(r.model_request().has_tool("Workflow") for r in sent)
    (reply,) = [c for c in github_api.pulls[NUMBER].issue_comments if c["user"] == BOT]
    assert "The name reaches the SQL text." in reply["body"]
    assert "orchestration mode off" in reply["body"]


def test_deep_without_the_conversation_may_fan_out(
    actions_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,  # noqa: F811
    tmp_path: Path,
) -> None:
    result = _ask(
        "@orch-review deep check it all", actions_env, fake_api, github_api, pull_repo, tmp_path
    )

    assert result.returncode == 0, result.stderr
    main = [r.model_request() for r in fake_api.message_requests]
    main = [r for r in main if r.role == "main"]
    assert main and all(r.has_tool("Workflow") for r in main)
