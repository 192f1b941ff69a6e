"""Where the journal lives: a read-only checkout, linked worktrees."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.files_model import MARKER, OneSubtaskPerFile
from tests.helpers import can_drop_read_override, run_cli, run_cli_unprivileged

pytestmark = pytest.mark.slow

BUGGY = f"def f(x: int) -> float:\n    return x / 0  # {MARKER}\n"


def _feature(git_repo: GitRepoFactory) -> tuple[Path, str]:
    repo = git_repo({"README.md": "# demo\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {"src/calc.py": BUGGY})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc")
    return repo, git(repo, "rev-parse", "main").strip()


def _read_only(tree: Path) -> None:
    for folder, dirs, _ in os.walk(tree):
        for name in dirs:
            (Path(folder) / name).chmod(0o555)
    tree.chmod(0o555)


def test_a_read_only_git_directory_keeps_the_journal_in_the_user_cache(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    if not can_drop_read_override(tmp_path):
        pytest.skip("needs root and setpriv to take away the permission override")
    repo, base = _feature(git_repo)
    cache = tmp_path / "cache"
    env = {**api_env, "XDG_CACHE_HOME": str(cache)}
    _read_only(repo / ".git")
    fake_api.policy = OneSubtaskPerFile(base=base)
    try:
        result = run_cli_unprivileged(repo, env, "--base", "main")
        assert result.returncode == 1, result.stdout + result.stderr
        assert "src/calc.py:2" in result.stdout
        assert "cannot be written: the journal is kept in" in " ".join(result.stderr.split())
        (journal,) = (cache / "orch-review" / "journals").glob("*/journal.sqlite3")
        assert not (repo / ".git" / "orch-review").exists()

        # The journal there is the repository's: the next review reuses it, and the journal
        # command finds it.
        fake_api.reset()
        again = OneSubtaskPerFile(base=base)
        fake_api.policy = again
        rerun = run_cli_unprivileged(repo, env, "--base", "main")
        assert rerun.returncode == 1 and "(1 reused" in rerun.stdout, rerun.stdout
        assert again.subagent_tasks == []
        stats = run_cli_unprivileged(repo, env, "journal", "stats")
        assert stats.returncode == 0 and str(journal) in stats.stdout, stats.stderr
    finally:
        for folder, _dirs, _ in os.walk(repo / ".git"):
            Path(folder).chmod(0o755)


def test_ask_in_a_linked_worktree_continues_that_worktrees_review(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo, base = _feature(git_repo)
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "other", str(other), "main")
    write(other, {"src/other.py": "def g() -> int:\n    return 1\n"})
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "other")
    fake_api.policy = OneSubtaskPerFile(base=base, summary="Summary of the FEATURE review.")
    assert run_cli(repo, api_env, "--base", "main").returncode == 1
    fake_api.policy = OneSubtaskPerFile(base=base, summary="Summary of the OTHER review.")
    assert run_cli(other, api_env, "--base", "main").returncode == 0  # finished last
    fake_api.reset()
    fake_api.policy = OneSubtaskPerFile(base=base, summary="An answer.")

    asked = run_cli(repo, api_env, "ask", "what did you find?")

    assert asked.returncode == 0, asked.stderr
    (request,) = fake_api.message_requests
    sent = json.dumps(request.body["messages"])
    assert "FEATURE review" in sent and "OTHER review" not in sent
    fake_api.reset()
    fake_api.policy = OneSubtaskPerFile(base=base, summary="Another answer.")
    asked_other = run_cli(other, api_env, "ask", "what did you find?")
    assert asked_other.returncode == 0, asked_other.stderr
    sent_other = json.dumps(fake_api.message_requests[0].body["messages"])
    assert "OTHER review" in sent_other and "FEATURE review" not in sent_other


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
def test_a_paid_review_survives_a_full_disk_at_the_end(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo, base = _feature(git_repo)
    env = {**api_env, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    fake_api.policy = OneSubtaskPerFile(base=base)

    # /dev/full opens for writing (an early check passes) and fails every write: ENOSPC.
    result = run_cli(repo, env, "--base", "main", "--json", "/dev/full")

    paid = len(fake_api.message_requests)
    assert paid > 0 and Path("/dev/full").is_char_device()  # written in place, not replaced
    assert result.returncode == 2, result.stderr
    assert "src/calc.py:2" in result.stdout  # the report is printed all the same
    said = " ".join(result.stderr.split())
    assert "/dev/full" in said and "No space left on device" in said
    assert "complete and its report is not lost" in said
    assert "`orch-review journal show-report` shows it again" in said
    (rescued,) = (tmp_path / "cache" / "orch-review" / "reports").glob("report-*.json")
    assert f"saved to {rescued}" in said
    data = json.loads(rescued.read_text())
    assert [(f["path"], f["start_line"]) for f in data["findings"]] == [("src/calc.py", 2)]

    shown = run_cli(repo, env, "journal", "show-report")
    as_json = run_cli(repo, env, "journal", "show-report", "--format", "json")

    assert shown.returncode == 0 and "src/calc.py:2" in shown.stdout, shown.stderr
    assert json.loads(as_json.stdout)["findings"] == data["findings"]
    assert len(fake_api.message_requests) == paid  # shown again without a request
