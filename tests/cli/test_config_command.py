"""Configuration you can see: ``orch-review config`` shows each effective setting and where
it came from, ``--config FILE`` chooses the file, and what is ignored is said out loud."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script

pytestmark = pytest.mark.slow


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCH_"))}
    return {**env, **extra}


def _settings(repo: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    result = run_cli(repo, env, "config", "--json", *args)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_config_shows_each_setting_its_value_and_which_source_won(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo(
        {
            ".orch-review.toml": 'effort = "high"\nmax-agents = 7\nmodel = "from-file"\n',
            "app.py": "x = 1\n",
        }
    )
    env = _env(ORCH_REVIEW_MAX_AGENTS="9", ORCH_REVIEW_MODEL="from-env")

    data = _settings(repo, env, "--model", "from-flag")

    settings = data["settings"]
    assert data["file"] == ".orch-review.toml"
    assert settings["effort"] == {"value": "high", "origin": ".orch-review.toml"}
    assert settings["max-agents"] == {
        "value": 9,
        "origin": "environment variable ORCH_REVIEW_MAX_AGENTS",
    }
    assert settings["model"] == {"value": "from-flag", "origin": "--model"}
    assert settings["fail-on"] == {"value": "high", "origin": "default"}

    text = run_cli(repo, env, "config")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "# configuration file: .orch-review.toml"
    effort = next(ln for ln in lines if "effort =" in ln)
    assert effort.split() == [".orch-review.toml", "effort", "=", '"high"']
    assert any(ln.split()[:3] == ["default", "fail-on", "="] for ln in lines)


def test_config_file_flag_replaces_the_repository_file_for_review_plan_and_config(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    (repo / ".orch-review.toml").write_text('exclude = ["calc.py"]\n')
    mine = tmp_path / "mine.toml"
    mine.write_text('exclude = ["app.py"]\nmax-agents = 40\n')
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.orch-review]\nexclude = ["README.md"]\n')

    shown = _settings(repo, _env(), "--config", str(mine))
    assert shown["settings"]["exclude"] == {"value": ["app.py"], "origin": str(mine)}
    planned = run_cli(repo, _env(), "plan", "--all", "--config", str(mine), "--json")
    plan = json.loads(planned.stdout)
    assert "app.py" not in [f["path"] for f in plan["files"]]
    assert "calc.py" in [f["path"] for f in plan["files"]]
    from_pyproject = _settings(repo, _env(), "--config", str(pyproject))
    assert from_pyproject["settings"]["exclude"]["value"] == ["README.md"]

    fake_api.policy = planted_script()
    result = run_cli(repo, api_env, "--all", "--config", str(mine), "--json", "-", "-q")
    assert result.returncode == 0, result.stderr  # app.py, the planted injection, excluded
    report = json.loads(result.stdout)
    assert not [f for f in report["findings"] if f["path"] == "app.py"]

    missing = run_cli(repo, _env(), "plan", "--all", "--config", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert fake_api.requests  # the review above made requests; the refusals none


def test_a_nested_pyproject_table_is_not_ignored_in_silence(git_repo: GitRepoFactory) -> None:
    repo = git_repo(
        {
            "app.py": "x = 1\n",
            "services/api/pyproject.toml": '[tool.orch-review]\nmodle = "x"\nfail-on = "low"\n',
            "services/web/pyproject.toml": '[project]\nname = "web"\n',  # no table: quiet
        }
    )

    result = run_cli(repo, _env(), "plan", "--all")

    assert result.returncode == 0, result.stderr
    warnings = [ln for ln in result.stderr.splitlines() if "warning" in ln]
    text = " ".join(result.stderr.split())
    assert "`services/api/pyproject.toml` [tool.orch-review] is ignored" in text
    assert "--config services/api/pyproject.toml" in text
    assert "unknown key `modle` (did you mean `model`?)" in text
    assert "services/web" not in result.stderr
    assert len(warnings) == 1
    shown = run_cli(repo, _env(), "config")
    assert "`services/api/pyproject.toml` [tool.orch-review] is ignored" in " ".join(
        shown.stderr.split()
    )


def test_a_table_that_loses_to_the_dedicated_file_is_named(git_repo: GitRepoFactory) -> None:
    repo = git_repo(
        {
            "app.py": "x = 1\n",
            ".orch-review.toml": 'effort = "high"\n',
            "pyproject.toml": '[tool.orch-review]\neffort = "low"\n',
        }
    )

    result = run_cli(repo, _env(), "config")

    assert result.returncode == 0
    text = " ".join(result.stderr.split())
    assert "pyproject.toml has a [tool.orch-review] table, which is ignored" in text


def test_a_misspelled_variable_is_named_with_the_closest_setting(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "new.py").write_text("x = 1\n")
    env = {**api_env, "ORCH_REVIEW_MAX_COST": "1", "ORCH_REVIEW_CACHE_DIR": str(repo.parent)}

    result = run_cli(repo, env, "plan")

    assert result.returncode == 0, result.stderr
    text = " ".join(result.stderr.split())
    assert (
        "environment variable ORCH_REVIEW_MAX_COST is not a setting and is ignored "
        "(did you mean ORCH_REVIEW_MAX_COST_USD?)" in text
    )
    assert "ORCH_REVIEW_CACHE_DIR" not in text  # read elsewhere: not a typo
    assert fake_api.requests == []
