"""End to end: `orch-review --all` as a subprocess against the fake Messages API."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from orch_review.engine.agents.prompts import MODE_ENTER
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import (
    can_drop_read_override,
    make_planted_repo,
    popen_cli,
    run_cli,
    run_cli_unprivileged,
)
from tests.scripted import (
    PLANTED_FILES,
    PLANTED_INJECTION,
    confirm,
    is_sweep,
    planted_script,
    sweep_files,
)


@pytest.fixture
def planted_review(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> subprocess.CompletedProcess[str]:
    """`orch-review --all` on the planted-bug repository, the fake API playing the script."""
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    return run_cli(repo, api_env, "--all")


def test_confirmed_finding_is_printed_and_refuted_one_is_not(
    planted_review: subprocess.CompletedProcess[str],
) -> None:
    result = planted_review

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout
    assert "SQL query built with an f-string" in result.stdout
    # What the subagent suggested and how sure its verifier was are shown with the finding.
    assert "fix: Pass `name` as a query parameter" in result.stdout
    assert "verified (high confidence): re-read the lines" in result.stdout
    assert "calc.py" not in result.stdout.split("concerns reviewed")[0]
    assert "1 finding refuted" in result.stdout
    assert "Traceback" not in result.stderr
    main_row = next(ln for ln in result.stdout.splitlines() if ln.startswith("main "))
    assert main_row.split()[1] == "1"  # the main agent is one agent, not "0"


def test_progress_shows_the_snapshot_being_made_and_removed(
    planted_review: subprocess.CompletedProcess[str],
) -> None:
    lines = planted_review.stderr.splitlines()
    steps = [line for line in lines if line.startswith("[setup ")]
    assert [line.split(" (")[0] for line in steps] == [
        "[setup snapshot] started: copying the content under review into a read-only snapshot",
        "[setup snapshot] done: copying the content under review into a read-only snapshot",
        "[setup cleanup] started: removing the snapshot",
        "[setup cleanup] done: removing the snapshot",
    ]
    # Written while the main agent starts; removed after the last agent ends.
    assert lines.index(steps[2]) > max(i for i, ln in enumerate(lines) if "[verifier" in ln)


def test_requests_carry_effort_mode_message_and_cache_breakpoints(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    run_cli(repo, api_env, "--all", "--effort", "high")

    requests = fake_api.message_requests
    assert len(requests) == 12  # 3 main, 2 + 2 per concern, 1 for the sweep of README.md
    assert all(r.body["output_config"] == {"effort": "high"} for r in requests)
    assert all(r.body["stream"] is True for r in requests)
    for request in requests:
        assert request.body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        last_block = request.body["messages"][-1]["content"][-1]
        assert last_block["cache_control"] == {"type": "ephemeral"}
    main = fake_api.requests_for("main")
    first = main[0].body["messages"]
    assert [m["role"] for m in first] == ["user", "system"]
    assert first[1]["content"][0]["text"] == MODE_ENTER
    # The mode is announced once: later turns keep the same system message, no second one.
    for later in main[1:]:
        assert later.model_request().system_messages == [MODE_ENTER]
    # The static prefix is byte-identical across the turns and agents of a role.
    for role in ("main", "subagent", "verifier"):
        prefixes = {
            json.dumps([r.body["tools"], r.body["system"]]) for r in fake_api.requests_for(role)
        }
        assert len(prefixes) == 1, role
    # Subagents and verifiers are not told about the mode: it is the main agent's switch.
    assert all(not r.model_request().system_messages for r in fake_api.requests_for("subagent"))


def test_second_run_is_served_from_the_journal(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    first = run_cli(repo, api_env, "--all")
    fake_api.reset()
    fake_api.policy = planted_script()

    second = run_cli(repo, api_env, "--all")

    assert second.returncode == first.returncode == 1
    assert fake_api.message_requests == []
    assert "app.py:6" in second.stdout
    assert (repo / ".git" / "orch-review" / "journal.sqlite3").exists()
    assert "journal" in second.stdout  # agents served from the journal are shown


def test_changing_one_file_only_pays_for_its_concern(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    run_cli(repo, api_env, "--all")
    fake_api.reset()
    fake_api.policy = planted_script()
    calc = repo / "calc.py"
    calc.write_text(calc.read_text() + "\n\ndef half(x: int) -> float:\n    return x / 2\n")

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1
    subagents = fake_api.requests_for("subagent")
    assert subagents, "the concern about calc.py must run again"
    assert all("calc.py" in r.model_request().first_user_text for r in subagents)


def test_json_report_keeps_refuted_findings_and_usage_per_role(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    out = tmp_path / "report.json"

    result = run_cli(repo, api_env, "--all", "--json", str(out))

    assert result.returncode == 1
    data = json.loads(out.read_text())
    statuses = {(f["path"], f["status"]) for f in data["findings"]}
    assert statuses == {("app.py", "confirmed"), ("calc.py", "refuted")}
    refuted = next(f for f in data["findings"] if f["status"] == "refuted")
    assert refuted["verdict"]["reason"].startswith("the cited code is guarded")
    # Every optional field the scripted models sent arrives in the report.
    assert refuted["verdict"]["confidence"] == "low"
    assert refuted["suggestion"] == "Return early when `count` is zero."
    confirmed = next(f for f in data["findings"] if f["status"] == "confirmed")
    assert confirmed["verdict"]["confidence"] == "high"
    assert confirmed["suggestion"] == PLANTED_INJECTION.suggestion
    assert confirmed["verdict"]["evidence"].startswith("def find_user(")
    usage = data["usage"]["by_role"]
    assert usage["main"]["requests"] == 3
    assert usage["subagent"]["requests"] == 5  # the two concerns, and the sweep of README.md
    assert usage["verifier"]["requests"] == 4
    assert usage["subagent"]["cache_read_tokens"] > 0
    assert data["usage"]["total"]["cost_usd"] > 0
    assert data["incomplete"] is False
    assert list(data) == sorted(data)


def test_format_json_prints_only_json_on_stdout(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all", "--format", "json", "--fail-on", "never")

    assert result.returncode == 0
    assert json.loads(result.stdout)["counts"]["confirmed"] == 1


def test_two_processes_share_one_journal(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    procs = [popen_cli(repo, api_env, "--all", "--no-progress") for _ in range(2)]
    outputs = [p.communicate(timeout=120) for p in procs]

    for proc, (stdout, stderr) in zip(procs, outputs, strict=True):
        assert proc.returncode == 1, stderr
        assert "app.py:6" in stdout
    db = sqlite3.connect(repo / ".git" / "orch-review" / "journal.sqlite3")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    kinds = dict(db.execute("SELECT kind, count(*) FROM journal GROUP BY kind").fetchall())
    assert kinds["subagent"] == 3 and kinds["verifier"] == 2  # README.md is swept


def test_journal_stats_and_clear(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    empty = run_cli(repo, api_env, "journal", "stats")
    assert empty.returncode == 0 and "no review has run here yet" in empty.stdout
    fake_api.policy = planted_script()
    run_cli(repo, api_env, "--all")

    stats = run_cli(repo, api_env, "journal", "stats")
    assert stats.returncode == 0
    assert "subagent: 3" in stats.stdout and "verifier: 2" in stats.stdout

    cleared = run_cli(repo, api_env, "journal", "clear")
    assert cleared.returncode == 0 and "removed" in cleared.stdout
    assert "entries: 0" in run_cli(repo, api_env, "journal", "stats").stdout


def test_journal_clear_removes_an_unreadable_journal(
    api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    path = repo / ".git" / "orch-review" / "journal.sqlite3"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 100)

    stats = run_cli(repo, api_env, "journal", "stats")
    assert stats.returncode == 2 and "journal clear" in stats.stderr

    cleared = run_cli(repo, api_env, "journal", "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert not path.exists()


def test_several_outputs_at_once_are_valid(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    import jsonschema

    from orch_review.reporters.json_report import schema

    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    sarif_path, json_path = tmp_path / "out.sarif", tmp_path / "out.json"

    result = run_cli(
        repo,
        api_env,
        "--all",
        "--sarif",
        str(sarif_path),
        "--json",
        str(json_path),
        "--format",
        "github",
    )

    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("::error file=app.py,line=6")
    sarif = json.loads(sarif_path.read_text())
    sarif_schema = json.loads(
        (Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text()
    )
    jsonschema.validate(sarif, sarif_schema)
    (result_entry,) = sarif["runs"][0]["results"]
    assert result_entry["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "app.py"
    assert result_entry["locations"][0]["physicalLocation"]["region"]["startLine"] == 6
    report = json.loads(json_path.read_text())
    jsonschema.validate(report, schema())
    assert (
        report["findings"][0]["fingerprint"]
        == result_entry["partialFingerprints"]["primaryLocationLineHash"]
    )


def test_findings_outside_the_change_are_filtered_not_lost(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    from tests.conftest import git

    repo = make_planted_repo(git_repo)  # both bugs committed on main
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "calc.py").write_text(
        (repo / "calc.py").read_text() + "\n\ndef twice(x):\n    return 2 * x\n"
    )
    script = planted_script()
    script.concerns[1].verdict = confirm  # ratio() at calc.py:4, not on a changed line
    script.concerns[1].severity = "high"
    fake_api.policy = script
    out = tmp_path / "report.json"

    result = run_cli(repo, api_env, "--json", str(out))  # default scope: the branch's change

    assert result.returncode == 0, result.stdout + result.stderr  # calc.py:4 is not changed
    data = json.loads(out.read_text())
    statuses = {f["path"]: f["status"] for f in data["findings"]}
    assert statuses == {"calc.py": "filtered"}
    assert data["counts"]["filtered"] == 1
    loud = run_cli(repo, api_env, "--filter-mode", "nofilter")
    assert loud.returncode == 1 and "calc.py:4" in loud.stdout


def test_subtasks_about_skipped_files_are_refused_back_to_the_model(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    from tests.scripted import PLANTED_FILES

    repo = git_repo({**PLANTED_FILES, "poetry.lock": "[[package]]\n"})
    script = planted_script()
    script.subtasks = [
        script.concerns[0].subtask,
        "Check poetry.lock for pinned vulnerable versions.",
    ]
    fake_api.policy = script

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1, result.stderr
    subagent_tasks = {r.model_request().first_user_text for r in fake_api.requests_for("subagent")}
    assert not any("poetry.lock" in task for task in subagent_tasks)
    last_main = fake_api.requests_for("main")[-1].model_request()
    (workflow_result,) = last_main.tool_results()
    assert (
        "refused: `poetry.lock` is out of scope (lock file or generated/vendored code)"
        in (workflow_result[1])
    )


def test_subtasks_beyond_the_cap_are_dropped_with_a_note(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, {**api_env, "ORCH_REVIEW_MAX_SUBTASKS": "1"}, "--all")

    assert result.returncode == 1, result.stderr
    tasks = {r.model_request().first_user_text for r in fake_api.requests_for("subagent")}
    asked = [t for t in tasks if not is_sweep(t)]
    assert len(asked) == 1 and "injection" in asked[0]
    # The dropped subtask's file is still reviewed: by the engine's sweep.
    assert [sweep_files(t) for t in tasks if is_sweep(t)] == [["README.md", "calc.py"]]
    (workflow_result,) = fake_api.requests_for("main")[-1].model_request().tool_results()
    assert "only the first 1 subtasks were run; 1 were dropped" in workflow_result[1]
    assert "Call Workflow again with the remaining ones" in workflow_result[1]


def test_damaged_journal_gives_one_warning_with_the_way_out(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    run_cli(repo, api_env, "--all")
    path = repo / ".git" / "orch-review" / "journal.sqlite3"
    db = sqlite3.connect(path)  # enough pages to damage some past the header
    with db:
        db.executemany(
            "INSERT INTO journal VALUES (?, 'pad', ?, 0, 0, '')",
            [(f"pad{i}", "x" * 500) for i in range(200)],
        )
    db.close()  # the last connection folds the WAL into the file
    data = path.read_bytes()
    path.write_bytes(data[:8192] + b"\xa5" * (len(data) - 8192))
    fake_api.reset()
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all", "--no-progress")

    assert result.returncode == 1, result.stderr
    assert "app.py:6" in result.stdout  # the review itself goes on
    journal_lines = [line for line in result.stderr.splitlines() if "Journal" in line]
    assert len(journal_lines) == 1, result.stderr
    assert "orch-review journal clear" in journal_lines[0]
    stats = run_cli(repo, api_env, "journal", "stats")
    assert stats.returncode == 2 and "orch-review journal clear" in stats.stderr


def test_an_unreadable_file_makes_the_review_incomplete_and_is_named(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    if not can_drop_read_override(tmp_path):
        pytest.skip("needs root and setpriv to run without root's permission to read anything")
    repo = git_repo({**PLANTED_FILES, "locked.py": "SECRET = 1\n"})
    (repo / "locked.py").chmod(0)
    fake_api.policy = planted_script()

    result = run_cli_unprivileged(repo, api_env, "--all", "--no-progress")

    assert result.returncode == 3, result.stderr
    assert "app.py:6" in result.stdout  # the rest is reviewed
    assert "INCOMPLETE: 1 unreadable file not reviewed: locked.py" in result.stdout
    assert "SECRET" not in json.dumps([r.body for r in fake_api.requests])


def test_progress_shows_the_running_cost_and_the_files_covered(
    planted_review: subprocess.CompletedProcess[str],
) -> None:
    totals = [
        line.split(" — ", 1)[1]
        for line in planted_review.stderr.splitlines()
        if line.startswith("[") and " — " in line
    ]
    costs = [float(c) for t in totals for c in re.findall(r"\$([\d.]+) so far", t)]
    assert costs and costs == sorted(costs) and costs[-1] > 0, totals
    covered = [
        tuple(map(int, c)) for t in totals for c in re.findall(r"(\d+)/(\d+) files covered", t)
    ]
    assert covered, totals
    assert [done for done, _ in covered] == sorted(done for done, _ in covered)
    done, total = covered[-1]
    assert done == total > 0
