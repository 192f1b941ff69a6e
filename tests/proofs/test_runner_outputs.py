"""What counts as a test failure for vitest, jest and go, read from what real runs printed
(recorded by tests/proofs/data/record_runs.py: vitest 4.1.12, jest 30.5.2, node 20.20.2,
go 1.19.8), whole and cut in the middle as a shell's output cap cuts it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from orch_review.engine.proofs.runners import (
    PROBES,
    Runner,
    json_report_counts,
    missing_module,
    preferred_runners,
    runner_from_probe,
)
from orch_review.findings.proof import ProofRun

RUNS = json.loads((Path(__file__).parent / "data" / "runs.json").read_text())
# (runner, case) -> (a test failure, a pass)
EXPECTED = {
    **{
        (name, case): outcome
        for name in ("vitest", "jest")
        for case, outcome in {
            "fails": (True, False),
            "throws": (True, False),  # an exception in the test fails the test
            "passes": (False, True),
            "syntax": (False, False),  # the file did not load: no test ran
            "import": (False, False),
            "no-tests": (False, False),
        }.items()
    },
    ("go", "fails"): (True, False),
    ("go", "panics"): (True, False),  # the test fails; go says so with a "fail" event
    ("go", "passes"): (False, True),
    ("go", "compile"): (False, False),  # [build failed], exit 2
    ("go", "vet"): (False, False),  # go vet, run by go test, fails the build
    ("go", "import"): (False, False),  # [setup failed], but exit 1
    ("go", "no-tests"): (False, False),  # exit 0, and no test ran
    ("go", "other-package"): (False, False),  # exit 1, no test ran
}


def _cut(output: str, cap: int) -> str:
    """``output`` as a shell's cap keeps it: its start and its end."""
    if len(output) <= cap:
        return output
    return output[: cap // 2] + "\n[... characters omitted ...]\n" + output[-cap // 2 :]


def test_every_recorded_run_is_expected() -> None:
    assert {(r["runner"], r["case"]) for r in RUNS} == set(EXPECTED)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r['runner']}-{r['case']}")
def test_a_recorded_run(run: dict[str, object]) -> None:
    runner = Runner(run["runner"])  # type: ignore[arg-type]
    proof = ProofRun(run["exit_code"], run["output"])  # type: ignore[arg-type]
    failed, passed = EXPECTED[(run["runner"], run["case"])]  # type: ignore[index]
    assert runner.failed_by_a_test(proof) is failed
    assert runner.passed(proof) is passed
    # Cut to a few hundred characters, a run may say less, never more.
    for cap in (3000, 1500, 600):
        cut = ProofRun(proof.exit_code, _cut(proof.output, cap))
        assert runner.failed_by_a_test(cut) <= failed
        assert runner.passed(cut) <= passed


@pytest.mark.parametrize("name", ["vitest", "jest"])
def test_the_counts_survive_a_cut_that_keeps_the_reports_start(name: str) -> None:
    run = next(r for r in RUNS if r["runner"] == name and r["case"] == "fails")
    output = str(run["output"])
    start = output.index('{"num')
    cut = output[: start + 400] + "\n[... characters omitted ...]\n" + output[-100:]
    assert json_report_counts(cut)["numFailedTests"] == 1
    assert Runner(name).failed_by_a_test(ProofRun(1, cut))


def test_jests_summary_tells_when_its_report_was_cut_away() -> None:
    for case, failed in (("fails", True), ("import", False)):
        run = next(r for r in RUNS if r["runner"] == "jest" and r["case"] == case)
        output = str(run["output"])
        human = output[: output.index('{"num')]
        assert Runner("jest").failed_by_a_test(ProofRun(1, human + "[... omitted ...]")) is failed


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("vitest", "not-installed-anywhere"),
        ("jest", "not-installed-anywhere"),
        ("go", "github.com/stretchr/testify/assert"),
    ],
)
def test_a_missing_dependency_is_named(name: str, module: str) -> None:
    run = next(r for r in RUNS if r["runner"] == name and r["case"] == "import")
    assert missing_module(str(run["output"])) == module


def test_go_runs_only_the_tests_of_the_new_file_from_its_directory() -> None:
    code = (
        'package shop\n\nimport "testing"\n\nfunc TestB(t *testing.T) {}\n\n'
        "func TestA(t *testing.T) {}\n\nfunc helper(t *testing.T) {}\n"
    )
    go = Runner("go")
    assert go.command("pkg/shop/x_test.go", code) == (
        "cd pkg/shop && go test -json -count=1 -run '^(TestA|TestB)$' ."
    )
    assert go.command("x_test.go", "package shop\n") == "go test -json -count=1 ."
    assert "GOPROXY=off" in go.environment and 'GOCACHE="$HOME' in go.environment


def test_the_json_runners_run_the_one_file_the_prover_wrote() -> None:
    assert Runner("jest").command("src/a b.test.js").endswith("--runTestsByPath 'src/a b.test.js'")
    assert Runner("vitest").command("a.test.ts") == (
        "node_modules/.bin/vitest run --reporter=json a.test.ts"
    )


def _probe(directory: Path, language: str, path: str) -> str:
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", PROBES[language]],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": path, "HOME": str(directory)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_the_probes_name_what_the_shell_finds(tmp_path: Path) -> None:
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    for name in ("jest", "vitest"):
        (bin_dir / name).write_text("#!/bin/sh\necho 1.0.0\n")
        (bin_dir / name).chmod(0o755)
    tools = tmp_path / "tools"
    tools.mkdir()
    for program in ("node", "go"):
        (tools / program).write_text("#!/bin/sh\nexit 0\n")
        (tools / program).chmod(0o755)
    path = f"{tools}:/usr/bin:/bin"

    said = _probe(tmp_path, "javascript", path).split()
    assert said == ["vitest", "jest", "node"]
    assert _probe(tmp_path, "typescript", path).split() == ["vitest", "jest"]
    assert _probe(tmp_path, "go", path).split() == ["go"]
    assert _probe(tmp_path / "tools", "typescript", path).split() == []
    assert runner_from_probe("\n".join(said)) == Runner("vitest")
    assert runner_from_probe("\n".join(said), ("jest",)) == Runner("jest")
    assert runner_from_probe("none\n") is None


@pytest.mark.parametrize(
    ("package", "preferred"),
    [
        (b'{"devDependencies": {"jest": "^30"}}', ("jest",)),
        (
            b'{"dependencies": {"vitest": "4"}, "devDependencies": {"jest": "1"}}',
            ("vitest", "jest"),
        ),
        (b"not json", ()),
        (None, ()),
    ],
)
def test_the_package_json_says_which_runner_the_project_uses(
    package: bytes | None, preferred: tuple[str, ...]
) -> None:
    assert preferred_runners(package) == preferred
