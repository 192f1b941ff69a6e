"""The library front door: a review from Python, the caller's environment left alone with no
secret passed to a child, and report files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from orch_review import ReviewOptions, review
from orch_review.core import take_environment
from orch_review.environment import without_secrets
from orch_review.errors import ExitCode
from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import PLANTED_FILES, planted_script


def test_a_review_from_python_returns_the_report_and_writes_its_files(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    out = tmp_path / "reports" / "new-folder"

    report = review(
        repo,
        ReviewOptions(all_files=True, json_file=str(out / "r.json"), sarif_file=out / "r.sarif"),
        env=api_env,
    )

    assert report.exit_code("high") == ExitCode.FINDINGS
    assert [f.location for f in report.confirmed] == ["app.py:6"]
    written = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert [f["path"] for f in written["findings"] if f["status"] == "confirmed"] == ["app.py"]
    assert json.loads((out / "r.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"


@pytest.mark.slow
def test_the_front_door_imports_neither_click_nor_rich() -> None:
    code = (
        "import sys\n"
        "from orch_review import review, ReviewOptions, Report\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'click', 'rich'}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_cli_takes_the_secrets_out_of_its_own_process_environment() -> None:
    environ = {"ANTHROPIC_API_KEY": "k", "GITHUB_TOKEN": "t", "AWS_SESSION_TOKEN": "s"}

    taken = take_environment(environ)

    assert taken == {"ANTHROPIC_API_KEY": "k", "GITHUB_TOKEN": "t", "AWS_SESSION_TOKEN": "s"}
    assert environ == {}


def test_a_child_environment_has_no_secret_of_any_provider() -> None:
    secrets = {
        "ANTHROPIC_API_KEY": "k",
        "ANTHROPIC_AUTH_TOKEN": "bearer",
        "GITHUB_TOKEN": "t",
        "GH_TOKEN": "g",
        "AWS_ACCESS_KEY_ID": "id",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_SESSION_TOKEN": "session",
        "AWS_BEARER_TOKEN_BEDROCK": "bedrock",
        "CLOUDSDK_AUTH_ACCESS_TOKEN": "ya29",
        "ANTHROPIC_FOUNDRY_API_KEY": "foundry",
    }
    # Where to find credentials is not itself a secret: the credential chains still need it.
    settings = {"AWS_REGION": "eu-west-3", "AWS_PROFILE": "ci", "CLOUD_ML_REGION": "global"}

    assert without_secrets({**secrets, **settings}) == settings


def _git_recorder(tmp_path: Path) -> tuple[Path, Path]:
    """A `git` on PATH that records its environment, then runs the real git."""
    real_git = subprocess.run(
        ["sh", "-c", "command -v git"], capture_output=True, text=True, check=True
    ).stdout.strip()
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    log = tmp_path / "git-environments.log"
    shim = shim_dir / "git"
    shim.write_text(
        f'#!/bin/sh\nprintf "=== git %s\\n" "$*" >> "{log}"\nenv >> "{log}"\n'
        f'exec "{real_git}" "$@"\n'
    )
    shim.chmod(0o755)
    return shim_dir, log


@pytest.mark.parametrize("command", [["plan", "--all"], ["--all", "--sandbox", "off"]])
def test_no_git_process_on_the_host_inherits_the_api_key(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    command: list[str],
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    shim_dir, log = _git_recorder(tmp_path)
    secret = "sk-ant-secret-that-must-not-leak"
    env = {
        **api_env,
        "ANTHROPIC_API_KEY": secret,
        "GITHUB_TOKEN": "ghs_token-that-must-not-leak",
        "PATH": f"{shim_dir}{os.pathsep}{api_env['PATH']}",
    }

    result = run_cli(repo, env, *command)

    assert result.returncode in (0, 1), result.stderr
    recorded = log.read_text(encoding="utf-8")
    assert "GIT_INDEX_FILE" in recorded or recorded.count("PATH=") >= 1  # git did run
    assert secret not in recorded
    assert "ghs_token-that-must-not-leak" not in recorded


def test_a_report_file_that_cannot_be_written_fails_before_any_request(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be\n")

    result = run_cli(repo, api_env, "--all", "--json", str(blocker / "report.json"))

    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "cannot create the folder for the json report" in result.stderr
    assert fake_api.requests == []


def test_the_review_command_creates_the_report_folder(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    target = tmp_path / "out" / "deeper" / "report.sarif"

    result = run_cli(repo, api_env, "--all", "--sarif", str(target), "--no-progress")

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    assert json.loads(target.read_text(encoding="utf-8"))["runs"][0]["results"]


def test_reviews_twice_in_one_process_with_the_environment_given(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_planted_repo(git_repo)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.setenv(name, api_env[name])
    settings = {"journal": False}

    for _ in range(2):
        fake_api.policy = planted_script()
        report = review(
            repo, ReviewOptions(all_files=True, settings=settings), env=dict(os.environ)
        )
        assert [f.location for f in report.confirmed] == ["app.py:6"]

    assert os.environ["ANTHROPIC_API_KEY"] == "test-key"  # an env given: left alone


def test_reviews_twice_with_the_credentials_in_the_process_environment_left_alone(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_planted_repo(git_repo)
    shim_dir, log = _git_recorder(tmp_path)
    for name, value in api_env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-that-must-not-leak")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_token-that-must-not-leak")
    monkeypatch.setenv("PATH", f"{shim_dir}{os.pathsep}{api_env['PATH']}")
    before = dict(os.environ)

    for _ in range(2):
        fake_api.policy = planted_script()
        report = review(repo, ReviewOptions(all_files=True, settings={"sandbox": "off"}))
        assert [f.location for f in report.confirmed] == ["app.py:6"]
        assert dict(os.environ) == before

    calls = log.read_text(encoding="utf-8").split("=== ")[1:]
    assert len(calls) >= 2  # git did run, through the recorder
    secrets = ("sk-ant-secret-that-must-not-leak", "ghs_token-that-must-not-leak")
    leaked = {call.splitlines()[0] for call in calls if any(s in call for s in secrets)}
    # The one git run orch-review cannot give an environment: GitPython's check of the git
    # executable when it is first imported in this process (it reads no repository).
    assert leaked <= {"git version"}


def test_the_front_door_exports_what_its_signatures_name() -> None:
    import orch_review
    from orch_review.core import EventSink  # in review()'s signature
    from orch_review.events import AgentEvent

    assert EventSink is orch_review.EventSink and AgentEvent is orch_review.AgentEvent
    for name in ("review", "prepare", "run", "merge", "ReviewOptions", "Report"):
        assert name in orch_review.__all__
    for name in orch_review.__all__:
        assert getattr(orch_review, name) is not None, name
    errors = [getattr(orch_review, n) for n in orch_review.__all__ if n.endswith("Error")]
    assert errors and all(issubclass(e, orch_review.OrchReviewError) for e in errors)
    assert issubclass(orch_review.NothingToReview, orch_review.OrchReviewError)
    assert (Path(orch_review.__file__).parent / "py.typed").is_file()


def _docs_python_example() -> str:
    page = Path(__file__).parent.parent / "docs" / "python-api.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    examples = [b for b in blocks if "from orch_review import review" in b]
    assert len(examples) == 1, "the Python example of review() in docs/python-api.md is gone"
    return examples[0]


@pytest.mark.slow
def test_the_docs_python_example_runs_as_shown(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"README.md": "# demo\n"})
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, PLANTED_FILES)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "planted")
    fake_api.policy = planted_script()

    result = subprocess.run(
        [sys.executable, "-c", _docs_python_example()],
        cwd=repo,
        env=api_env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == ExitCode.FINDINGS, result.stderr
    assert "app.py:6" in result.stdout and "high" in result.stdout
    sarif = json.loads((repo / "out" / "orch-review.sarif").read_text(encoding="utf-8"))
    assert sarif["runs"][0]["results"]
