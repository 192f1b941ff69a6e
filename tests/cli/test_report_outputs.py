"""Where reports go: ``-`` is stdout, paths are checked before the first request, and a
report written inside the repository is never reviewed by a later review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script

pytestmark = pytest.mark.slow


def _feature_repo(git_repo: GitRepoFactory) -> Path:
    """The planted repository on a branch that changes calc.py."""
    repo = make_planted_repo(git_repo)
    git(repo, "checkout", "-q", "-b", "feature")
    calc = repo / "calc.py"
    calc.write_text(calc.read_text() + "\n\ndef twice(x):\n    return 2 * x\n")
    return repo


def _plan(repo: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    result = run_cli(repo, env, "plan", *args, "--json", "-")
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_json_dash_prints_the_report_on_stdout_and_the_rest_on_stderr(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all", "--json", "-")

    assert result.returncode == 1, result.stderr
    assert not (repo / "-").exists()
    report = json.loads(result.stdout)  # nothing but the report on stdout
    assert [f["path"] for f in report["findings"] if f["status"] == "confirmed"] == ["app.py"]
    assert "SQL query built with an f-string" in result.stderr  # the people's report
    assert "-" not in git(repo, "status", "--porcelain", "--untracked-files=all").split()


def test_sarif_dash_is_stdout_too(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all", "--sarif", "-", "-q")

    assert result.returncode == 1, result.stderr
    assert not (repo / "-").exists()
    assert json.loads(result.stdout)["version"] == "2.1.0"


@pytest.mark.parametrize(
    "args",
    [
        ("--json", "-", "--format", "json"),
        ("--json", "-", "--sarif", "-"),
        ("--json", "/proc/r.json"),
        ("--sarif", "/proc/orch-review/r.sarif"),
        ("--json", "same.json", "--sarif", "same.json"),
    ],
    ids=["dash-and-format", "two-dashes", "proc", "proc-folder", "same-file"],
)
def test_unusable_outputs_are_refused_before_any_request(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    args: tuple[str, ...],
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all", *args)

    assert result.returncode == 2, result.stdout + result.stderr
    assert len(fake_api.requests) == 0
    assert "Traceback" not in result.stderr
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("orch-review: ")
    assert any(word in message for word in ("stdout", "/proc", "same.json"))


def test_a_report_written_in_the_repository_is_not_reviewed_again(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = _feature_repo(git_repo)
    fake_api.policy = planted_script()

    first = run_cli(repo, api_env, "--json", "report.json", "--sarif", "out/report.sarif")
    assert first.returncode == 0, first.stderr
    assert (repo / "report.json").is_file() and (repo / "out/report.sarif").is_file()

    plan = _plan(repo, api_env)
    assert [f["path"] for f in plan["files"]] == ["calc.py"]  # type: ignore[index]
    skipped = {s["path"]: s["reason"] for s in plan["skipped"]}  # type: ignore[attr-defined]
    assert skipped["report.json"].startswith("an orch-review report")
    assert skipped["out/report.sarif"].startswith("an orch-review report")

    # Committed on purpose, it is still orch-review's output, in every scope.
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "keep the report")
    plan_all = _plan(repo, api_env, "--all")
    assert "report.json" not in [f["path"] for f in plan_all["files"]]  # type: ignore[index]
    base = _plan(repo, api_env, "--base", "main", "--head", "HEAD")
    assert [f["path"] for f in base["files"]] == ["calc.py"]  # type: ignore[index]

    # Anything else written there is reviewed like any file.
    (repo / "report.json").write_text('{"not": "a report any more"}\n')
    after = _plan(repo, api_env)
    assert "report.json" in [f["path"] for f in after["files"]]  # type: ignore[index]


def test_plan_json_writes_a_file_and_dash_or_a_bare_flag_print_it(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = _feature_repo(git_repo)

    to_file = run_cli(repo, api_env, "plan", "--json", "out.json")
    assert to_file.returncode == 0, to_file.stderr
    assert to_file.stdout == ""
    written = json.loads((repo / "out.json").read_text())
    assert [f["path"] for f in written["files"]] == ["calc.py"]

    dash = run_cli(repo, api_env, "plan", "--json", "-")
    bare = run_cli(repo, api_env, "plan", "--json")
    assert dash.returncode == bare.returncode == 0, dash.stderr + bare.stderr
    assert json.loads(dash.stdout) == json.loads(bare.stdout)
    assert not (repo / "-").exists()
    # The plan file is orch-review's own output: it is not part of the scope it describes.
    assert [f["path"] for f in json.loads(dash.stdout)["files"]] == ["calc.py"]

    unwritable = run_cli(repo, api_env, "plan", "--json", "/proc/plan.json")
    assert unwritable.returncode == 2
    assert "cannot write the plan to /proc/plan.json" in unwritable.stderr


def test_a_file_that_is_not_json_is_never_overwritten_by_a_report(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    # `plan --json PATHS` once meant "plan PATHS as JSON"; now PATH would be the plan's file.
    repo = _feature_repo(git_repo)
    before = (repo / "calc.py").read_bytes()

    result = run_cli(repo, api_env, "plan", "--json", "calc.py")

    assert result.returncode == 2
    assert "calc.py exists and is not a JSON file" in result.stderr
    assert (repo / "calc.py").read_bytes() == before
    folder = run_cli(repo, api_env, "plan", "--json", ".")
    assert folder.returncode == 2 and "is a directory" in folder.stderr
