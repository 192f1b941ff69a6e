"""A verified fix whose lines start with `/` (a quick action: `/merge`, `/approve`), posted as
a GitLab suggestion. GitLab skips a code block's lines only by regular expressions, and a fix
holding backticks of its own makes orch-review fence it with four, which those expressions
do not pair: the lines after the fix's own ``` run as commands on the merge request. The fake
GitLab executes quick actions as GitLab's extractor finds them. Contained means: no command
runs, no posted line starts with `/` (safe by construction, not by the fence), and the finding
is still posted; an ordinary fix still becomes a suggestion."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from orch_review.errors import ExitCode
from tests.conftest import GitRepoFactory, git
from tests.fakes.gitlab_api import BOT_TOKEN, FakeGitLabAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.gitrepos import commit
from tests.helpers import run_cli
from tests.scripted import PLANTED_FILES, PLANTED_INJECTION, ReviewScript

pytestmark = pytest.mark.slow
IID = 3
SAFE = '    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))'
FIXES = {
    # Fenced with four backticks: GitLab's code-block expression ends at the inner ```.
    "inner-fence": f"{SAFE}\n```\n/merge\n/approve\n```",
    # Fenced with three: GitLab skips it, but only through its expression.
    "plain": f"{SAFE}\n/label ~approved",
    "ordinary": SAFE,
}


def _merge_request(git_repo: GitRepoFactory, tmp_path: Path) -> tuple[Path, Path, str, str]:
    repo = git_repo({"README.md": "# demo\n"})
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    head = commit(repo, {"app.py": PLANTED_FILES["app.py"]})
    git(repo, "checkout", "-q", "main")
    bare = tmp_path / "remote" / "group" / "demo.git"
    bare.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(bare, "update-ref", f"refs/merge-requests/{IID}/head", head)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    return work, repo, base, head


@pytest.mark.parametrize("kind", list(FIXES))
def test_a_suggestion_never_carries_a_quick_action(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    kind: str,
) -> None:
    work, origin, base, head = _merge_request(git_repo, tmp_path)
    fix = FIXES[kind]
    concern = dataclasses.replace(PLANTED_INJECTION, replacement=lambda _: fix)
    fake_api.policy = ReviewScript([concern])
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(IID, origin, base, head)
        env = {**api_env, "CI_API_V4_URL": gitlab.api_url, "GITLAB_TOKEN": BOT_TOKEN}

        result = run_cli(work, env, "mr", str(IID), "--post", "--no-walkthrough", "--no-progress")

        assert result.returncode == ExitCode.FINDINGS, result.stderr
        assert gitlab.mrs[IID].quick_actions == []
        (thread,) = gitlab.diff_threads(IID)
        note = thread["notes"][0]["body"]
        assert "SQL query built with an f-string" in note
        notes = [n["body"] for d in gitlab.mrs[IID].discussions for n in d["notes"]]
        assert not any(line.startswith("/") for body in notes for line in body.splitlines())
        if kind == "ordinary":
            assert f"```suggestion:-0+0\n{SAFE}\n```" in note
        else:
            assert "suggestion:" not in note
