"""Coverage counted in files: the engine covers what the model left out, and says what it could not.

A model that asks for one subtask per changed file of a 60-file change gets 20 of them run
(the per-call cap, lowered from its default of 200 so that the change stays small) and never
calls Workflow again; the engine's sweep reviews the rest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.files_model import MARKER, OneSubtaskPerFile
from tests.helpers import run_cli
from tests.scripted import is_sweep, subtask_text

# One worker builds the shared, expensive fixture once.
pytestmark = pytest.mark.xdist_group("big-change")

CHANGED = 60
CAP = 20  # max-subtasks: the subtasks one Workflow call runs
BUGS = (31, 52, 59)  # far down the list: beyond the subtasks one Workflow call runs


def _path(number: int) -> str:
    return f"pkg/m{number // 10:02d}/f{number:03d}.py"


def _content(number: int) -> str:
    body = f"    return x / 0  # {MARKER}\n" if number in BUGS else "    return x + 1\n"
    return f"def f{number}(x: int) -> float:\n{body}"


@pytest.fixture(scope="module")
def big_change(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose branch `feature` adds 60 small files (built once, copied)."""
    repo = tmp_path_factory.mktemp("big") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"README.md": "# demo\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial commit")
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {_path(n): _content(n) for n in range(CHANGED)})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add many files")
    return repo


def _clone(source: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", str(source), str(repo))
    git(repo, "branch", "-q", "main", "origin/main")
    return repo


def _sha(repo: Path, ref: str) -> str:
    return git(repo, "rev-parse", ref).strip()


def _capped(api_env: dict[str, str]) -> dict[str, str]:
    return {**api_env, "ORCH_REVIEW_MAX_SUBTASKS": str(CAP)}


def test_every_file_of_a_large_change_is_covered_and_every_bug_reported(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], big_change: Path, tmp_path: Path
) -> None:
    repo = _clone(big_change, tmp_path)
    model = OneSubtaskPerFile(base=_sha(repo, "main"))
    fake_api.policy = model
    out = tmp_path / "report.json"

    result = run_cli(repo, _capped(api_env), "--base", "main", "--json", str(out), timeout=900)

    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"{CHANGED} of {CHANGED} changed files covered." in result.stdout
    data = json.loads(out.read_text())
    confirmed = sorted(f["path"] for f in data["findings"] if f["status"] == "confirmed")
    assert confirmed == [_path(n) for n in BUGS]
    assert data["incomplete"] is False
    files = {f["path"]: f for f in data["coverage"]["files"]}
    assert len(files) == CHANGED and all(f["status"] == "covered" for f in files.values())
    # The model's first CAP per-file concerns, packed into as many agents as run at once
    # (they are small), then the sweep: a few large concerns, not 40 small.
    per_file = [t for t in model.subagent_tasks if not is_sweep(t)]
    sweeps = [t for t in model.subagent_tasks if is_sweep(t)]
    assert sum(subtask_text(t).count("Review `") for t in per_file) == CAP
    assert len(per_file) == 10 and all("Packed review of 2 small" in t for t in per_file)
    assert 1 <= len(sweeps) <= 12
    assert files[_path(59)]["concerns"]  # covered by a sweep concern
    swept_ids = {c["index"] for c in data["concerns"] if "Sweep review" in c["concern"]}
    assert set(files[_path(59)]["concerns"]) <= swept_ids


def test_a_cap_that_cannot_cover_the_change_exits_3_naming_the_uncovered_files(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], big_change: Path, tmp_path: Path
) -> None:
    repo = _clone(big_change, tmp_path)
    fake_api.policy = OneSubtaskPerFile(base=_sha(repo, "main"))
    out = tmp_path / "report.json"

    # One agent of the fan-out: whichever packed six subtasks get it (60 small ones in as many
    # agents as run at once), no room is left for the sweep. (With a few more agents, the
    # sweep may fit beside the subtasks that started, and cover all.)
    result = run_cli(
        repo, api_env, "--base", "main", "--max-agents", "1", "--json", str(out), timeout=600
    )

    assert result.returncode == 3, result.stderr[-3000:]
    data = json.loads(out.read_text())
    uncovered = [f for f in data["coverage"]["files"] if f["status"] == "uncovered"]
    assert len(uncovered) >= CHANGED - 6
    assert data["coverage"]["changed_files"]["complete"] is False
    assert all("agent" in f["reason"] for f in uncovered)
    # One line per reason they share, with the count and the first few paths.
    grouped = [ln for ln in result.stdout.splitlines() if ln.startswith("NOT COVERED ")]
    counts = [re.match(r"NOT COVERED (\d+) files — ", ln) for ln in grouped]
    assert sum(int(m.group(1)) if m else 1 for m in counts) == len(uncovered)
    assert len(grouped) < 20 and any("--verbose lists all" in ln for ln in grouped)
    assert any(uncovered[0]["path"] in ln for ln in grouped)
    assert f"of {CHANGED} changed files not covered" in result.stdout


