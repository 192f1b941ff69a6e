"""``orch-review learn`` on a real repository, through the CLI as a user runs it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from orch_review.config import learnings
from orch_review.config.learnings import LEARNINGS_FILE
from tests.conftest import GitRepoFactory, git
from tests.helpers import run_cli

FP = "0123456789abcdef0123456789abcdef:2"


def test_learn_appends_a_learning_named_after_git_user(
    git_repo: GitRepoFactory, api_env: dict[str, str]
) -> None:
    repo = git_repo({"a.py": "x = 1\n", LEARNINGS_FILE: "# keep me\n"})
    git(repo, "config", "user.name", "Ada Lovelace")
    git(repo, "config", "user.email", "ada@example.com")
    (repo / "sub").mkdir()

    result = run_cli(
        repo / "sub",
        api_env,
        "learn",
        "--fingerprint",
        FP,
        "--category",
        "security",
        "--reason",
        "the input is a constant",
    )

    assert result.returncode == 0, result.stderr
    assert "Added a learning to" in result.stderr and result.stdout == ""
    text = (repo / LEARNINGS_FILE).read_text(encoding="utf-8")
    assert text.startswith("# keep me\n")
    (learning,) = learnings.parse(text)
    assert learning.fingerprint == FP and learning.category == "security"
    assert learning.who == "Ada Lovelace <ada@example.com>"
    assert learning.when == dt.date.today().isoformat()


def test_learn_refuses_an_invalid_learning_with_exit_2(
    git_repo: GitRepoFactory, api_env: dict[str, str]
) -> None:
    repo = git_repo({"a.py": "x = 1\n"})

    both = run_cli(
        repo, api_env, "learn", "--fingerprint", FP, "--glob", "x", "--reason", "r", "--who", "w"
    )
    nobody = run_cli(repo, api_env, "learn", "--fingerprint", FP, "--reason", "r")
    neither = run_cli(repo, api_env, "learn", "--reason", "r", "--who", "w")
    bad = run_cli(repo, api_env, "learn", "--fingerprint", "nope", "--reason", "r", "--who", "w")

    assert both.returncode == neither.returncode == bad.returncode == nobody.returncode == 2
    assert "Set `git config user.name`" in nobody.stderr  # this test's HOME has no identity
    assert "exactly one of `fingerprint` and `glob`" in neither.stderr
    assert "exactly one of `fingerprint` and `glob`" in both.stderr
    assert "`fingerprint` must be" in bad.stderr
    assert not Path(repo, LEARNINGS_FILE).exists()
