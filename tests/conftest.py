"""Shared fixtures: the fake Messages API, a hermetic environment and real git repositories."""

from __future__ import annotations

import base64
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

import pytest

import orch_review
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.security.verdicts import HOST_RESULTS, RESULTS, render_host_table, render_table

#: The checkout under test: what every test, and every orch-review it starts, must run.
SOURCE_ROOT = Path(__file__).resolve().parent.parent

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.invalid",
}
#: Variables that could point a test at a real service or real credentials.
SCRUBBED_PREFIXES = ("ANTHROPIC_", "GITHUB_")
#: Settings of the test run itself, not of orch-review (a CLI a test starts would warn that
#: they are no setting): read once here, then taken out of the environment.
RUN_SETTINGS = ("ORCH_REVIEW_TEST_SPAWN", "ORCH_REVIEW_TEST_NODE_PROJECT", "ORCH_REVIEW_TEST_BWRAP")
_RUN = {name: os.environ[name] for name in RUN_SETTINGS if os.environ.get(name)}


def run_setting(name: str) -> str | None:
    """The value the test run was started with of one of :data:`RUN_SETTINGS`."""
    assert name in RUN_SETTINGS, name
    return _RUN.get(name)


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
    imported = Path(orch_review.__file__).resolve()
    if not imported.is_relative_to(SOURCE_ROOT):
        pytest.exit(
            f"the tests of {SOURCE_ROOT} imported orch_review from {imported.parent}: run "
            "pytest from the checkout (or install it with `pip install -e .`)",
            returncode=2,
        )
    home = tmp_path_factory.mktemp("session-home")
    with pytest.MonkeyPatch.context() as mp:
        # Every orch-review a test starts (`python -m orch_review`, the console script, a
        # hook's) imports this checkout, not a copy installed before the last edit.
        inherited = os.environ.get("PYTHONPATH")
        mp.setenv("PYTHONPATH", str(SOURCE_ROOT) + (os.pathsep + inherited if inherited else ""))
        for name in [*_scrubbed_names(os.environ), *RUN_SETTINGS]:
            mp.delenv(name, raising=False)
        # The size of the terminal pytest runs in (pytest-xdist's workers are given one)
        # must not change how orch-review wraps what it prints.
        for name in ("COLUMNS", "LINES"):
            mp.delenv(name, raising=False)
        mp.setenv("HOME", str(home))
        mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        # Reviews run in this process write no tests unless a test asks (see api_env).
        mp.setenv("ORCH_REVIEW_PROVE", "off")
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
        # Nor do they write tests for their findings; the proofs' tests ask with --prove.
        "ORCH_REVIEW_PROVE": "off",
        # A copy of a late request depends on timing: counts and totals would vary from run
        # to run. Hedging has its own tests (tests/engine/api/test_hedging.py).
        "ORCH_REVIEW_HEDGE": "false",
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


# --- `slow`: every test that starts a subprocess or a server -------------------------------

#: Fixtures that start a server or subprocesses (git): a test using one is slow.
SLOW_FIXTURES = frozenset({"fake_api", "api_env", "git_repo", "github_api"})
#: Audit events of starting a subprocess or a server.
_SLOW_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.exec", "socket.bind"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark as slow every test that uses a fixture of :data:`SLOW_FIXTURES`."""
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


class _Starts:
    """What the running test started (audit hooks cannot be removed: one, armed per test)."""

    def __init__(self) -> None:
        self.armed = False
        self.seen: list[str] = []

    def __call__(self, event: str, args: tuple[object, ...]) -> None:
        if self.armed and event in _SLOW_EVENTS and not self.seen:
            self.seen.append(f"{event} {args[:2]!r}"[:200])


_STARTS = _Starts()
sys.addaudithook(_STARTS)


@pytest.fixture(autouse=True)
def _slow_is_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test not marked slow that starts a subprocess or a server fails, saying so, so
    that ``pytest -m "not slow"`` stays a quick loop."""
    if request.node.get_closest_marker("slow") is not None:
        yield
        return
    _STARTS.seen.clear()
    _STARTS.armed = True
    try:
        yield
    finally:
        _STARTS.armed = False
    if _STARTS.seen:
        pytest.fail(
            f"this test started a subprocess or a server ({_STARTS.seen[0]}): mark it "
            "@pytest.mark.slow",
            pytrace=False,
        )


# --- the attack suites' summary tables, printed at the end of the session ------------------
# Here, not in tests/security/: under pytest-xdist only this conftest is loaded where the
# session's summary is printed.


def pytest_configure(config: pytest.Config) -> None:
    config.stash[RESULTS] = []
    config.stash[HOST_RESULTS] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On a pytest-xdist worker: hand the rows to the controller, which prints the tables."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        rows = (session.config.stash.get(RESULTS, []), session.config.stash.get(HOST_RESULTS, []))
        output["security_verdicts"] = base64.b64encode(pickle.dumps(rows)).decode()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """On the controller: the rows of a worker that finished (pickled by this conftest)."""
    encoded = getattr(node, "workeroutput", {}).get("security_verdicts")
    if encoded:
        verdicts, host = pickle.loads(base64.b64decode(encoded))
        config = node.config  # type: ignore[attr-defined]
        config.stash.setdefault(RESULTS, []).extend(verdicts)
        config.stash.setdefault(HOST_RESULTS, []).extend(host)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    verdicts = terminalreporter.config.stash.get(RESULTS, [])
    if verdicts:
        terminalreporter.section("sandbox attack suite: attack -> contained?")
        for line in render_table(verdicts):
            terminalreporter.write_line(line)
    host = terminalreporter.config.stash.get(HOST_RESULTS, [])
    if host:
        terminalreporter.section("host attack suite: attack -> contained?")
        for line in render_host_table(sorted(host, key=lambda v: v.attack)):
            terminalreporter.write_line(line)
