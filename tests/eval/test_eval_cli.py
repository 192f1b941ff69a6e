"""`orch-review eval CASES.jsonl` end to end: real reviews against the fake API, hand counts."""

from __future__ import annotations

import json
from pathlib import Path

from orch_review.errors import ExitCode
from tests.conftest import GitRepoFactory, git
from tests.eval.scripted import review_policy, two_case_repo, two_cases, write_cases
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli


def _env(api_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**api_env, "ORCH_REVIEW_CACHE_DIR": str(tmp_path / "cache")}


def test_two_cases_give_the_hand_counted_figures(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = two_case_repo(git_repo)
    cases = write_cases(tmp_path / "cases.jsonl", two_cases(str(repo)))
    fake_api.policy = review_policy()
    out = tmp_path / "results" / "eval.json"

    result = run_cli(tmp_path, _env(api_env, tmp_path), "eval", str(cases), "--json", str(out))

    assert result.returncode == ExitCode.CLEAN, result.stderr
    overall = json.loads(out.read_text(encoding="utf-8"))["overall"]
    # By hand: 2 planted bugs, the SQL injection caught, the off-by-one missed -> recall 1/2.
    # Reported: the injection (a match) and the decoy on the clean change -> precision 1/2.
    # One clean change with one false positive -> 1.0 per clean change.
    assert overall["recall"] == 0.5
    assert overall["precision"] == 0.5
    assert overall["f1"] == 0.5
    assert overall["false_positives_per_clean_change"] == 1.0
    assert (overall["expected"], overall["found"], overall["reported"]) == (2, 1, 2)
    assert overall["cost_usd"] > 0
    assert "| **overall** | 50.0% (" in result.stdout
    assert "(1/2)" in result.stdout
    # Location matching needed no judge call.
    assert fake_api.requests_for("other") == []


def test_a_threshold_not_met_exits_1_and_says_which(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = two_case_repo(git_repo)
    cases = write_cases(tmp_path / "cases.jsonl", two_cases(str(repo)))
    fake_api.policy = review_policy()
    env = _env(api_env, tmp_path)

    low = run_cli(tmp_path, env, "eval", str(cases), "--min-recall", "0.5", "--max-fp", "1")
    high = run_cli(tmp_path, env, "eval", str(cases), "--min-recall", "0.75")
    noisy = run_cli(tmp_path, env, "eval", str(cases), "--max-fp", "0.5")

    assert low.returncode == ExitCode.CLEAN, low.stderr
    assert high.returncode == ExitCode.FINDINGS, high.stderr
    assert "recall 0.5 is below --min-recall 0.75" in high.stderr
    assert noisy.returncode == ExitCode.FINDINGS, noisy.stderr
    assert "exceed --max-fp 0.5" in noisy.stderr


def test_issues_without_a_location_go_to_the_judge_costed_on_their_own(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = two_case_repo(git_repo)
    described = two_cases(str(repo), located=False)
    del described[0]["expected"][0]["path"], described[0]["expected"][0]["line"]
    cases = write_cases(tmp_path / "cases.jsonl", described)
    policy = review_policy()
    fake_api.policy = policy
    out = tmp_path / "eval.json"
    env = _env(api_env, tmp_path)

    result = run_cli(tmp_path, env, "eval", str(cases), "--json", str(out))

    assert result.returncode == ExitCode.CLEAN, result.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    # The judge matched the SQL finding to the SQL issue, and nothing to the loop bound.
    assert (written["overall"]["recall"], written["overall"]["precision"]) == (0.5, 0.5)
    assert len(policy.judged) == 1  # one call for the bug change; none for the clean one
    assert [i["description"][:3] for i in policy.judged[0]["issues"]] == ["SQL", "The"]
    judge_requests = fake_api.requests_for("other")
    assert [r.body["model"] for r in judge_requests] == ["claude-sonnet-5"]
    assert written["judge"]["requests"] == 1 and written["judge"]["cost_usd"] > 0

    again = run_cli(tmp_path, env, "eval", str(cases), "--json", str(out))

    assert again.returncode == ExitCode.CLEAN, again.stderr
    assert len(fake_api.requests_for("other")) == 1  # the verdict came from the journal
    assert json.loads(out.read_text(encoding="utf-8"))["judge"]["from_journal"] == 1


def test_a_case_from_a_clone_url_and_a_case_that_cannot_run(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = two_case_repo(git_repo)
    bugs = two_cases(repo.as_uri())[0] | {"base": "origin/main", "head": "origin/bugs"}
    missing = {"id": "gone", "repo": str(repo), "base": "main", "head": "no-such-branch"}
    cases = write_cases(tmp_path / "cases.jsonl", [bugs, missing | {"expected": []}])
    fake_api.policy = review_policy()
    out = tmp_path / "eval.json"
    env = _env(api_env, tmp_path)

    result = run_cli(tmp_path, env, "eval", str(cases), "--json", str(out))

    assert result.returncode == ExitCode.INCOMPLETE, result.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["overall"]["scored"] == 1 and written["overall"]["failed"] == 1
    assert written["overall"]["recall"] == 0.5  # the clone was reviewed like the local repo
    (gone,) = [c for c in written["cases"] if c["id"] == "gone"]
    assert "unknown ref `no-such-branch`" in gone["error"]
    assert "Not scored (1):" in result.stdout and "`gone`" in result.stdout
    clones = list((tmp_path / "cache" / "eval-mirrors").iterdir())
    assert len(clones) == 1 and (clones[0] / "HEAD").is_file()  # a bare mirror


def test_a_clone_url_that_cannot_be_reached_leaves_only_its_case_not_scored(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = two_case_repo(git_repo)
    bugs = two_cases(str(repo))[0]
    nowhere = (tmp_path / "no-such-repository").as_uri()
    unreachable = {"id": "unreachable", "repo": nowhere, "base": "main", "head": "bugs"}
    cases = write_cases(tmp_path / "cases.jsonl", [unreachable | {"expected": []}, bugs])
    fake_api.policy = review_policy()
    out = tmp_path / "eval.json"

    result = run_cli(tmp_path, _env(api_env, tmp_path), "eval", str(cases), "--json", str(out))

    assert result.returncode == ExitCode.INCOMPLETE, result.stderr
    assert "Traceback" not in result.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["overall"]["scored"] == 1 and written["overall"]["failed"] == 1
    assert written["overall"]["recall"] == 0.5  # the good case was reviewed and scored
    (failed,) = [c for c in written["cases"] if c["id"] == "unreachable"]
    assert f"cannot clone {nowhere}" in failed["error"]
    assert "Not scored (1):" in result.stdout and "`unreachable`" in result.stdout
    assert fake_api.requests_for("subagent")  # the good case's review ran


def test_a_repo_that_is_neither_a_folder_nor_a_url_is_refused_before_any_request(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], tmp_path: Path
) -> None:
    case = {"id": "x", "repo": "ext::sh -c touch% pwned", "base": "a", "head": "b"}
    cases = write_cases(tmp_path / "cases.jsonl", [case | {"expected": []}])
    fake_api.policy = review_policy()

    result = run_cli(tmp_path, _env(api_env, tmp_path), "eval", str(cases))

    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "is not a folder" in result.stderr
    assert not (tmp_path / "pwned").exists()
    assert fake_api.requests == []


def test_cases_of_one_url_share_one_mirror_cloned_once_across_runs(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = two_case_repo(git_repo)
    url = repo.as_uri()
    bugs, clean = two_cases(url)
    moved = {"base": "origin/main", "head": "origin/bugs"}
    at_commit = bugs | moved | {"id": "bugs-by-id", "base": git(repo, "rev-parse", "main").strip()}
    rows = [bugs | moved, clean | {"base": "origin/main", "head": "origin/clean"}, at_commit]
    cases = write_cases(tmp_path / "cases.jsonl", rows)
    fake_api.policy = review_policy()
    out = tmp_path / "eval.json"
    env = _env(api_env, tmp_path)

    first = run_cli(tmp_path, env, "eval", str(cases), "--json", str(out))
    again = run_cli(tmp_path, env, "eval", str(cases), "--json", str(out), "--no-journal")

    assert first.returncode == ExitCode.CLEAN, first.stderr
    assert first.stderr.count(f"orch-review eval: cloning {url}") == 1
    assert json.loads(out.read_text(encoding="utf-8"))["overall"]["scored"] == 3
    assert again.returncode == ExitCode.CLEAN, again.stderr
    assert "cloning" not in again.stderr  # the cached mirror served the second run
    (mirror,) = (tmp_path / "cache" / "eval-mirrors").iterdir()
    assert git(mirror, "rev-parse", "--is-bare-repository").strip() == "true"
    assert git(mirror, "worktree", "list").count("\n") == 1  # each case's worktree removed
