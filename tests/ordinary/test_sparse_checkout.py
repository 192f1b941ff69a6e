"""A sparse checkout: files git has but the working tree lacks are still reviewed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.scripted import PLANTED_FILES, planted_script


def _sparse_repo(git_repo: GitRepoFactory) -> Path:
    """docs/ and empty app.py and calc.py on main, a branch writing the planted code into
    them, checked out with only docs/ in the working tree."""
    repo = git_repo({"app.py": "", "calc.py": "", "lib/util.py": "", "docs/guide.md": "# g\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {**PLANTED_FILES, "lib/util.py": "def f():\n    return 1\n"})
    git(repo, "commit", "-qam", "touch the code")
    git(repo, "sparse-checkout", "set", "--no-cone", "/docs/")
    assert not (repo / "app.py").exists()
    return repo


@pytest.mark.parametrize("sandbox", ["auto", "off"])
@pytest.mark.parametrize("scope", [("--all",), ("--base", "main")])
def test_sparse_checkout_reviews_files_from_git(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory,
    scope: tuple[str, ...], sandbox: str, tmp_path: Path,
) -> None:  # fmt: skip
    repo = _sparse_repo(git_repo)
    fake_api.policy = planted_script(scout="cat lib/util.py")
    report = tmp_path / "report.json"

    result = run_cli(
        repo,
        {**api_env, "ORCH_REVIEW_SANDBOX": sandbox},
        *scope,
        "--no-progress",
        "--json",
        str(report),
    )

    assert result.returncode in (1, 3), result.stdout + result.stderr
    # What the agents' shells printed went back to the model: none failed to read a file.
    sent = [r.raw.decode() for r in fake_api.message_requests]
    assert not any("No such file or directory" in body for body in sent)
    data = json.loads(report.read_text())
    found = {f["path"] for f in data["findings"]}
    if result.returncode == 1:
        # Covered means an agent could read it: the planted injection was found.
        assert "app.py" in found
        assert "No such file" not in json.dumps(data)
    else:
        assert "app.py" in result.stderr
