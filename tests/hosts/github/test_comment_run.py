"""Comments on the pull request answered in place, end to end through action.yml's review
step: the review run leaves its conversation as an artifact, a comment's run downloads it
and continues the conversation with orchestration mode off (``deep``: on), and replies in the
thread, or as a conversation comment. Against the fake GitHub API (replies, permissions,
artifacts with a redirect to a storage host) and the fake Messages API."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orch_review.engine.agents.prompts import MODE_ENTER, MODE_EXIT
from orch_review.hosts.github.artifacts import MEMBER, artifact_name
from orch_review.hosts.markers import REPLY_MARKER
from tests.conftest import git
from tests.fakes.github_api import BOT, FakeGitHubAPI
from tests.fakes.github_artifacts import ArtifactStore, zipped
from tests.fakes.github_threads import add_reply, install, thread
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.model_io import ModelRequest, Reply
from tests.gitrepos import commit
from tests.helpers import cli_launcher
from tests.hosts.github.conftest import EVENTS, NUMBER, PullRepo, open_pull, read_outputs
from tests.hosts.github.test_action import run_step_in, steps

MAINTAINER = "octo-maintainer"  # admin in the fake
INPUTS = {
    "anthropic-api-key": "test-key",
    "extra-args": "--filter-mode nofilter --no-progress",
    "sandbox": "auto",
}


@pytest.fixture
def store(github_api: FakeGitHubAPI) -> Any:
    install(github_api)
    with ArtifactStore(github_api) as artifacts:
        yield artifacts


def _step_env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The job's environment before the Action's inputs: no key, no token, the venv."""
    step_env = {k: v for k, v in env.items() if not k.startswith(("ANTHROPIC_", "ORCH_REVIEW_"))}
    step_env.pop("GITHUB_TOKEN")
    cli_launcher(Path(step_env["RUNNER_TEMP"]) / "orch-review-venv" / "bin", step_env)
    return step_env


def _review_step() -> dict[str, Any]:
    return next(step for step in steps() if step.get("id") == "review")


def review_and_upload(
    env: dict[str, str], pull_repo: PullRepo, fake_api: FakeMessagesAPI, store: ArtifactStore
) -> Path:
    """Run the review of the `opened` event, then upload its conversation as the Action's
    upload-artifact step would; returns the folder it uploaded."""
    inputs = {**INPUTS, "anthropic-base-url": fake_api.base_url}
    result = run_step_in(pull_repo.path, _review_step(), inputs, env)
    assert result.returncode == 0, result.stderr
    folder = Path(env["RUNNER_TEMP"]) / "orch-review" / "conversation"
    member = folder / MEMBER
    assert member.is_file(), result.stderr
    store.add(artifact_name(NUMBER), zipped({MEMBER: member.read_bytes()}), head_sha=pull_repo.head)
    return folder


def finding_comment(api: FakeGitHubAPI, path: str) -> dict[str, Any]:
    """orch-review's inline comment on ``path``."""
    return next(
        c
        for c in api.pulls[NUMBER].review_comments
        if c["path"] == path and c["user"] == BOT and "in_reply_to_id" not in c
    )


def default_branch_checkout(pull_repo: PullRepo, where: Path) -> Path:
    """What actions/checkout gives an `issue_comment` run: the default branch alone."""
    git(pull_repo.path, "config", "uploadpack.allowAnySHA1InWant", "true")
    git(
        where.parent,
        "clone",
        "-q",
        "--single-branch",
        "--branch",
        "main",
        "--depth",
        "1",
        f"file://{pull_repo.path}",
        str(where),
    )
    return where


def review_comment_event(
    pull_repo: PullRepo, comment: dict[str, Any], where: Path, fork: bool = False
) -> dict[str, str]:
    """GITHUB_EVENT_NAME and GITHUB_EVENT_PATH for a `pull_request_review_comment`."""
    payload = json.loads((EVENTS / "pull_request_review_comment.created.json").read_text())
    payload["comment"].update(
        {k: comment.get(k) for k in ("id", "body", "user", "path", "line", "in_reply_to_id")}
    )
    pr = payload["pull_request"]
    pr["number"] = NUMBER
    pr["head"]["sha"], pr["base"]["sha"] = pull_repo.head, pull_repo.base
    if fork:
        pr["head"]["repo"].update(full_name="contributor/demo", fork=True)
    where.write_text(json.dumps(payload), encoding="utf-8")
    return {"GITHUB_EVENT_NAME": "pull_request_review_comment", "GITHUB_EVENT_PATH": str(where)}


