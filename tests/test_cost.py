"""``plan``'s cost estimate: a range per role, from the calibration it names."""

from __future__ import annotations

import pytest

from orch_review.cost import CALIBRATION
from tests.conftest import GitRepoFactory
from tests.engine.test_plan import _env, plan_json
from tests.helpers import run_cli

pytestmark = pytest.mark.slow


def _files(count: int, lines: int = 2) -> dict[str, str]:
    return {f"pkg/f{n}.py": "".join(f"x{i} = {i}\n" for i in range(lines)) for n in range(count)}


def test_the_estimate_is_a_range_per_role_with_its_calibration(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"README.md": "# r\n", **_files(30)})

    # The default `prove`, which the session's environment pins off for other tests.
    default = {k: v for k, v in _env().items() if k != "ORCH_REVIEW_PROVE"}
    cost = plan_json(repo, "--all", env=default)["cost"]

    assert 0 < cost["low_usd"] < cost["high_usd"]
    assert cost["files"] == 31
    roles = {r["role"]: r for r in cost["roles"]}
    # --all runs the critic; Python files get provers, none at the low end (no high finding).
    assert set(roles) == {"main", "subagents", "verifiers", "critic", "provers"}
    assert roles["provers"]["agents"] == [0, roles["verifiers"]["agents"][1]]
    assert roles["provers"]["low_usd"] == 0 < roles["provers"]["high_usd"]
    unproven = plan_json(repo, "--all", env={**_env(), "ORCH_REVIEW_PROVE": "off"})["cost"]
    assert "provers" not in {r["role"] for r in unproven["roles"]}
    assert unproven["high_usd"] < cost["high_usd"]
    assert roles["main"]["agents"] == [1, 1]
    # High: a subtask per file, the 31 small ones packed into the 10 agents that run at once
    # (four to an agent); without packing, one agent each.
    assert roles["subagents"]["agents"][0] < roles["subagents"]["agents"][1] == 8
    unpacked = plan_json(repo, "--all", env={**_env(), "ORCH_REVIEW_PACK_SUBTASKS": "false"})
    by_role = {r["role"]: r for r in unpacked["cost"]["roles"]}
    assert by_role["subagents"]["agents"][1] == 31
    assert unpacked["cost"]["high_usd"] > cost["high_usd"]
    assert all(r["model"] == "claude-opus-5-5" and r["effort"] == "xhigh" for r in roles.values())
    assert sum(r["low_usd"] for r in roles.values()) == pytest.approx(cost["low_usd"], abs=1e-5)
    calibration = cost["calibration"]
    assert (calibration["source"], calibration["date"]) == (CALIBRATION.source, CALIBRATION.date)
    # What it rests on, and that the high end is the figure to budget for, in words.
    said = f"calibrated on {CALIBRATION.basis}; budget for the high end"
    assert cost["calibrated_on"] == calibration["calibrated_on"] == said
    assert calibration["input_tokens"][0].startswith(f"main {CALIBRATION.main_sweep.base:,} + ")


def test_more_files_cheaper_models_and_less_effort_move_the_estimate(
    git_repo: GitRepoFactory,
) -> None:
    small = git_repo({"README.md": "# r\n", **_files(5)})
    large = git_repo({"README.md": "# r\n", **_files(50, lines=40)})
    base = plan_json(small, "--all")["cost"]

    bigger = plan_json(large, "--all")["cost"]
    cheaper = plan_json(
        small,
        "--all",
        env=_env(ORCH_REVIEW_SUBAGENT_MODEL="claude-haiku-4-5", ORCH_REVIEW_EFFORT="low"),
    )["cost"]

    assert bigger["low_usd"] > base["low_usd"] and bigger["high_usd"] > base["high_usd"]
    assert cheaper["high_usd"] < base["high_usd"]
    subagents = next(r for r in cheaper["roles"] if r["role"] == "subagents")
    assert subagents["model"] == "claude-haiku-4-5" and subagents["effort"] == "low"


def test_the_plan_for_people_prints_the_range_and_what_it_rests_on(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo({"README.md": "# r\n", **_files(3)})

    result = run_cli(repo, _env(ORCH_REVIEW_MODEL="my-own-model"), "plan", "--all")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("estimated cost: $") and "4 files" in line for line in lines)
    assert any(
        line.strip().startswith("main") and "my-own-model (effort xhigh)" in line for line in lines
    )
    assert any("no price for my-own-model" in line for line in lines)
    shown = " ".join(line.strip() for line in lines)
    assert f"input tokens per agent, from {CALIBRATION.source} on {CALIBRATION.date}:" in shown
    assert f"calibrated on {CALIBRATION.basis}; budget for the high end" in shown
