"""A change with nothing to review still writes its report files, valid and empty: the CI
step that reads them does not fail on a missing file."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from orch_review.reporters.json_report import schema
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script

SARIF_SCHEMA = Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json"


@pytest.mark.parametrize("scope", [(), ("--staged",), ("--base", "main")])
def test_an_empty_change_writes_valid_empty_reports(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory,
    tmp_path: Path, scope: tuple[str, ...],
) -> None:  # fmt: skip
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    json_path, sarif_path = tmp_path / "ci" / "out.json", tmp_path / "ci" / "out.sarif"

    result = run_cli(repo, api_env, *scope, "--json", str(json_path), "--sarif", str(sarif_path))

    assert result.returncode == 0, result.stderr
    assert "nothing to review" in result.stderr
    report = json.loads(json_path.read_text())
    jsonschema.validate(report, schema())
    assert report["findings"] == [] and report["incomplete"] is False
    sarif = json.loads(sarif_path.read_text())
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()))
    assert sarif["runs"][0]["results"] == []
    assert fake_api.message_requests == []


def test_an_empty_change_prints_an_empty_json_report_on_stdout(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)

    result = run_cli(repo, api_env, "--json", "-")

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["findings"] == []
