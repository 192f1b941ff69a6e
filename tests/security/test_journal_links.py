"""A merge request that commits the journal's path as a symbolic link (the directory, the file
or SQLite's `-wal` beside it) would have the job create and write a SQLite file wherever the
link points. Contained means: no file appears there, and the job says why (exit 2, before
any request); a stranger's `.git/orch-review` link sends the journal to the user's cache
instead; and the GitLab component and examples keep the journal outside the checkout,
carrying only a copy through the cache, taken from and put back to a real directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from orch_review.errors import ExitCode
from tests.conftest import GitRepoFactory, git
from tests.fakes.gitlab_api import BOT_TOKEN, JOB_TOKEN, FakeGitLabAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.scripted import PLANTED_FILES, planted_script

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CI_FILES = (
    ("templates/review.yml", "orch-review"),
    ("examples/gitlab-ci.yml", "orch-review"),
    ("examples/gitlab-ci-sharded.yml", "orch-review-shard"),
)
IID = 3
# What the merge request commits: (the link's path in the repository, what it names).
LINKS = {
    "directory": (".orch-review-cache", "elsewhere"),
    "file": (".orch-review-cache/journal.sqlite3", "elsewhere/journal.sqlite3"),
    "wal": (".orch-review-cache/journal.sqlite3-wal", "elsewhere/journal.sqlite3-wal"),
}


def _merge_request(git_repo: GitRepoFactory, link: str, target: Path) -> tuple[Path, str, str]:
    repo = git_repo({"README.md": "# demo\n"})
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "app.py").write_text(PLANTED_FILES["app.py"])
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, repo / link)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Look users up by name")
    return repo, base, git(repo, "rev-parse", "HEAD").strip()


def _ci_env(api_env: dict[str, str], gitlab: FakeGitLabAPI, base: str, head: str) -> dict[str, str]:
    return {
        **api_env,
        "GITLAB_CI": "true",
        "CI": "true",
        "CI_API_V4_URL": gitlab.api_url,
        "CI_SERVER_URL": gitlab.api_url.removesuffix("/api/v4"),
        "CI_PROJECT_ID": "7",
        "CI_MERGE_REQUEST_PROJECT_ID": "7",
        "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "7",
        "CI_MERGE_REQUEST_IID": str(IID),
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": base,
        "CI_COMMIT_SHA": head,
        "CI_JOB_TOKEN": JOB_TOKEN,
        "GITLAB_TOKEN": BOT_TOKEN,
        "ORCH_REVIEW_JOURNAL_PATH": ".orch-review-cache/journal.sqlite3",
    }


@pytest.mark.parametrize("kind", list(LINKS))
def test_a_journal_path_committed_as_a_link_writes_nothing_where_it_points(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    kind: str,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link, target = LINKS[kind]
    repo, base, head = _merge_request(git_repo, link, tmp_path / target)
    if kind == "wal":
        (repo / ".orch-review-cache").mkdir(exist_ok=True)
    fake_api.policy = planted_script()
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(IID, repo, base, head)

        result = run_cli(repo, _ci_env(api_env, gitlab, base, head), "gitlab", "--no-progress")

    assert sorted(p.name for p in elsewhere.iterdir()) == []
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "symbolic link inside the repository" in result.stderr
    assert "Traceback" not in result.stderr
    assert fake_api.message_requests == []


@pytest.mark.parametrize("command", ["stats", "clear"])
def test_journal_commands_touch_nothing_through_a_link(
    api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path, command: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "journal.sqlite3").write_text("not the journal: a file someone keeps")
    repo = git_repo({"README.md": "# demo\n"})
    os.symlink(elsewhere, repo / ".orch-review-cache")
    env = {**api_env, "ORCH_REVIEW_JOURNAL_PATH": ".orch-review-cache/journal.sqlite3"}

    result = run_cli(repo, env, "journal", command)

    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "symbolic link inside the repository" in result.stderr
    assert [p.name for p in elsewhere.iterdir()] == ["journal.sqlite3"]
    assert (elsewhere / "journal.sqlite3").read_text().startswith("not the journal")


def test_a_link_at_git_orch_review_sends_the_journal_to_the_cache(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo(PLANTED_FILES)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, repo / ".git" / "orch-review")  # a stranger's clone, as received
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all", "--no-progress")

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    assert "the journal is kept in" in result.stderr
    cache = Path(api_env["XDG_CACHE_HOME"] if "XDG_CACHE_HOME" in api_env else api_env["HOME"])
    assert list(cache.rglob("journal.sqlite3"))


def _job(path: str, name: str) -> dict[str, Any]:
    for document in yaml.safe_load_all((ROOT / path).read_text()):
        if isinstance(document, dict) and name in document:
            job: dict[str, Any] = document[name]
            base = job.get("extends")
            if isinstance(base, str):
                job = {**document[base], **job}
            return job
    raise AssertionError(f"no job {name} in {path}")


def _run(lines: list[str], where: Path, journal_dir: Path) -> None:
    script = "set -e\n" + "\n".join(lines) + "\n"
    env = {**os.environ, "OR_JOURNAL_DIR": str(journal_dir)}
    subprocess.run(["bash", "-c", script], cwd=where, env=env, check=True)


@pytest.mark.parametrize(("path", "name"), CI_FILES)
def test_the_ci_files_keep_the_journal_outside_the_checkout(
    path: str, name: str, tmp_path: Path
) -> None:
    job = _job(path, name)
    variables = job["variables"]
    assert os.path.isabs(variables["ORCH_REVIEW_JOURNAL_PATH"])
    assert variables["ORCH_REVIEW_JOURNAL_PATH"].startswith(variables["OR_JOURNAL_DIR"] + "/")
    steps = [*job.get("before_script", []), *job.get("script", [])]
    restore = [s for s in steps if "OR_JOURNAL_DIR" in s]
    save = [s for s in job["after_script"] if "OR_JOURNAL_DIR" in s]
    assert restore and save
    # The checkout as the merge request left it: the cache's folder is a link elsewhere.
    checkout, elsewhere, journal_dir = (tmp_path / n for n in ("checkout", "elsewhere", "j"))
    checkout.mkdir()
    elsewhere.mkdir()
    (elsewhere / "journal.sqlite3").write_text("the attacker's")
    os.symlink(elsewhere, checkout / ".orch-review-cache")

    _run(restore, checkout, journal_dir)

    assert not (journal_dir / "journal.sqlite3").exists()  # nothing taken through the link
    (journal_dir / "journal.sqlite3").write_text("this review's")

    _run(save, checkout, journal_dir)

    assert [p.name for p in elsewhere.iterdir()] == ["journal.sqlite3"]
    assert (elsewhere / "journal.sqlite3").read_text() == "the attacker's"
    cache = checkout / ".orch-review-cache"
    assert cache.is_dir() and not cache.is_symlink()
    assert (cache / "journal.sqlite3").read_text() == "this review's"
    # And the next job takes that real copy back.
    (journal_dir / "journal.sqlite3").unlink()
    _run(restore, checkout, journal_dir)
    assert (journal_dir / "journal.sqlite3").read_text() == "this review's"
