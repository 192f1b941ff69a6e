"""Shared fixtures: the fake Messages API, a hermetic environment and real git repositories."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

import pytest

from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.invalid",
}
#: Variables that could point a test at a real service or real credentials.
SCRUBBED_PREFIXES = ("ANTHROPIC_", "GITHUB_")
#: Set when pytest runs inside a git hook; they would redirect every git call to the outer repo.
SCRUBBED_GIT_VARIABLES = frozenset(
    {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"}
)


class GitRepoFactory(Protocol):
    """Signature of the `git_repo` fixture."""

    def __call__(self, files: Mapping[str, str | bytes], commit: bool = True) -> Path: ...


def _scrubbed_names(environ: Mapping[str, str]) -> list[str]:
    return [
        name
        for name in environ
        if name.startswith(SCRUBBED_PREFIXES) or name in SCRUBBED_GIT_VARIABLES
    ]


@pytest.fixture(autouse=True, scope="session")
def _hermetic_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point HOME at a temporary directory and pin git's identity for the whole session.

    ANTHROPIC_* and GITHUB_* variables are removed so no test can reach a real service with
    real credentials by accident, and GIT_DIR and friends so git hooks running pytest work.
    """
    home = tmp_path_factory.mktemp("session-home")
    with pytest.MonkeyPatch.context() as mp:
        for name in _scrubbed_names(os.environ):
            mp.delenv(name)
        mp.setenv("HOME", str(home))
        mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        for name, value in GIT_IDENTITY.items():
            mp.setenv(name, value)
        yield


def _no_policy(request: ModelRequest) -> Reply:
    raise AssertionError("no policy set for this test: assign fake_api.policy")


@pytest.fixture
def fake_api() -> Iterator[FakeMessagesAPI]:
    """A running fake Messages API; set `.policy`. Fails the test if the policy raised."""
    api = FakeMessagesAPI(policy=_no_policy)
    with api:
        yield api
    if api.policy_errors:
        details = "\n".join(str(failure) for failure in api.policy_errors)
        pytest.fail(
            f"the fake Messages API policy raised {len(api.policy_errors)} time(s):\n{details}",
            pytrace=False,
        )


@pytest.fixture
def api_env(fake_api: FakeMessagesAPI, tmp_path: Path) -> dict[str, str]:
    """Environment for running orch-review (subprocess or CliRunner) against `fake_api`."""
    home = tmp_path / "home"
    home.mkdir()
    scrubbed = set(_scrubbed_names(os.environ))
    return {
        **{name: value for name, value in os.environ.items() if name not in scrubbed},
        **GIT_IDENTITY,
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "NO_COLOR": "1",
        # Scripts describe one review wave; the critic's tests switch it back on.
        "ORCH_REVIEW_CRITIC": "false",
    }


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` and return its stdout; raises on failure."""
    result = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return result.stdout


def write(repo: Path, files: Mapping[str, str | bytes]) -> None:
    """Write ``files`` (repository-relative path -> content) into the working tree."""
    for name, content in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepoFactory:
    """Factory: `git_repo(files, commit=True) -> Path`, a real repository on branch main."""
    counter = 0

    def make(files: Mapping[str, str | bytes], commit: bool = True) -> Path:
        nonlocal counter
        counter += 1
        repo = tmp_path / ("repo" if counter == 1 else f"repo{counter}")
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        write(repo, files)
        if commit:
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--allow-empty", "-m", "initial commit")
        return repo

    return make
