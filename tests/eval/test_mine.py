"""`orch-review eval mine`: SZZ over a history the test builds, so the cases are known."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from orch_review.errors import ExitCode
from orch_review.eval import mine as mining
from orch_review.eval.cases import load_cases
from tests.conftest import GitRepoFactory, git, write
from tests.eval.scripted import BASE_FILES, BUGGY_FILES, review_policy
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli

HELPER = (
    "def normalise_user_name(name: str) -> str:\n"
    "    cleaned = name.strip().lower().replace('  ', ' ')\n"
    "    return cleaned.removeprefix('user:').removesuffix('@example.invalid')\n"
)


def _commit(repo: Path, message: str, files: dict[str, str]) -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _history(git_repo: GitRepoFactory) -> tuple[Path, dict[str, str]]:
    """A history with two bugs, their fixes, and each thing SZZ gets wrong."""
    repo = git_repo(BASE_FILES)
    sha = {"root": git(repo, "rev-parse", "HEAD").strip()}
    sha["injection"] = _commit(repo, "Look users up by name", {"app.py": BUGGY_FILES["app.py"]})
    sha["helper"] = _commit(
        repo, "Add a name helper", {"names.py": HELPER, "text.py": "GREETING = 'hello'\n"}
    )
    util = BASE_FILES["util.py"]
    sha["comment"] = _commit(repo, "Explain total()", {"util.py": "# Sum the items.\n\n" + util})
    commented = "# Sum the items.\n\n" + util
    sha["bound"] = _commit(
        repo,
        "Count the items again",
        {"util.py": commented.replace("range(len(items))", "range(len(items) + 1)")},
    )
    # A refactoring moves the helper, unchanged, into another file.
    (repo / "names.py").unlink()
    moved = "GREETING = 'hello'\n\n" + HELPER
    sha["move"] = _commit(repo, "Move the helper", {"text.py": moved})
    sha["vendor"] = _commit(
        repo, "Vendor a table", {"table.py": "".join(f"ROW_{n} = {n}\n" for n in range(600))}
    )
    sha["fix-injection"] = _commit(
        repo, "fix: parameterise the user query", {"app.py": BASE_FILES["app.py"]}
    )
    # The fix of the bound also drops the comment and the blank line: neither is a bug.
    sha["fix-bound"] = _commit(repo, "Fix the loop bound", {"util.py": util})
    sha["fix-helper"] = _commit(
        repo,
        "Fix the helper: keep double spaces",
        {"text.py": moved.replace(".replace('  ', ' ')", "")},
    )
    sha["fix-table"] = _commit(
        repo,
        "Fix row 7",
        {"table.py": "".join(f"ROW_{n} = {n if n != 7 else 70}\n" for n in range(600))},
    )
    git(repo, "checkout", "-q", "-b", "hotfix")
    sha["side"] = _commit(repo, "Rename a variable", {"app.py": BASE_FILES["app.py"] + "\n"})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'hotfix'", "hotfix")
    sha["merge"] = git(repo, "rev-parse", "HEAD").strip()
    return repo, sha


def test_the_planted_origins_are_found_exactly_and_each_filter_counts(
    git_repo: GitRepoFactory,
) -> None:
    repo, sha = _history(git_repo)

    result = mining.mine(repo, mining.MineOptions(horizon=3, clean=2))

    bugs = {c.head: c for c in result.cases if not c.clean}
    assert set(bugs) == {sha["injection"], sha["bound"], sha["helper"]}
    injection = bugs[sha["injection"]]
    assert injection.base == sha["root"]
    assert [(e.path, e.start_line, e.end_line) for e in injection.expected] == [("app.py", 6, 6)]
    assert "parameterise the user query" in injection.expected[0].description
    bound = bugs[sha["bound"]]
    assert [(e.path, e.start_line) for e in bound.expected] == [("util.py", 5)]
    # The moved helper is blamed on the commit that wrote it, where it was names.py line 2.
    helper = bugs[sha["helper"]]
    assert [(e.path, e.start_line) for e in helper.expected] == [("names.py", 2)]
    dropped = result.dropped
    assert dropped[mining.WHITESPACE] == 2  # the comment and the blank line
    assert dropped[mining.MOVED] == 1
    assert dropped[mining.TOO_LARGE] == 1  # the vendored table
    assert dropped[mining.MERGE_FIX] == 1  # "Merge branch 'hotfix'"
    assert result.fixes == 5
    clean = [c for c in result.cases if c.clean]
    assert len(clean) == 2
    # Never blamed, old enough, not a fix, not too large: the refactoring and the comment.
    assert {c.head for c in clean} == {sha["move"], sha["comment"]}


def test_limit_since_and_pattern_narrow_the_fixes(git_repo: GitRepoFactory) -> None:
    repo, sha = _history(git_repo)

    newest = mining.mine(repo, mining.MineOptions(limit=1, clean=0))
    worded = mining.mine(repo, mining.MineOptions(pattern=r"parameterise", clean=0))

    assert newest.fixes == 1
    assert [c.head for c in worded.cases] == [sha["injection"]]


def test_since_leaves_out_older_fixes(git_repo: GitRepoFactory) -> None:
    repo = git_repo(BASE_FILES)
    dated = {"2020": "2020-03-01T12:00:00", "2025": "2025-03-01T12:00:00"}

    def commit_on(year: str, message: str, files: dict[str, str]) -> None:
        write(repo, files)
        git(repo, "add", "-A")
        env = {**os.environ, "GIT_COMMITTER_DATE": dated[year], "GIT_AUTHOR_DATE": dated[year]}
        subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, env=env, check=True)

    commit_on("2020", "Look users up by name", {"app.py": BUGGY_FILES["app.py"]})
    commit_on("2020", "fix: parameterise the user query", {"app.py": BASE_FILES["app.py"]})
    commit_on("2025", "Count again", {"util.py": BUGGY_FILES["util.py"]})
    commit_on("2025", "Fix the loop bound", {"util.py": BASE_FILES["util.py"]})

    every = mining.mine(repo, mining.MineOptions(clean=0))
    recent = mining.mine(repo, mining.MineOptions(since="2024-01-01", clean=0))

    assert (every.fixes, recent.fixes) == (2, 1)
    assert [e.path for c in recent.cases for e in c.expected] == ["util.py"]


@pytest.mark.slow
def test_mined_cases_run_through_eval_end_to_end(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo(BASE_FILES)
    _commit(repo, "Add a total helper", {"extra.py": "def twice(x):\n    return 2 * x\n"})
    _commit(repo, "Look users up by name", {"app.py": BUGGY_FILES["app.py"]})
    _commit(repo, "fix: parameterise the user query", {"app.py": BASE_FILES["app.py"]})
    cases = tmp_path / "cases.jsonl"

    mined = run_cli(repo, api_env, "eval", "mine", "--horizon", "1", "-o", str(cases))

    assert mined.returncode == ExitCode.CLEAN, mined.stderr
    assert "1 bug case(s) and 1 clean case(s) written" in mined.stderr
    assert [c.clean for c in load_cases(cases)] == [False, True]
    fake_api.policy = review_policy()
    out = tmp_path / "eval.json"
    env = {**api_env, "ORCH_REVIEW_CACHE_DIR": str(tmp_path / "cache")}

    result = run_cli(tmp_path, env, "eval", str(cases), "--json", str(out))

    assert result.returncode == ExitCode.CLEAN, result.stderr
    overall = json.loads(out.read_text(encoding="utf-8"))["overall"]
    assert overall["recall"] == 1.0  # the injection the fix repaired was caught
    assert overall["false_positives_per_clean_change"] == 0.0
    assert overall["cost_usd"] > 0


def test_a_pattern_that_is_not_a_regular_expression_is_a_usage_error(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo(BASE_FILES)
    from orch_review.errors import UsageError

    with pytest.raises(UsageError, match="--pattern"):
        mining.mine(repo, mining.MineOptions(pattern="fix("))


@pytest.mark.slow
def test_fixes_are_also_found_through_bug_labelled_issues(
    api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    from tests.fakes.github_api import READ_TOKEN, FakeGitHubAPI
    from tests.fakes.github_issues import IssueTracker

    repo = git_repo(BASE_FILES)
    origin = _commit(repo, "Look users up by name", {"app.py": BUGGY_FILES["app.py"]})
    _commit(repo, "Count again", {"util.py": BUGGY_FILES["util.py"]})
    _commit(repo, "Use a parameter (#12)", {"app.py": BASE_FILES["app.py"]})
    _commit(repo, "Tidy the loop (#13, #404)", {"util.py": BASE_FILES["util.py"]})
    git(repo, "remote", "add", "origin", "https://github.com/octo/demo.git")
    cases = tmp_path / "cases.jsonl"
    with FakeGitHubAPI() as github:
        tracker = IssueTracker(github)
        tracker.add(12, "bug", "security")
        tracker.add(13, "documentation")
        env = {**api_env, "GITHUB_TOKEN": READ_TOKEN, "GITHUB_API_URL": github.base_url}

        result = run_cli(repo, env, "eval", "mine", "--clean", "0", "-o", str(cases))

    assert result.returncode == ExitCode.CLEAN, result.stderr
    (case,) = load_cases(cases)
    assert case.head == origin  # #12 is a bug; #13 is not, and #404 cannot be read
    assert "2 fix commit(s)" not in result.stderr
    assert "1 fix commit(s) examined (1 through a bug-labelled issue)" in result.stderr
    assert "1 linked issue(s) could not be read" in result.stderr
    assert sorted(tracker.asked) == [12, 13, 404]
    assert READ_TOKEN not in result.stderr + cases.read_text()


@pytest.mark.slow
def test_fixes_are_also_found_through_gitlab_labels_and_merge_requests_closing_bugs(
    api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    from tests.fakes.gitlab_api import BOT_TOKEN, FakeGitLabAPI

    repo = git_repo(BASE_FILES)
    injection = _commit(repo, "Look users up by name", {"app.py": BUGGY_FILES["app.py"]})
    bound = _commit(repo, "Count again", {"util.py": BUGGY_FILES["util.py"]})
    _commit(
        repo, "Use a parameter\n\nSee merge request octo/demo!5", {"app.py": BASE_FILES["app.py"]}
    )
    _commit(repo, "Tidy the loop (#13, !6, other/repo!7)", {"util.py": BASE_FILES["util.py"]})
    git(repo, "remote", "add", "origin", "git@gitlab.com:octo/demo.git")
    cases = tmp_path / "cases.jsonl"
    with FakeGitLabAPI(project_path="octo/demo") as gitlab:
        gitlab.add_issue(12, "Bug", "security")
        gitlab.add_issue(13, "documentation")
        gitlab.add_labelled_mr(5, ["backend"], closes=(12,))  # closes a bug: a fix
        gitlab.add_labelled_mr(6, ["feature"])
        env = {**api_env, "GITLAB_TOKEN": BOT_TOKEN, "CI_API_V4_URL": gitlab.api_url}

        result = run_cli(repo, env, "eval", "mine", "--clean", "0", "-o", str(cases))
        asked = sorted(r.path.rsplit("/projects/", 1)[1] for r in gitlab.requests)

    assert result.returncode == ExitCode.CLEAN, result.stderr
    (case,) = load_cases(cases)
    assert case.head == injection != bound  # !5 closes bug #12; #13 and !6 are no bugs
    assert "1 fix commit(s) examined (1 through a bug-labelled issue)" in result.stderr
    assert asked == [
        "octo%2Fdemo/issues/13",
        "octo%2Fdemo/merge_requests/5",
        "octo%2Fdemo/merge_requests/5/closes_issues",
        "octo%2Fdemo/merge_requests/6",
        "octo%2Fdemo/merge_requests/6/closes_issues",
    ]  # other/repo!7 is another project's; #12 was read with the issues !5 closes
    assert BOT_TOKEN not in result.stderr + cases.read_text()


def test_gitlab_references_name_this_projects_merge_requests_only() -> None:
    from orch_review.eval.linked_gitlab import gitlab_com_project, label_names, merge_requests

    message = "Fix (!3), see merge request octo/demo!4 and other/demo!5, x!6, !!7, &!8"
    assert merge_requests(message, "octo/demo") == [3, 4]
    assert gitlab_com_project("https://gitlab.com/octo/sub/demo.git") == "octo/sub/demo"
    assert gitlab_com_project("https://github.com/octo/demo.git") is None
    assert label_names({"labels": ["Bug", {"name": "kind/bug"}, 3, None]}) == {"bug", "kind/bug"}


def test_references_name_issues_of_this_repository_only() -> None:
    from orch_review.eval.linked import github_com_repository, references

    assert references("Fix crash (#12), closes #7; see other/repo#9 and &#38; #12") == [12, 7]
    assert github_com_repository("git@github.com:octo/demo.git") == "octo/demo"
    assert github_com_repository("https://github.com/octo/demo") == "octo/demo"
    assert github_com_repository("https://gitlab.com/octo/demo.git") is None


def test_a_whitespace_only_fix_blames_no_line(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"calc.py": "def mul(a, b):\n    return a + b\n"})
    _commit(repo, "Multiply", {"calc.py": "def mul(a, b):\n    return a * b\n"})
    _commit(repo, "fix: whitespace", {"calc.py": "def mul(a, b):\n    return  a * b\n"})
    _commit(repo, "fix: blank lines", {"calc.py": "def mul(a, b):\n\n    return  a * b\n\n"})

    result = mining.mine(repo, mining.MineOptions(clean=0))

    assert result.fixes == 2
    assert result.cases == []
    assert result.dropped[mining.WHITESPACE] >= 1


def test_a_reformatted_line_beside_a_real_fix_is_not_blamed(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"calc.py": "def f(a, b):\n    return b\n"})
    origin = _commit(repo, "Add", {"calc.py": "def f(a, b):\n    x = a\n    return x + b\n"})
    _commit(repo, "fix: sign", {"calc.py": "def f(a, b):\n    x  =  a\n    return x - b\n"})

    result = mining.mine(repo, mining.MineOptions(clean=0))

    assert [(c.head, [(e.start_line, e.end_line) for e in c.expected]) for c in result.cases] == [
        (origin, [(3, 3)])
    ]


@pytest.mark.parametrize("since", ["yesterdayish", "garbage", "now", "2099-01-01"])
def test_a_since_git_cannot_read_as_a_past_date_is_a_usage_error(
    git_repo: GitRepoFactory, tmp_path: Path, since: str
) -> None:
    repo = git_repo(BASE_FILES)
    cases = tmp_path / "cases.jsonl"

    result = run_cli(repo, dict(os.environ), "eval", "mine", "--since", since, "-o", str(cases))

    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "--since" in result.stderr and "2024-01-31" in result.stderr
    assert not cases.exists()
