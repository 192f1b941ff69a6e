"""End to end per scope: agents' bash sees exactly the content under review, nothing else."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.gitrepos import branch_repo, commit, head, write
from tests.helpers import popen_cli, run_cli
from tests.scripted import Concern, ReviewScript

STAGED_APP = (
    "def greet(name):\n    return 'hello ' + name\ndef calc(expr):\n    return eval(expr)\n"
)
# The working copy moved on after staging: the same call sits three lines lower.
WORKING_APP = "# one\n# two\n# three\n" + STAGED_APP.replace("eval(expr)", "eval(expr)  # wip")


def _script(command: str) -> ReviewScript:
    return ReviewScript(
        [
            Concern(
                "evaluation",
                "Check app.py for evaluation of untrusted input.",
                command,
                path="app.py",
                severity="high",
                category="security",
                claim="eval() of a caller-supplied string runs arbitrary code.",
            )
        ]
    )


def _scout_output(fake_api: FakeMessagesAPI) -> str:
    """What the subagent's bash command printed, as the fake API recorded it."""
    subagents = [r.model_request() for r in fake_api.requests_for("subagent")]
    outputs = [text for r in subagents for text in r.tool_result_texts()]
    assert outputs, "the subagent never ran its command"
    return outputs[0]


def _snapshot_dir(output: str) -> Path:
    line = next(ln for ln in output.splitlines() if "orch-review-snapshot." in ln)
    return Path(line.strip())


def _with_secrets(repo: Path) -> None:
    """Ignored files in the working tree, which no agent may see."""
    write(repo, {".env": "API_TOKEN=hunter2\n", "build/out.py": "generated = True\n"})


def test_staged_review_reads_the_staged_content(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = branch_repo(git_repo)
    base = head(repo)
    write(repo, {"app.py": STAGED_APP})
    git(repo, "add", "app.py")
    write(repo, {"app.py": WORKING_APP, "untracked.py": "u = 1\n"})
    _with_secrets(repo)
    fake_api.policy = _script(
        f"pwd; ls -a; cat .env build/out.py untracked.py 2>&1; git diff --stat {base} HEAD; "
        "grep -n 'eval(' app.py"
    )

    result = run_cli(repo, api_env, "--staged", "--no-progress")

    assert result.returncode == 1, result.stderr
    assert "app.py:4" in result.stdout  # the staged line, not the working copy's line 7
    output = _scout_output(fake_api)
    assert "4:    return eval(expr)\n" in output + "\n" and "# wip" not in output
    assert "hunter2" not in output and "generated = True" not in output
    assert "cat: .env: No such file or directory" in output
    assert "cat: untracked.py: No such file or directory" in output
    assert " app.py | " in output and "1 file changed" in output
    assert not _snapshot_dir(output).exists()


def test_default_review_sees_untracked_files_but_not_ignored_ones(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {"lib/util.py": "def add(a, b):\n    return a - b\n"})
    write(repo, {"app.py": STAGED_APP})  # not staged, not committed: still the change
    _with_secrets(repo)
    fake_api.policy = _script("ls -a; ls build 2>&1; cat .env 2>&1; grep -n 'eval(' app.py")

    result = run_cli(repo, api_env, "--no-progress")

    assert result.returncode == 1, result.stderr
    assert "app.py:4" in result.stdout
    output = _scout_output(fake_api)
    listing = output.split("ls: cannot access")[0].split()
    assert {"app.py", "lib", ".gitignore"} <= set(listing)
    assert ".env" not in listing and "build" not in listing
    assert "hunter2" not in output
    main_task = fake_api.requests_for("main")[0].model_request().first_user_text
    assert "app.py\tmodified +2 -0 lines 1-4" in main_task
    assert "lib/util.py\tmodified +1 -1" in main_task


def test_pull_request_review_reads_the_head_commit(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = branch_repo(git_repo)
    fork = head(repo)
    commit(repo, {"app.py": STAGED_APP})
    git(repo, "checkout", "-q", "main")
    write(repo, {"app.py": WORKING_APP, "dirty.py": "uncommitted\n"})
    fake_api.policy = _script(
        f"cat dirty.py 2>&1; git log --format=%s -2; git diff --stat {fork} HEAD; "
        "grep -n 'eval(' app.py"
    )

    result = run_cli(repo, api_env, "--base", "main", "--head", "feature", "--no-progress")

    assert result.returncode == 1, result.stderr
    assert "app.py:4" in result.stdout
    output = _scout_output(fake_api)
    assert "cat: dirty.py: No such file or directory" in output
    assert output.split("\n")[1] == "c"  # the PR's own commit is HEAD
    assert " app.py | " in output


def test_staged_review_inside_a_commit_hook(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    # `git commit app.py` runs hooks on a temporary index holding HEAD plus app.py.
    repo = branch_repo(git_repo)
    write(repo, {"other.py": "in the regular index only\n"})
    git(repo, "add", "other.py")
    write(repo, {"app.py": STAGED_APP})
    temp_index = tmp_path / "next-index-42.lock"
    hook_env = {**api_env, "GIT_INDEX_FILE": str(temp_index)}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=repo, env=hook_env, check=True)
    subprocess.run(["git", "add", "app.py"], cwd=repo, env=hook_env, check=True)
    index_before = temp_index.read_bytes()
    fake_api.policy = _script("ls; grep -n 'eval(' app.py")

    result = run_cli(repo, {**hook_env, "GIT_DIR": ".git"}, "--staged", "--no-progress")

    assert result.returncode == 1, result.stderr
    assert "app.py:4" in result.stdout
    assert "other.py" not in _scout_output(fake_api).split()
    assert temp_index.read_bytes() == index_before


def test_nothing_to_review_exits_0_without_calling_the_api(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"a.py": "a = 1\n"})

    result = run_cli(repo, api_env, "--no-progress")

    assert result.returncode == 0
    assert "nothing to review" in result.stderr and "--all" in result.stderr
    assert fake_api.message_requests == []


def _wait_for(condition: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def _snapshots(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("orch-review-snapshot.*"))


def test_snapshot_is_removed_after_ctrl_c_and_after_an_error(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"app.py": STAGED_APP})
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    # The hung reply never lands: a short wait for replies in flight after Ctrl-C.
    env = {**api_env, "TMPDIR": str(private_tmp), "ORCH_REVIEW_INTERRUPT_GRACE": "0.5"}
    fake_api.policy = _script("grep -n 'eval(' app.py")
    hang = fake_api.add_fault("hang", delay=120)
    proc = popen_cli(repo, env, "--no-progress")
    try:
        _wait_for(lambda: hang.hits == 1, "the main agent's first request")
        assert len(_snapshots(private_tmp)) == 1  # in use while the review runs
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)

    assert proc.returncode == 130, stderr
    assert list(private_tmp.iterdir()) == []  # no snapshot, index copy or home left behind
    fake_api.reset()
    fake_api.expected_key = "another-key"  # the first request fails: exit 2, not a crash

    failed = run_cli(repo, env, "--no-progress")

    assert failed.returncode == 2, failed.stderr
    assert list(private_tmp.iterdir()) == []