def issue_comment_event(
    comment_id: int, body: str, user: dict[str, str], where: Path, on_pull: bool = True
) -> dict[str, str]:
    """GITHUB_EVENT_NAME and GITHUB_EVENT_PATH for an `issue_comment` on the pull request."""
    payload = json.loads((EVENTS / "issue_comment.created.json").read_text())
    payload["issue"]["number"] = NUMBER
    if not on_pull:
        del payload["issue"]["pull_request"]
    payload["comment"].update({"id": comment_id, "body": body, "user": user})
    where.write_text(json.dumps(payload), encoding="utf-8")
    return {"GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": str(where)}


def answering(text: str) -> Callable[[ModelRequest], Reply]:
    """A model that answers every main turn with ``text``, without tools."""

    def policy(request: ModelRequest) -> Reply:
        assert request.role == "main", request.role
        return Reply.text(text)

    return policy


def ask_in_thread(
    github_api: FakeGitHubAPI, fake_api: FakeMessagesAPI, body: str, reply: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A maintainer's ``body`` in the thread of orch-review's comment on app.py, after the
    review; the model will answer ``reply``. Returns the thread's top comment and the ask."""
    top = finding_comment(github_api, "app.py")
    asked = add_reply(github_api, NUMBER, top["id"], body, login=MAINTAINER)
    fake_api.reset()
    fake_api.policy = answering(reply)
    return top, asked


def answer(env: dict[str, str], cwd: Path, fake_api: FakeMessagesAPI) -> Any:
    """Run the Action's review step as a comment's run."""
    inputs = {**INPUTS, "anthropic-base-url": fake_api.base_url}
    return run_step_in(cwd, _review_step(), inputs, env)


def _last_turn_notices(request: ModelRequest) -> list[str]:
    """System messages after the last user turn."""
    messages = request.messages
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return [m["content"] for m in messages[last_user + 1 :] if m["role"] == "system"]


def _texts(notices: list[Any]) -> list[str]:
    return [n if isinstance(n, str) else "".join(b["text"] for b in n) for n in notices]


def test_a_maintainers_question_in_a_findings_thread_gets_one_reply_with_the_mode_off(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    env = _step_env(opened_env, tmp_path)
    review_and_upload(env, pull_repo, fake_api, store)
    review_messages = fake_api.requests_for("main")[-1].body["messages"]
    answered = "The name reaches the SQL text unescaped, @octocat."
    top, asked = ask_in_thread(github_api, fake_api, "@orch-review why?", answered)
    checkout = default_branch_checkout(pull_repo, tmp_path / "merge-checkout")
    event = review_comment_event(pull_repo, asked, tmp_path / "comment.json")

    result = answer({**env, **event}, checkout, fake_api)

    assert result.returncode == 0, result.stderr
    replies = [c for c in thread(github_api, NUMBER, top["id"]) if c["user"] == BOT]
    assert len(replies) == 1
    body = replies[0]["body"]
    assert body.startswith(REPLY_MARKER)
    assert "The name reaches the SQL text unescaped" in body
    assert "@octocat" not in body  # sanitized: no notification
    assert "orchestration mode off" in body and "not found" not in body
    job_summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert f"Posted [a reply]({replies[0]['html_url']}) to comment {asked['id']}" in job_summary
    (request,) = fake_api.message_requests
    model_request = request.model_request()
    assert _texts(_last_turn_notices(model_request)) == [MODE_EXIT]  # the mode turned off
    messages = request.body["messages"]
    assert [m["role"] for m in messages[: len(review_messages)]] == [
        m["role"] for m in review_messages
    ]  # the review's conversation, continued
    question = model_request.last_user_text
    assert "why?" in question and "SQL query built with an f-string" in question
    assert "app.py" in question and "confirmed by a verifier" in question
    assert store.downloads and all("authorization" not in h for h in store.downloads)
    assert not (checkout / "app.py").exists()  # the pull request's code was never checked out


def test_a_conversation_the_api_refuses_is_answered_afresh(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    env = _step_env(opened_env, tmp_path)
    review_and_upload(env, pull_repo, fake_api, store)
    top, asked = ask_in_thread(
        github_api, fake_api, "@orch-review why?", "Because the name is not escaped."
    )
    # "prompt is too long": the stored conversation no longer fits, whatever it holds.
    long_history = lambda r: len(r.body["messages"]) > 3  # noqa: E731
    fake_api.add_fault("status", status=400, error_type="invalid_request_error", match=long_history)
    checkout = default_branch_checkout(pull_repo, tmp_path / "merge-checkout")
    event = review_comment_event(pull_repo, asked, tmp_path / "comment.json")

    result = answer({**env, **event}, checkout, fake_api)

    assert result.returncode == 0, result.stderr
    (reply,) = [c for c in thread(github_api, NUMBER, top["id"]) if c["user"] == BOT]
    assert "Because the name is not escaped." in reply["body"]
    assert "refused the review's conversation" in reply["body"]
    first, second = fake_api.message_requests
    assert first.fault == "status" and second.fault is None
    assert len(second.body["messages"]) < len(first.body["messages"])  # started afresh


def test_deep_switches_the_mode_on_for_that_turn(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    env = _step_env(opened_env, tmp_path)
    review_and_upload(env, pull_repo, fake_api, store)
    github_api.add_issue_comment(NUMBER, "@orch-review deep is calc.py safe?", login=MAINTAINER)
    comment = github_api.pulls[NUMBER].issue_comments[-1]
    fake_api.reset()
    fake_api.policy = answering("Checked again with a fan-out: calc.py divides by `count`.")
    checkout = default_branch_checkout(pull_repo, tmp_path / "default-checkout")
    event = issue_comment_event(
        comment["id"], comment["body"], comment["user"], tmp_path / "c.json"
    )

    result = answer({**env, **event}, checkout, fake_api)

    assert result.returncode == 0, result.stderr
    replies = [c for c in github_api.pulls[NUMBER].issue_comments if c["user"] == BOT]
    answers = [c for c in replies if c["body"].startswith(REPLY_MARKER)]
    assert len(answers) == 1 and "calc.py divides by" in answers[0]["body"]
    assert "orchestration mode on" in answers[0]["body"]
    assert "not found" not in answers[0]["body"]  # the review's conversation, from the artifact
    request = fake_api.message_requests[0].model_request()
    assert MODE_EXIT not in _texts(_last_turn_notices(request))
    assert request.system_messages[-1] == MODE_ENTER  # on since the review: no exit notice
    assert "is calc.py safe?" in request.last_user_text
    assert request.assistant_turns > 1  # the review's turns come first


@pytest.mark.parametrize(
    ("login", "kind", "body", "why"),
    [
        ("passer-by", "User", "@orch-review why?", "has no write access"),
        ("renovate[bot]", "Bot", "@orch-review why?", "by a bot"),
        (MAINTAINER, "User", f"{REPLY_MARKER}\n@orch-review why?", "orch-review's replies"),
        (MAINTAINER, "User", "> @orch-review why?\nquoting the docs", "mentions no one"),
    ],
    ids=["no-write-access", "bot", "own-reply", "quoted"],
)
def test_comments_that_may_not_ask_get_no_reply(
    login: str,
    kind: str,
    body: str,
    why: str,
    actions_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    open_pull(github_api, pull_repo)
    github_api.add_review_comment(NUMBER, "<!-- orch-review:finding abc -->\nx", "app.py", 1)
    top = github_api.pulls[NUMBER].review_comments[-1]
    asked = add_reply(github_api, NUMBER, top["id"], body, login=login, kind=kind)
    fake_api.policy = answering("never sent")
    env = _step_env(actions_env, tmp_path)
    event = review_comment_event(pull_repo, asked, tmp_path / "comment.json")
    before = len(github_api.requests)

    result = answer({**env, **event}, pull_repo.path, fake_api)

    assert result.returncode == 0, result.stderr
    assert github_api.writes() == []
    assert fake_api.message_requests == []
    assert "orch-review: no reply: " in result.stdout and why in result.stdout
    job_summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert f"No reply to comment {asked['id']}" in job_summary and why in job_summary
    assert read_outputs(env)["findings-count"] == "0"
    asked_github = [r.path for r in github_api.requests[before:]]
    if why == "has no write access":  # the one question asked: nothing read, nothing fetched
        assert len(asked_github) == 1 and asked_github[0].endswith("/permission")
    else:
        assert asked_github == []


def test_without_the_artifact_it_answers_from_the_finding_and_the_diff(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    env = _step_env(opened_env, tmp_path)
    inputs = {**INPUTS, "anthropic-base-url": fake_api.base_url}
    assert run_step_in(pull_repo.path, _review_step(), inputs, env).returncode == 0
    # Only a fork's run uploaded something under the name: it is not used.
    store.add(artifact_name(NUMBER), zipped({MEMBER: b"{}"}), head_sha=pull_repo.head, fork=True)
    top = finding_comment(github_api, "app.py")
    asked = add_reply(github_api, NUMBER, top["id"], "@orch-review how to fix?", login=MAINTAINER)
    fake_api.reset()
    fake_api.policy = answering("Bind `name` as a parameter instead of formatting it in.")
    checkout = default_branch_checkout(pull_repo, tmp_path / "checkout")
    event = review_comment_event(pull_repo, asked, tmp_path / "comment.json")

    result = answer({**env, **event}, checkout, fake_api)

    assert result.returncode == 0, result.stderr
    (reply,) = [c for c in thread(github_api, NUMBER, top["id"]) if c["user"] == BOT]
    assert "Bind `name` as a parameter" in reply["body"]
    assert "conversation was not found" in reply["body"]
    assert store.downloads == []  # the fork's artifact was never fetched
    (request,) = fake_api.message_requests
    question = request.model_request().last_user_text
    assert "SQL query built with an f-string" in question  # the finding, as posted
    assert "--- app.py (added)" in question and "+    cursor.execute(f" in question  # the diff
    assert len(request.body["messages"]) <= 2  # a fresh session, not the review's


def test_ignore_in_a_findings_thread_is_acknowledged_with_the_learning(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    import tomllib

    env = _step_env(opened_env, tmp_path)
    review_and_upload(env, pull_repo, fake_api, store)
    reason = 'false alarm: "name" is checked ``` upstream'
    top, asked = ask_in_thread(github_api, fake_api, f"@orch-review ignore {reason}", "never sent")
    fingerprint = top["body"].split()[2]
    event = review_comment_event(pull_repo, asked, tmp_path / "comment.json")

    result = answer({**env, **event}, pull_repo.path, fake_api)

    assert result.returncode == 0, result.stderr
    assert fake_api.message_requests == []
    (reply,) = [c for c in thread(github_api, NUMBER, top["id"]) if c["user"] == BOT]
    body = reply["body"]
    assert body.startswith(REPLY_MARKER) and "Dismissed for this pull request" in body
    fence = body.split("learnings.toml`:\n\n", 1)[1].split("toml\n", 1)[0]
    snippet = body.split(f"{fence}toml\n", 1)[1].split(f"\n{fence}", 1)[0]
    (learning,) = tomllib.loads(snippet)["learning"]
    assert learning == {
        "fingerprint": fingerprint,
        "category": "security",
        "reason": reason,
        "who": MAINTAINER,
        "when": "2026-11-30",
    }


def test_without_a_sandbox_the_answer_runs_no_command(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    env = _step_env(opened_env, tmp_path)
    review_and_upload(env, pull_repo, fake_api, store)
    github_api.add_issue_comment(NUMBER, "@orch-review does app.py run?", login=MAINTAINER)
    comment = github_api.pulls[NUMBER].issue_comments[-1]
    ran = tmp_path / "ran"
    seen: list[list[str]] = []

    def policy(request: ModelRequest) -> Reply:
        if request.tool_results():
            seen.append([text for _, text, _ in request.tool_results()])
            return Reply.text("Without commands: it would, by reading it.")
        return Reply.tool_use("bash", {"command": f"python app.py; touch {ran}"})

    fake_api.reset()
    fake_api.policy = policy
    checkout = default_branch_checkout(pull_repo, tmp_path / "checkout")
    event = issue_comment_event(comment["id"], comment["body"], comment["user"], tmp_path / "e")
    no_bwrap = {"ORCH_REVIEW_BWRAP_PATH": str(tmp_path / "no-such-bwrap")}
    inputs = {**INPUTS, "sandbox": "bubblewrap", "anthropic-base-url": fake_api.base_url}

    result = run_step_in(checkout, _review_step(), inputs, {**env, **event, **no_bwrap})

    assert result.returncode == 0, result.stderr
    assert not ran.exists()
    assert seen and "not available" in seen[0][0]
    (reply,) = [c for c in _answers(github_api) if c["user"] == BOT]
    assert "Without commands" in reply["body"] and "no shell ran here" in reply["body"]


def _answers(api: FakeGitHubAPI) -> list[dict[str, Any]]:
    return [c for c in api.pulls[NUMBER].issue_comments if c["body"].startswith(REPLY_MARKER)]


def test_the_trigger_comes_from_the_base_never_from_the_pull_request(
    actions_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    git_repo: Any,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    repo = git_repo({"README.md": "# demo\n", ".orch-review.toml": 'trigger = "@reviewbot"\n'})
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    head = commit(repo, {".orch-review.toml": 'trigger = "@pwned"\n', "app.py": "x = 1\n"})
    pull = PullRepo(repo, base, head)
    open_pull(github_api, pull)
    fake_api.policy = answering("Answered under the base's trigger.")
    env = _step_env(actions_env, tmp_path)
    checkout = default_branch_checkout(pull, tmp_path / "checkout")
    results = []
    for body in ("@pwned why?", "@reviewbot why?"):
        github_api.add_issue_comment(NUMBER, body, login=MAINTAINER)
        comment = github_api.pulls[NUMBER].issue_comments[-1]
        event = issue_comment_event(comment["id"], body, comment["user"], tmp_path / "e.json")
        results.append(answer({**env, **event}, checkout, fake_api))

    assert [r.returncode for r in results] == [0, 0], results[1].stderr
    assert "does not mention @reviewbot" in results[0].stdout
    (reply,) = _answers(github_api)
    assert "Answered under the base's trigger." in reply["body"]
    assert "no review of the head" in reply["body"]  # no artifact: answered afresh


def test_a_review_comment_on_a_forks_pull_request_without_a_key_is_skipped(
    actions_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    open_pull(github_api, pull_repo, fork=True)
    github_api.add_review_comment(NUMBER, "a comment", "app.py", 1, login=MAINTAINER)
    asked = add_reply(
        github_api,
        NUMBER,
        github_api.pulls[NUMBER].review_comments[-1]["id"],
        "@orch-review why?",
        login=MAINTAINER,
    )
    event = review_comment_event(pull_repo, asked, tmp_path / "comment.json", fork=True)
    inputs = {**INPUTS, "anthropic-api-key": ""}

    result = run_step_in(
        pull_repo.path, _review_step(), inputs, {**_step_env(actions_env, tmp_path), **event}
    )

    assert result.returncode == 0, result.stderr
    assert "no Anthropic API key" in result.stdout and "issue_comment" in result.stdout
    assert github_api.writes() == [] and fake_api.message_requests == []


def test_a_comment_by_someone_without_write_access_costs_one_question(
    actions_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    open_pull(github_api, pull_repo)
    github_api.add_issue_comment(NUMBER, "@orch-review why?", login="passer-by")
    comment = github_api.pulls[NUMBER].issue_comments[-1]
    env = _step_env(actions_env, tmp_path)
    event = issue_comment_event(
        comment["id"], comment["body"], comment["user"], tmp_path / "c.json"
    )
    checkout = default_branch_checkout(pull_repo, tmp_path / "default-checkout")
    before = len(github_api.requests)

    result = answer({**env, **event}, checkout, fake_api)

    assert result.returncode == 0, result.stderr
    assert "has no write access" in result.stdout
    # GitHub was asked who may write, and nothing else: the pull request was not read, and
    # its commits were not fetched into the checkout.
    assert [r.path.rsplit("/", 2)[-2:] for r in github_api.requests[before:]] == [
        ["passer-by", "permission"]
    ]
    present = subprocess.run(
        ["git", "cat-file", "-e", pull_repo.head], cwd=checkout, capture_output=True, check=False
    )
    assert present.returncode != 0


def test_a_thread_question_costs_at_most_three_requests_even_if_the_model_tries_to_fan_out(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    store: ArtifactStore,
    tmp_path: Path,
) -> None:
    env = _step_env(opened_env, tmp_path)
    review_and_upload(env, pull_repo, fake_api, store)
    top, asked = ask_in_thread(github_api, fake_api, "@orch-review why is this a problem?", "")

    asked_so_far: list[ModelRequest] = []

    def fans_out_then_checks_then_answers(request: ModelRequest) -> Reply:
        assert request.role == "main", request.role  # no subagent, no verifier
        asked_so_far.append(request)
        if len(asked_so_far) == 1:  # as the model did that fanned out to answer a question
            return Reply.tool_use("Workflow", {"subtasks": ["Review app.py again."]})
        if len(asked_so_far) == 2:
            return Reply.tool_use("bash", {"command": "grep -n execute app.py"})
        return Reply.text("The query is built from the name: see line 6.")

    fake_api.policy = fans_out_then_checks_then_answers
    checkout = default_branch_checkout(pull_repo, tmp_path / "merge-checkout")
    event = review_comment_event(pull_repo, asked, tmp_path / "comment.json")

    result = answer({**env, **event}, checkout, fake_api)

    assert result.returncode == 0, result.stderr
    # A follow-up with the mode off: the conversation, the finding, bash; Workflow refused.
    assert len(fake_api.message_requests) == 3
    replies = [c for c in thread(github_api, NUMBER, top["id"]) if c["user"] == BOT]
    assert len(replies) == 1 and "The query is built from the name" in replies[0]["body"]
    assert "orchestration mode off" in replies[0]["body"]
