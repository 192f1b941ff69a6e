"""Fixtures for the GitHub integration: the fake REST API, a repository with a pull request,
event payloads, and the environment of an Actions step."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepoFactory, git
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI, files_from_git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.gitrepos import commit
from tests.scripted import PLANTED_FILES, Concern, ReviewScript, confirm, refute

EVENTS = Path(__file__).parent / "events"
REPOSITORY = "octo/demo"
NUMBER = 7

#: calc.py on main: ratio() at the top, far from where the pull request appends.
CALC_BASE = "def ratio(total: int, count: int) -> float:\n    return total / count\n" + "".join(
    f"\n\ndef f{i}(x: int) -> int:\n    return x + {i}\n" for i in range(6)
)
CALC_ADDED = "\n\ndef half(x: int) -> float:\n    return x / 2\n"
LIB = "def legacy(path):\n    return open(path).read()\n"


@dataclass(frozen=True)
class PullRepo:
    """A repository whose branch ``feature`` is a pull request into ``main``."""

    path: Path
    base: str
    head: str

    def push(self, files: dict[str, str | bytes], message: str = "more") -> PullRepo:
        """Commit ``files`` on the feature branch: a new head."""
        return PullRepo(self.path, self.base, commit(self.path, files, message))


@pytest.fixture
def github_api() -> Iterator[FakeGitHubAPI]:
    """A running fake GitHub REST API with two items a page, to exercise pagination."""
    with FakeGitHubAPI(REPOSITORY, page_size=2) as api:
        yield api


@pytest.fixture
def pull_repo(git_repo: GitRepoFactory) -> PullRepo:
    """main: README, calc.py, lib.py; feature adds app.py (SQL injection) and appends to
    calc.py."""
    repo = git_repo({"README.md": "# demo\n", "calc.py": CALC_BASE, "lib.py": LIB})
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    head = commit(repo, {"app.py": PLANTED_FILES["app.py"], "calc.py": CALC_BASE + CALC_ADDED})
    return PullRepo(repo, base, head)


def shallow_checkout(pull: PullRepo, where: Path) -> Path:
    """What actions/checkout does for a ``pull_request`` event with the default fetch-depth 1:
    fetch GitHub's merge commit of the pull request alone, and check it out."""
    origin = pull.path
    git(origin, "checkout", "-q", "--detach", pull.base)
    git(origin, "merge", "-q", "--no-ff", "-m", "Merge the pull request", pull.head)
    git(origin, "update-ref", f"refs/pull/{NUMBER}/merge", "HEAD")
    git(origin, "checkout", "-q", "feature")
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")  # as GitHub allows
    where.mkdir()
    git(where, "init", "-q")
    git(where, "remote", "add", "origin", f"file://{origin}")
    git(where, "fetch", "-q", "--no-tags", "--depth=1", "origin", f"+refs/pull/{NUMBER}/merge")
    git(where, "checkout", "-q", "--detach", "FETCH_HEAD")
    return where


def open_pull(api: FakeGitHubAPI, pull: PullRepo, fork: bool = False) -> None:
    """Open (or push to) pull request NUMBER on the fake API with the repository's diff."""
    api.add_pull(
        NUMBER,
        base_sha=pull.base,
        head_sha=pull.head,
        files=files_from_git(pull.path, pull.base, pull.head),
        head_repo="contributor/demo" if fork else REPOSITORY,
    )


def event_payload(action: str, pull: PullRepo, fork: bool = False) -> dict[str, Any]:
    """The ``pull_request`` payload fixture for ``action``, filled in for ``pull``."""
    payload: dict[str, Any] = json.loads((EVENTS / f"pull_request.{action}.json").read_text())
    payload["number"] = NUMBER
    pr = payload["pull_request"]
    pr["number"] = NUMBER
    pr["head"]["sha"], pr["base"]["sha"] = pull.head, pull.base
    head_repo = "contributor/demo" if fork else REPOSITORY
    pr["head"]["repo"]["full_name"] = head_repo
    pr["head"]["repo"]["fork"] = fork
    if "after" in payload:
        payload["after"] = pull.head
    return payload


@pytest.fixture
def actions_env(
    api_env: dict[str, str], github_api: FakeGitHubAPI, tmp_path: Path
) -> dict[str, str]:
    """The environment of an Actions step (no event yet: see :func:`with_event`)."""
    runner = tmp_path / "runner"
    runner.mkdir()
    return {
        **api_env,
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_API_URL": github_api.base_url,
        "GITHUB_SERVER_URL": "https://github.test",
        "GITHUB_TOKEN": WRITE_TOKEN,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_OUTPUT": str(runner / "output"),
        "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
        "RUNNER_TEMP": str(runner),
        "ORCH_REVIEW_SANDBOX": "auto",
    }


def with_event(env: dict[str, str], payload: dict[str, Any], where: Path) -> dict[str, str]:
    """``env`` with GITHUB_EVENT_PATH pointing at ``payload`` written to ``where``."""
    where.write_text(json.dumps(payload), encoding="utf-8")
    return {**env, "GITHUB_EVENT_PATH": str(where)}


@pytest.fixture
def opened_env(
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    actions_env: dict[str, str],
    pull_repo: PullRepo,
    tmp_path: Path,
) -> dict[str, str]:
    """An Actions step's environment for the `opened` event of :func:`pull_repo`, open on
    the fake GitHub API, the fake model playing :func:`pull_script`."""
    fake_api.policy = pull_script()
    open_pull(github_api, pull_repo)
    return with_event(actions_env, event_payload("opened", pull_repo), tmp_path / "event.json")


def read_outputs(env: dict[str, str]) -> dict[str, str]:
    """Parse ``$GITHUB_OUTPUT`` (``name<<DELIMITER`` blocks); the last value of a name wins."""
    text = Path(env["GITHUB_OUTPUT"]).read_text(encoding="utf-8")
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        name, _, delimiter = line.partition("<<")
        value = []
        for inner in lines:
            if inner == delimiter:
                break
            value.append(inner)
        values[name] = "\n".join(value)
    return values


def pull_script() -> ReviewScript:
    """The review of :func:`pull_repo`: an injection and divisions confirmed (one division on
    an added line, one far above the change), a leak in an unchanged file, and a refuted one."""
    return ReviewScript(
        [
            Concern(
                "injection",
                "Check app.py for SQL injection: queries built from user input.",
                "grep -n 'execute(f' app.py",
                path="app.py",
                severity="high",
                category="security",
                claim="SQL query built with an f-string from the caller's `name`: injection.",
            ),
            Concern(
                "division",
                "Check calc.py for division by zero.",
                "grep -n ' / ' calc.py",
                path="calc.py",
                severity="medium",
                category="correctness",
                claim="Division by a value that may be zero.",
                verdict=confirm,
            ),
            Concern(
                "leak",
                # Names a changed file (app.py), or it would be refused: lib.py is unchanged.
                "Check lib.py, which app.py may come to use, for leaked file handles.",
                "grep -n 'open(' lib.py",
                path="lib.py",
                severity="low",
                category="resource-leak",
                claim="The file opened by legacy() is never closed.",
            ),
            Concern(
                "style",
                "Check the cursor handling style in app.py.",
                "grep -n 'cursor()' app.py",
                path="app.py",
                severity="info",
                category="maintainability",
                claim="The cursor is not used as a context manager.",
                verdict=refute,
            ),
        ]
    )
