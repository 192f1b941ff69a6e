"""The GitLab CI/CD component and the example pipelines: valid against GitLab's CI schema
(the SchemaStore copy check-jsonschema ships, offline), and nothing from the merge
request's checkout runs while orch-review is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
COMPONENT = ROOT / "templates" / "review.yml"
pytestmark = pytest.mark.slow  # check-jsonschema runs as a subprocess
EXAMPLES = [ROOT / "examples" / "gitlab-ci.yml", ROOT / "examples" / "gitlab-ci-sharded.yml"]


def _check(path: Path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert tool is not None, "check-jsonschema is in the `test` extra"
    return subprocess.run(
        [tool, "--builtin-schema", "vendor.gitlab-ci", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_examples_match_gitlabs_ci_schema(path: Path) -> None:
    result = _check(path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_both_documents_of_the_component_match_gitlabs_ci_schema(tmp_path: Path) -> None:
    header, job = COMPONENT.read_text(encoding="utf-8").split("\n---\n", 1)
    for name, text in (("spec.yml", header + "\n"), ("job.yml", job)):
        part = tmp_path / name
        part.write_text(text, encoding="utf-8")
        result = _check(part)
        assert result.returncode == 0, result.stdout + result.stderr
    spec = yaml.safe_load(header)["spec"]["inputs"]
    assert {"model", "fail-on", "max-cost-usd", "token-variable", "sandbox", "prove"} <= set(spec)
    used = set(re.findall(r"\$\[\[ inputs\.([\w-]+) \]\]", job))
    assert used == set(spec)  # every input is used, and only declared ones


@pytest.mark.parametrize(("value", "prove"), [("", None), ("high", "high"), ("all", "all")])
def test_the_prove_input_reaches_the_reviews_configuration(
    value: str, prove: str | None, tmp_path: Path
) -> None:
    from orch_review.config.settings import load_config

    header, job = COMPONENT.read_text(encoding="utf-8").split("\n---\n", 1)
    spec = yaml.safe_load(header)["spec"]["inputs"]
    assert spec["prove"]["default"] == ""
    # GitLab puts the input's text where it is used; the job's variable is then the setting.
    variables = yaml.safe_load(job.replace("$[[ inputs.prove ]]", value))["orch-review"][
        "variables"
    ]
    env = {k: str(v) for k, v in variables.items() if k.startswith("ORCH_REVIEW_")}
    assert env["ORCH_REVIEW_PROVE"] == value
    # An empty input is no setting: the configuration's value, else the default, applies.
    assert load_config(tmp_path, {"ORCH_REVIEW_PROVE": value}, {}).prove == prove


@pytest.mark.parametrize("path", [COMPONENT, *EXAMPLES], ids=lambda p: p.name)
def test_python_and_pip_start_isolated_away_from_the_checkout(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    runs = [line for line in text.splitlines() if re.search(r"\bpython3?\b|\bpip\b", line)]
    # Commands, not comments or the image's name.
    runs = [line for line in runs if not re.match(r"\s*(#|image:|default:)", line)]
    assert runs
    for line in runs:
        assert re.search(r"python3? -I ", line) or "/bin/python -I " in line, line
    assert "cd /tmp && python3 -I -m venv" in text


# -- what the component installs, and the widget's baseline --------------------------------------

SHA = "0123456789abcdef0123456789abcdef01234567"
_INPUT = re.compile(r"\$\[\[ (inputs|component)\.([\w-]+) \]\]")


def _interpolated(inputs: dict[str, object]) -> dict[str, Any]:
    """The component's job document as GitLab makes it: inputs (defaults where not given)
    and the component context (``component.sha``) put in."""
    header, job = COMPONENT.read_text(encoding="utf-8").split("\n---\n", 1)
    spec = yaml.safe_load(header)["spec"]
    values = {
        name: inputs.get(name, field.get("default")) for name, field in spec["inputs"].items()
    }

    def one(match: re.Match[str]) -> str:
        kind, name = match.groups()
        if kind == "component":
            assert name in spec.get("component", []), f"component.{name} is not declared"
            return SHA
        value = values[name]
        return str(value).lower() if isinstance(value, bool) else str(value)

    data: dict[str, Any] = yaml.safe_load(_INPUT.sub(one, job))
    return data


def _evaluate(expression: str, variables: dict[str, str]) -> bool:
    """A ``rules:if`` of ``==``, ``!=`` and ``&&`` over variables and strings, as GitLab
    evaluates it (an undefined variable is null; either side may be the string)."""

    def operand(text: str) -> str | None:
        text = text.strip()
        if text.startswith("$"):
            return variables.get(text[1:])
        assert text.startswith('"') and text.endswith('"'), text
        return text[1:-1]

    results = []
    for clause in expression.split("&&"):
        match = re.fullmatch(r"\s*(.+?)\s*(==|!=)\s*(.+?)\s*", clause)
        assert match is not None, clause
        left, op, right = operand(match.group(1)), match.group(2), operand(match.group(3))
        results.append((left == right) if op == "==" else (left != right))
    return all(results)


def _runs(job: dict[str, Any], variables: dict[str, str]) -> bool:
    return any(_evaluate(rule["if"], variables) for rule in job["rules"])


MERGE_REQUEST = {"CI_PIPELINE_SOURCE": "merge_request_event", "CI_DEFAULT_BRANCH": "main"}
DEFAULT_PUSH = {
    "CI_PIPELINE_SOURCE": "push",
    "CI_COMMIT_BRANCH": "main",
    "CI_DEFAULT_BRANCH": "main",
}
OTHER_PUSH = {**DEFAULT_PUSH, "CI_COMMIT_BRANCH": "feature"}


def test_the_component_installs_its_own_commit_with_its_constraints() -> None:
    header = COMPONENT.read_text(encoding="utf-8").split("\n---\n", 1)[0]
    assert "version" not in yaml.safe_load(header)["spec"]["inputs"]  # nothing to drift
    job = _interpolated({})["orch-review"]
    assert job["variables"]["OR_COMPONENT_SHA"] == SHA
    steps = "\n".join(job["before_script"])
    assert (
        'fetch -q --depth 1 https://github.com/orch-review/orch-review "$OR_COMPONENT_SHA"' in steps
    )
    assert (
        "pip install --quiet --constraint /tmp/orch-review-src/constraints.txt "
        "/tmp/orch-review-src" in steps
    )


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_examples_install_with_the_constraints_of_the_release(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "git+https://" not in text  # a bare install takes whatever was released today
    assert '"refs/tags/$ORCH_REVIEW_VERSION"' in text
    assert (
        "pip install --quiet --constraint /tmp/orch-review-src/constraints.txt "
        "/tmp/orch-review-src" in text
    )


def test_the_baseline_report_comes_from_default_branch_pipelines_only_when_asked() -> None:
    off, on = _interpolated({}), _interpolated({"baseline": True})

    assert _runs(on["orch-review"], MERGE_REQUEST)
    assert not _runs(on["orch-review-baseline"], MERGE_REQUEST)
    assert _runs(on["orch-review-baseline"], DEFAULT_PUSH)
    assert not _runs(on["orch-review"], DEFAULT_PUSH)
    assert not _runs(on["orch-review-baseline"], OTHER_PUSH)
    assert not any(_runs(off["orch-review-baseline"], v) for v in (DEFAULT_PUSH, MERGE_REQUEST))
    baseline = on["orch-review-baseline"]
    assert baseline["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert baseline["script"] == ['echo "[]" > gl-code-quality-report.json']
    assert baseline["variables"]["GIT_STRATEGY"] == "none"  # the checkout is not even made


def test_the_example_uploads_the_baseline_from_the_default_branch() -> None:
    jobs = yaml.safe_load(EXAMPLES[0].read_text(encoding="utf-8"))
    assert _runs(jobs["orch-review-baseline"], DEFAULT_PUSH)
    assert not _runs(jobs["orch-review-baseline"], MERGE_REQUEST)
    assert not _runs(jobs["orch-review"], DEFAULT_PUSH)
