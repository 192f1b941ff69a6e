"""The GitLab CI/CD component and the example pipelines: valid against GitLab's CI schema
(the SchemaStore copy check-jsonschema ships, offline), and nothing from the merge
request's checkout runs while orch-review is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
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
    assert {"model", "fail-on", "max-cost-usd", "token-variable", "sandbox"} <= set(spec)
    used = set(re.findall(r"\$\[\[ inputs\.([\w-]+) \]\]", job))
    assert used == set(spec)  # every input is used, and only declared ones


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
