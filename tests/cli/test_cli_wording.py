"""What the real CLI says about amounts and counts: money true to its value, nouns agreeing
with their count, one ``orch-review:`` prefix per message."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orch_review.wording import usd
from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.files_model import OneSubtaskPerFile
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import PLANTED_FILES, PLANTED_INJECTION, ReviewScript, planted_script

pytestmark = pytest.mark.slow


def test_a_cost_cap_below_a_cent_is_named_as_it_was_set(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    report_file = tmp_path / "report.json"
    result = run_cli(
        repo, api_env, "--all", "--no-progress", "--max-cost-usd", "0.001", "--json", report_file
    )

    assert result.returncode == 3, result.stderr
    assert "cost cap reached ($0.001)" in result.stdout
    assert "$0.00)" not in result.stdout + result.stderr
    # The usage table's cost is the JSON report's, in the same words as everywhere else.
    spent = json.loads(report_file.read_text())["usage"]["total"]["cost_usd"]
    assert spent > 0
    total_row = next(ln for ln in result.stdout.splitlines() if ln.startswith("total "))
    assert total_row.split()[-1] == usd(spent) != "$0.00"


def test_one_agent_is_not_one_agents(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    result = run_cli(repo, api_env, "--all", "--no-progress", "--max-agents", "1")

    assert result.returncode == 3, result.stderr
    assert "agent cap reached (1 agent)" in result.stdout
    out = result.stdout + result.stderr
    assert re.search(r"\b1 (agents|files|changed files|concerns|findings)\b", out) is None, out
    assert "(s)" not in out


def test_a_change_of_one_skipped_file_says_so_in_the_singular(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"app.py": "x = 1\n", "poetry.lock": "a\n", "yarn.lock": "a\n"})
    write(repo, {"poetry.lock": "b\n"})
    one = run_cli(repo, api_env)
    write(repo, {"yarn.lock": "b\n"})
    two = run_cli(repo, api_env)

    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    said_one, said_two = one.stdout + one.stderr, two.stdout + two.stderr
    assert "the 1 changed file in scope is skipped" in " ".join(said_one.split())
    assert "all 1" not in said_one and "1 changed files" not in said_one
    assert "all 2 changed files in scope are skipped" in " ".join(said_two.split())


def test_an_error_carries_one_prefix(api_env: dict[str, str], git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a = 1\n"})
    git(repo, "status")
    result = run_cli(repo, api_env, "merge", "missing-shard.json")

    assert result.returncode == 2
    assert result.stderr.startswith("orch-review: no usable shard report: missing-shard.json")
    assert result.stderr.count("orch-review:") == 1


VAGUE = [
    "Review the overall architecture of the change for layering problems.",
    "Look for performance regressions anywhere in the code base, especially in hot loops.",
    "Check error handling and logging conventions across the project.",
    "Audit naming consistency.",
    "Review the overall architecture of the change for layering problems.",  # sent twice
    "Think about concurrency.",
]


def test_refused_subtasks_make_one_grouped_warning_and_one_annotation(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"app.py": "x = 1\n", "poetry.lock": "a\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {"app.py": "x = 2\n", "poetry.lock": "b\n"})
    git(repo, "commit", "-q", "-am", "change")
    base = git(repo, "rev-parse", "main").strip()
    fake_api.policy = OneSubtaskPerFile(base=base, extra_subtasks=VAGUE)

    github = run_cli(repo, api_env, "--base", "main", "--format", "github", "--no-progress")
    fake_api.policy = OneSubtaskPerFile(base=base, extra_subtasks=VAGUE)
    text = run_cli(repo, api_env, "--base", "main", "--no-progress", "--no-journal")

    assert github.returncode == text.returncode == 0, github.stderr + text.stderr
    [annotation] = [ln for ln in github.stdout.splitlines() if "refused" in ln]
    assert annotation.startswith("::warning ")
    [line] = [ln for ln in text.stdout.splitlines() if "refused" in ln]
    assert line.startswith("warning: 6 subtasks of the main agent were refused and not reviewed. ")
    for shown in (annotation, line):
        # Each reason once, with how many subtasks it refused, most frequent first.
        assert shown.count("it names no file of the change") == 1
        assert shown.count("is out of scope") == 1
        assert shown.index("5 because it names no file") < shown.index(
            "1 because `poetry.lock` is out"
        )
        assert shown.count("Review the overall architecture") == 1
        assert "and 2 more" in shown
    assert len(line) < 600


#: What a main agent writes before verification: it names the finding its verifier refuted.
SUMMARY = (
    "Beware: ratio() in calc.py divides by count, which may be zero, and find_user in "
    "app.py builds SQL from the caller's name."
)


def test_the_reviewers_summary_never_contradicts_the_report(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script(summary=SUMMARY)
    report_file = tmp_path / "report.json"
    shown = run_cli(repo, api_env, "--all", "--no-progress", "--json", report_file)
    fake_api.policy = planted_script(summary=SUMMARY)
    verbose = run_cli(repo, api_env, "--all", "--no-progress", "--no-journal", "--verbose")

    assert shown.returncode == verbose.returncode == 1, shown.stderr + verbose.stderr
    # The refuted division is not shown, and neither is the summary that names it.
    assert "divides by count" not in shown.stdout
    assert "Reviewer's summary not shown: it was written before 1 finding was dropped" in (
        shown.stdout
    )
    # The machine report keeps the model's words, documented as unverified.
    assert json.loads(report_file.read_text())["summary"] == SUMMARY
    # --verbose lists the refuted finding and the summary beside it, labelled as such.
    assert "REFUTED" in verbose.stdout and "divides by count" in verbose.stdout
    assert "Reviewer's summary (unverified; it may name findings under Not reported)" in (
        verbose.stdout
    )


def test_the_reviewers_summary_is_shown_when_nothing_was_dropped(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = ReviewScript([PLANTED_INJECTION], summary="The SQL layer needs care.")
    result = run_cli(repo, api_env, "--all", "--no-progress")

    assert result.returncode == 1, result.stderr
    assert "Reviewer's summary (unverified; the findings above are what was verified)" in (
        result.stdout
    )
    assert "   The SQL layer needs care." in result.stdout
    assert "not shown" not in result.stdout


def test_from_a_subdirectory_people_read_paths_from_there_and_machines_from_the_top(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo({**PLANTED_FILES, "docs/notes.md": "# notes\n", "poetry.lock": "a\n"})
    docs = repo / "docs"
    fake_api.policy = planted_script()
    report_file, sarif_file = tmp_path / "r.json", tmp_path / "r.sarif"
    text = run_cli(
        docs, api_env, "--all", "--no-progress", "-v", "--json", report_file, "--sarif", sarif_file
    )
    fake_api.policy = planted_script()
    github = run_cli(docs, api_env, "--all", "--no-progress", "--format", "github")

    assert text.returncode == github.returncode == 1, text.stderr + github.stderr
    # The terminal, as git shows paths: relative to where orch-review was run.
    assert "1. HIGH   ../app.py:6  [security]" in text.stdout
    assert "REFUTED    medium ../calc.py:4" in text.stdout
    assert "SKIPPED ../poetry.lock — " in text.stdout
    assert "HIGH   app.py" not in text.stdout  # the evidence is the model's words, as written
    # JSON, SARIF and workflow commands stay repository-relative, as documented.
    paths = {f["path"] for f in json.loads(report_file.read_text())["findings"]}
    assert paths == {"app.py", "calc.py"}
    [run] = json.loads(sarif_file.read_text())["runs"]
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert uris == {"app.py"}
    assert "::error file=app.py,line=6," in github.stdout


def test_the_plan_from_a_subdirectory_lists_paths_from_there(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"app.py": "x = 1\n", "docs/notes.md": "# n\n", "poetry.lock": "a\n"})
    text = run_cli(repo / "docs", api_env, "plan", "--all")
    as_json = run_cli(repo / "docs", api_env, "plan", "--all", "--json")

    assert text.returncode == as_json.returncode == 0, text.stderr + as_json.stderr
    lines = text.stdout.splitlines()
    assert any(ln.endswith("  ../app.py") for ln in lines), text.stdout
    assert any(ln.endswith("  notes.md") for ln in lines), text.stdout
    assert any(ln.startswith("skipped: ../poetry.lock (") for ln in lines), text.stdout
    data = json.loads(as_json.stdout)
    assert {f["path"] for f in data["files"]} == {"app.py", "docs/notes.md"}