def test_a_docs_only_change_without_a_workflow_is_swept_not_a_false_red(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"README.md": "# demo\n", "app.py": "print('hi')\n"})
    git(repo, "checkout", "-q", "-b", "docs")
    write(repo, {"docs/guide.md": "# Guide\n\nRun it.\n", "README.md": "# demo\n\nSee docs.\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs")
    model = OneSubtaskPerFile(
        base=_sha(repo, "main"), workflow=False, summary="Docs only; nothing to fan out."
    )
    fake_api.policy = model

    result = run_cli(repo, api_env, "--base", "main")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 of 2 changed files covered." in result.stdout
    assert "INCOMPLETE" not in result.stdout
    assert [t for t in model.subagent_tasks if is_sweep(t)], "the engine swept the docs"

    # The same docs change with a real problem in it: findings decide (1), never 3.
    write(repo, {"docs/guide.md": f"# Guide\n\nRun it as root. {MARKER}\n"})
    git(repo, "commit", "-q", "-am", "docs again")
    fake_api.reset()
    fake_api.policy = OneSubtaskPerFile(base=_sha(repo, "main"), workflow=False)
    again = run_cli(repo, api_env, "--base", "main")
    assert again.returncode == 1, again.stdout + again.stderr
    assert "docs/guide.md:3" in again.stdout


def test_subtasks_about_files_outside_the_change_are_refused_with_the_reason(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo({"app.py": "x = 1\n", "old.py": "y = 2\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {"app.py": "x = 3\n"})
    git(repo, "commit", "-q", "-am", "change app.py")

    model = OneSubtaskPerFile(
        base=_sha(repo, "main"), extra_subtasks=["Review `old.py` for defects."]
    )
    fake_api.policy = model
    out = tmp_path / "r.json"

    result = run_cli(repo, api_env, "--base", "main", "--json", str(out))

    assert result.returncode == 0, result.stdout + result.stderr
    assert not any("old.py" in t for t in model.subagent_tasks)  # nothing paid for it
    (workflow_result,) = fake_api.requests_for("main")[-1].model_request().tool_results()
    assert "Review `old.py` for defects." in workflow_result[1]
    assert "refused: it names no file of the change" in workflow_result[1]
    warnings = json.loads(out.read_text())["warnings"]
    assert any("1 subtask of the main agent was refused" in w for w in warnings)


def test_shards_cover_the_change_once_and_merge_into_one_report(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], big_change: Path, tmp_path: Path
) -> None:
    import jsonschema

    repo = _clone(big_change, tmp_path)
    reports = []
    for shard in ("1/2", "2/2"):
        fake_api.reset()
        model = OneSubtaskPerFile(base=_sha(repo, "main"))
        fake_api.policy = model
        out = tmp_path / f"shard-{shard[0]}.json"
        argv = ("--base", "main", "--shard", shard, "--json", str(out))
        result = run_cli(repo, _capped(api_env), *argv)
        assert result.returncode == 1, result.stderr[-3000:]
        data = json.loads(out.read_text())
        assert data["shard"] == shard
        reports.append(data)
    halves = [{f["path"] for f in r["coverage"]["files"]} for r in reports]
    assert not halves[0] & halves[1] and len(halves[0] | halves[1]) == CHANGED
    assert abs(len(halves[0]) - len(halves[1])) <= 1  # balanced: the files are alike
    merged_json, sarif = tmp_path / "merged.json", tmp_path / "merged.sarif"
    shard_files = [str(tmp_path / "shard-1.json"), str(tmp_path / "shard-2.json")]

    merged = run_cli(
        repo, api_env, "merge", *shard_files, "--json", str(merged_json), "--sarif", str(sarif)
    )

    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert f"{CHANGED} of {CHANGED} changed files covered." in merged.stdout
    data = json.loads(merged_json.read_text())
    confirmed = [f["path"] for f in data["findings"] if f["status"] == "confirmed"]
    assert sorted(confirmed) == [_path(n) for n in BUGS]  # each bug once
    assert data["incomplete"] is False
    ids = [c["index"] for c in data["concerns"]]
    assert ids == list(range(1, len(ids) + 1))  # renumbered across shards
    sarif_schema = json.loads(
        (Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text()
    )
    jsonschema.validate(json.loads(sarif.read_text()), sarif_schema)
    github = run_cli(repo, api_env, "merge", *shard_files, "--format", "github")
    assert github.stdout.count("::error file=") == len(BUGS)

    # The second shard's job failed before writing its report: incomplete, exit 3.
    missing = run_cli(repo, api_env, "merge", shard_files[0], str(tmp_path / "absent.json"))
    assert missing.returncode == 3, missing.stdout + missing.stderr
    assert "shard 2/2 produced no report" in missing.stdout
    assert "absent.json" in missing.stdout
