"""`--mutate N`: valid mutants of the repository's own code, reviewed, scored per pattern."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from orch_review.errors import ExitCode
from orch_review.eval.cases import load_cases
from orch_review.eval.catalog import CATALOG
from orch_review.eval.mutate import plant, valid_sites
from tests.conftest import GitRepoFactory, git
from tests.eval.scripted import MUTABLE_LIB, MUTANT_REVIEWER, EvalPolicy
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli


def test_every_pattern_finds_a_site_whose_mutant_parses_and_differs() -> None:
    sites = valid_sites("lib.py", MUTABLE_LIB)

    assert {s.pattern.name for s in sites} == {p.name for p in CATALOG}
    original = ast.dump(ast.parse(MUTABLE_LIB))
    for site in sites:
        lines = MUTABLE_LIB.splitlines()
        mutated = "\n".join([*lines[: site.edit.start], *site.edit.lines, *lines[site.edit.end :]])
        assert ast.dump(ast.parse(mutated)) != original, site


def test_a_file_that_does_not_parse_offers_no_site() -> None:
    assert valid_sites("bad.py", "def f(:\n    if x < 1:\n        pass\n") == []


def test_mutants_are_commits_of_one_file_deterministic_by_seed(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"lib.py": MUTABLE_LIB, "README.md": "# lib\n"})
    status_before = git(repo, "status", "--porcelain")
    refs_before = git(repo, "for-each-ref")

    cases = plant(repo, 10, seed=1)

    assert len(cases) == 10 and len({c.head for c in cases}) == 10
    assert plant(repo, 10, seed=1) == cases
    assert [c.head for c in plant(repo, 10, seed=2)] != [c.head for c in cases]
    for case in cases:
        assert git(repo, "diff", "--name-only", case.base, case.head).split() == ["lib.py"]
        ast.parse(git(repo, "show", f"{case.head}:lib.py"))
        (issue,) = case.expected
        assert issue.path == "lib.py" and issue.start_line is not None
        pattern = next(p for p in CATALOG if p.name == case.pattern)
        assert issue.description.startswith(pattern.description)
        assert issue.severity == pattern.severity
    assert {c.pattern for c in cases} == {p.name for p in CATALOG}  # round-robin: all 8
    assert git(repo, "status", "--porcelain") == status_before
    assert git(repo, "for-each-ref") == refs_before


def test_mutate_reviews_each_mutant_and_reports_per_pattern(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = git_repo({"lib.py": MUTABLE_LIB})
    fake_api.policy = EvalPolicy(MUTANT_REVIEWER)
    out, written = tmp_path / "mutants.json", tmp_path / "mutants.jsonl"
    env = {**api_env, "ORCH_REVIEW_CACHE_DIR": str(tmp_path / "cache")}

    result = run_cli(
        repo,
        env,
        "eval",
        "--mutate",
        "10",
        "--seed",
        "1",
        "--json",
        str(out),
        "--write-cases",
        str(written),
        timeout=600,
    )

    assert result.returncode == ExitCode.CLEAN, result.stderr
    summary = json.loads(out.read_text(encoding="utf-8"))
    cases = load_cases(written)
    planted = {p: sum(c.pattern == p for c in cases) for p in {c.pattern for c in cases}}
    by_pattern = summary["by_pattern"]
    assert {p: v["planted"] for p, v in by_pattern.items()} == planted
    assert by_pattern["inverted-condition"]["catch_rate"] == 1.0
    assert by_pattern["leaked-file-handle"]["catch_rate"] == 1.0
    for name in ("off-by-one", "dropped-await", "swapped-arguments", "wrong-loop-variable"):
        assert by_pattern[name]["caught"] == 0, name
    caught = planted["inverted-condition"] + planted["leaked-file-handle"]
    assert summary["overall"]["recall"] == round(caught / 10, 4)
    assert summary["overall"]["precision"] == 1.0
    assert summary["overall"]["scored"] == 10
    assert "| inverted-condition |" in result.stdout
    assert "| defect pattern | changes | caught |" in result.stdout
