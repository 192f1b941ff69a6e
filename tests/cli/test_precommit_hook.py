"""The pre-commit hook through the real `pre-commit` tool and real `git commit`s.

pre-commit installs the hook from a repository: a session fixture builds one from this
project's working tree (tracked and untracked, not ignored files), so the tests exercise
exactly the manifest and code being tested. The hook environment is built once per session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import GIT_IDENTITY, GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.scripted import PLANTED_FILES, planted_script

# One worker builds the shared, expensive fixture once.
pytestmark = pytest.mark.xdist_group("pre-commit")

PROJECT = Path(__file__).resolve().parents[2]
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]


@pytest.fixture(scope="session")
def hook_source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository holding this project's current files, and its commit."""
    source = tmp_path_factory.mktemp("orch-review-src")
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=PROJECT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        origin = PROJECT / name
        if origin.is_file():
            target = source / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target)
    git(source, "init", "-q", "-b", "main")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "orch-review under test")
    return source, git(source, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the session: the hook's environment is installed once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def _env(api_env: Mapping[str, str], home: Path, **extra: str) -> dict[str, str]:
    env = {**api_env, **GIT_IDENTITY, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.update(extra)
    return env


def _install(
    repo: Path,
    source: tuple[Path, str],
    env: Mapping[str, str],
    args: list[str],
    verbose: bool = False,
) -> None:
    path, rev = source
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {path}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: orch-review\n"
        f"        args: {args!r}\n" + ("        verbose: true\n" if verbose else "")
    )
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-q", "--no-verify", "-m", "add pre-commit config")
    subprocess.run([*PRE_COMMIT, "install"], cwd=repo, env=env, check=True, capture_output=True)


@dataclass(frozen=True)
class Hooked:
    """A repository with the hook installed, and the environment its commands run in."""

    repo: Path
    env: dict[str, str]

    def run(
        self, *argv: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """A command as the user would run it (git's hooks and all), output captured."""
        return subprocess.run(
            list(argv),
            cwd=cwd or self.repo,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )

    def commit(self, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return self.run("git", "commit", "-m", "change", cwd=cwd)


@pytest.mark.slow
def test_manifest_is_valid() -> None:
    result = subprocess.run(
        [*PRE_COMMIT, "validate-manifest", str(PROJECT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture
def repo(git_repo: GitRepoFactory) -> Path:
    return git_repo({"README.md": "# demo\n"})


@pytest.fixture
def install(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    repo: Path,
    hook_source: tuple[Path, str],
    pre_commit_home: Path,
) -> Callable[..., Hooked]:
    """``install(args=(), key=True, verbose=False)``: the hook in ``repo``, run with an API
    key (the fake API then answers as the planted-bug script) or without one."""

    def make(args: Sequence[str] = (), *, key: bool = True, verbose: bool = False) -> Hooked:
        env = _env(api_env, pre_commit_home)
        if key:
            fake_api.policy = planted_script()
        else:
            env = {k: v for k, v in env.items() if not k.startswith("ANTHROPIC_")}
        _install(repo, hook_source, env, list(args), verbose)
        return Hooked(repo, env)

    return make


def _stage_bug(repo: Path) -> None:
    for name in ("app.py", "calc.py"):
        (repo / name).write_text(PLANTED_FILES[name])
    git(repo, "add", "app.py", "calc.py")


@pytest.mark.slow
def test_commit_with_a_repo_is_blocked_with_the_finding_shown(
    install: Callable[..., Hooked],
) -> None:
    hooked = install()
    _stage_bug(hooked.repo)

    result = hooked.commit()

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "app.py:6" in output
    assert "SQL query built with an f-string" in output
    assert git(hooked.repo, "rev-list", "--count", "HEAD").strip() == "2"  # nothing committed


@pytest.mark.slow
def test_staged_content_is_reviewed_not_unstaged_edits(
    install: Callable[..., Hooked], fake_api: FakeMessagesAPI
) -> None:
    hooked = install()
    _stage_bug(hooked.repo)
    # The working copy hides the bug; the staged version still has it.
    app = hooked.repo / "app.py"
    app.write_text(PLANTED_FILES["app.py"].replace("execute(f", "execute_safe("))

    result = hooked.commit()

    assert result.returncode != 0
    assert "app.py:6" in result.stdout + result.stderr
    grep_outputs = [
        text
        for r in fake_api.requests_for("subagent")
        for text in r.model_request().tool_result_texts()
    ]
    assert any("execute(f" in text for text in grep_outputs)
    assert "execute_safe(" in app.read_text()  # unstaged edit restored


@pytest.mark.slow
def test_nothing_reviewable_staged_passes_without_any_request(
    install: Callable[..., Hooked], fake_api: FakeMessagesAPI
) -> None:
    hooked = install(key=False)
    (hooked.repo / "poetry.lock").write_text("# lock\n")
    git(hooked.repo, "add", "poetry.lock")

    result = hooked.commit()

    assert result.returncode == 0, result.stdout + result.stderr
    assert fake_api.requests == []


@pytest.mark.slow
def test_no_api_key_fails_saying_what_to_set_and_how_to_skip(
    install: Callable[..., Hooked], fake_api: FakeMessagesAPI
) -> None:
    hooked = install(key=False)
    _stage_bug(hooked.repo)

    result = hooked.commit()

    output = result.stdout + result.stderr
    assert result.returncode != 0, output  # no silent green: nothing was reviewed
    assert "Failed" in output and "exit code: 2" in output
    assert "set ANTHROPIC_API_KEY" in output and "SKIP=orch-review git commit" in output
    assert "orch-review: orch-review:" not in output
    assert git(hooked.repo, "rev-list", "--count", "HEAD").strip() == "2"  # nothing committed
    assert fake_api.requests == []

    skipped = hooked.run("git", "commit", "-m", "change", env={"SKIP": "orch-review"})

    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "Skipped" in skipped.stdout + skipped.stderr
    assert git(hooked.repo, "rev-list", "--count", "HEAD").strip() == "3"


@pytest.mark.slow
def test_no_require_key_passes_with_one_line_when_chosen(
    install: Callable[..., Hooked], fake_api: FakeMessagesAPI
) -> None:
    hooked = install(["--no-require-key"], key=False, verbose=True)
    _stage_bug(hooked.repo)

    result = hooked.commit()

    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "review skipped: no API key" in output and "require-key is off" in output
    assert fake_api.requests == []


@pytest.mark.slow
def test_an_anthropic_key_does_not_count_when_the_config_picks_another_provider(
    install: Callable[..., Hooked], fake_api: FakeMessagesAPI
) -> None:
    hooked = install()  # ANTHROPIC_API_KEY is set, no AWS credentials are
    config = 'provider = "bedrock"\nmodel = "us.anthropic.claude-opus-4-6-v1"\n'
    (hooked.repo / ".orch-review.toml").write_text(config)
    git(hooked.repo, "add", ".orch-review.toml")
    _stage_bug(hooked.repo)

    result = hooked.commit()

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "the credentials of bedrock" in output and "SKIP=orch-review" in output
    assert fake_api.requests == []


@pytest.mark.slow
def test_require_key_fails_with_exit_2(install: Callable[..., Hooked]) -> None:
    hooked = install(["--require-key"], key=False)
    (hooked.repo / ".orch-review.toml").write_text("require-key = false\n")
    git(hooked.repo, "add", ".orch-review.toml")
    _stage_bug(hooked.repo)

    result = hooked.commit()

    output = result.stdout + result.stderr
    assert result.returncode != 0  # the flag wins over the file
    assert "exit code: 2" in output
    assert "SKIP=orch-review" in output
    assert "orch-review: orch-review:" not in output


@pytest.mark.slow
def test_commit_message_stages_pass_the_message_file_and_are_not_reviewed(
    install: Callable[..., Hooked], fake_api: FakeMessagesAPI
) -> None:
    # The manifest names no stage: installed for commit-msg too (for another hook, say),
    # pre-commit runs orch-review there with the message file as its only file.
    hooked = install(key=False)
    for stage in ("commit-msg", "prepare-commit-msg"):
        assert hooked.run(*PRE_COMMIT, "install", "-t", stage).returncode == 0
    (hooked.repo / "poetry.lock").write_text("# lock\n")  # excluded by the manifest
    git(hooked.repo, "add", "poetry.lock")

    result = hooked.commit()

    assert result.returncode == 0, result.stdout + result.stderr
    assert fake_api.requests == []


def test_try_repo_runs_the_hook_on_staged_files(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    repo: Path,
    hook_source: tuple[Path, str],
    pre_commit_home: Path,
) -> None:
    fake_api.policy = planted_script()
    _stage_bug(repo)
    tried = Hooked(repo, _env(api_env, pre_commit_home))

    result = tried.run(*PRE_COMMIT, "try-repo", str(hook_source[0]), "orch-review", "--verbose")

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "app.py:6" in output


def test_environment_variables_do_not_leak_into_the_fixture() -> None:
    assert "PRE_COMMIT_HOME" not in os.environ


@pytest.mark.slow
def test_commit_all_reviews_the_temporary_index(install: Callable[..., Hooked]) -> None:
    hooked = install()
    app = hooked.repo / "app.py"
    app.write_text("print('placeholder')\n")
    git(hooked.repo, "add", "app.py")
    git(hooked.repo, "commit", "-q", "--no-verify", "-m", "placeholder")
    app.write_text(PLANTED_FILES["app.py"])  # modified, not staged

    result = hooked.run("git", "commit", "-a", "-m", "all")

    assert result.returncode != 0
    assert "app.py:6" in result.stdout + result.stderr


@pytest.mark.slow
def test_hook_works_in_a_linked_worktree(install: Callable[..., Hooked], tmp_path: Path) -> None:
    hooked = install()
    worktree = tmp_path / "linked"
    git(hooked.repo, "worktree", "add", "-q", "-b", "topic", str(worktree))
    _stage_bug(worktree)

    result = hooked.commit(cwd=worktree)

    assert result.returncode != 0
    assert "app.py:6" in result.stdout + result.stderr
    assert (hooked.repo / ".git" / "orch-review" / "journal.sqlite3").exists()  # one journal


@pytest.mark.slow
def test_hook_works_when_committing_a_merge(install: Callable[..., Hooked]) -> None:
    hooked = install()
    repo, app = hooked.repo, hooked.repo / "app.py"
    app.write_text("print('base')\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "--no-verify", "-m", "base")
    git(repo, "checkout", "-q", "-b", "topic")
    app.write_text(PLANTED_FILES["app.py"])
    git(repo, "commit", "-q", "--no-verify", "-am", "topic work")
    git(repo, "checkout", "-q", "main")
    app.write_text("print('main')\n")
    git(repo, "commit", "-q", "--no-verify", "-am", "main work")
    assert hooked.run("git", "merge", "topic").returncode != 0  # a conflict in app.py
    app.write_text(PLANTED_FILES["app.py"])  # resolved in favour of topic
    git(repo, "add", "app.py")

    result = hooked.commit()

    assert result.returncode != 0  # pre-commit checks the conflicted files during a merge
    assert "app.py:6" in result.stdout + result.stderr


@pytest.mark.slow
def test_retried_commit_pays_only_for_the_concern_that_changed(
    install: Callable[..., Hooked], fake_api: FakeMessagesAPI
) -> None:
    hooked = install()
    _stage_bug(hooked.repo)
    assert hooked.commit().returncode != 0
    fake_api.reset()
    fake_api.policy = planted_script()
    (hooked.repo / "calc.py").write_text(PLANTED_FILES["calc.py"] + "\n# reviewed\n")
    git(hooked.repo, "add", "calc.py")

    result = hooked.commit()

    assert result.returncode != 0  # app.py still has the bug
    subagents = fake_api.requests_for("subagent")
    assert subagents and all("calc.py" in r.model_request().first_user_text for r in subagents)


@pytest.mark.slow
def test_pre_push_reviews_the_pushed_commits(
    install: Callable[..., Hooked], tmp_path: Path
) -> None:
    hooked = install()
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert hooked.run(*PRE_COMMIT, "install", "-t", "pre-push").returncode == 0
    git(hooked.repo, "remote", "add", "origin", str(remote))
    git(hooked.repo, "push", "-q", "--no-verify", "origin", "main")
    _stage_bug(hooked.repo)
    git(hooked.repo, "commit", "-q", "--no-verify", "-m", "bug")

    result = hooked.run("git", "push", "origin", "main")

    assert result.returncode != 0
    assert "app.py:6" in result.stdout + result.stderr


OLD_PRE_COMMIT = "3.0.4"  # Debian 12's: stages were still called commit and push


@pytest.fixture(scope="session")
def old_pre_commit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``pre-commit`` executable of release 3.0.4, in a virtual environment of its own."""
    venv = tmp_path_factory.mktemp("pre-commit-3.0.4")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", f"pre-commit=={OLD_PRE_COMMIT}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if installed.returncode != 0:
        why = (installed.stderr.strip().splitlines() or ["pip failed"])[-1]
        pytest.skip(f"pre-commit {OLD_PRE_COMMIT} could not be installed from the index: {why}")
    return venv / "bin" / "pre-commit"


@pytest.mark.slow
def test_the_hook_runs_under_pre_commit_3_0(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    repo: Path,
    hook_source: tuple[Path, str],
    pre_commit_home: Path,
    old_pre_commit: Path,
) -> None:
    fake_api.policy = planted_script()
    # The session's cache: both releases read its store, so the hook's environment (a full
    # install of orch-review) is built once. The manifest is read on every run all the same.
    env = _env(api_env, pre_commit_home)
    path, rev = hook_source
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {path}\n    rev: {rev}\n    hooks:\n      - id: orch-review\n"
    )
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-q", "--no-verify", "-m", "add pre-commit config")
    hooked = Hooked(repo, env)
    assert hooked.run(str(old_pre_commit), "install").returncode == 0
    _stage_bug(repo)

    result = hooked.commit()

    output = result.stdout + result.stderr
    assert "InvalidManifestError" not in output
    assert result.returncode != 0, output
    assert "app.py:6" in output  # reviewed, and blocked on the finding
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "2"


@pytest.mark.slow
def test_a_file_name_with_control_characters_is_reviewed_and_shown_escaped(
    install: Callable[..., Hooked], fake_api: FakeMessagesAPI
) -> None:
    # pre-commit itself cannot list a staged name that is not UTF-8 (it decodes git's
    # output strictly); orch-review's hook given one is tested in tests/cli/test_odd_names.py.
    from tests.cli.test_odd_names import ANSI, BUGGY, SCRIPT

    hooked = install()
    fake_api.policy = SCRIPT
    (hooked.repo / ANSI).write_text(BUGGY)
    git(hooked.repo, "add", "-A")

    result = hooked.commit()

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "exit code: 1" in output
    assert "Traceback" not in output and "this is a bug" not in output
    assert "\x1b" not in output
    assert '"ansi\\033[31m\\tx\\n.py":2' in output
    assert git(hooked.repo, "rev-list", "--count", "HEAD").strip() == "2"  # nothing committed
