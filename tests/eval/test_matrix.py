"""`--matrix`: the same cases under every combination of settings, one row each."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from orch_review.errors import ConfigError, ExitCode, UsageError
from orch_review.eval.matrix import combinations, parse_axis
from tests.conftest import GitRepoFactory
from tests.eval.scripted import INJECTION, SHELL, EvalPolicy, two_case_repo, two_cases, write_cases
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.scripted import ReviewScript, refute


def test_axes_become_every_combination_in_order() -> None:
    axes = [
        parse_axis("model=a,b"),
        parse_axis("effort=high,xhigh"),
        parse_axis("verifiers=on,off"),
    ]

    combos = combinations(axes)

    assert len(combos) == 8
    assert combos[0] == (
        "model=a effort=high verifiers=on",
        {"model": "a", "effort": "high", "verify": True},
    )
    assert combos[-1][1] == {"model": "b", "effort": "xhigh", "verify": False}


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("effort", UsageError, "write SETTING=VALUE,VALUE"),
        ("effort=", UsageError, "write SETTING=VALUE,VALUE"),
        ("effort=high,high", UsageError, "listed twice"),
        ("effort=extreme", ConfigError, "`effort` must be one of"),
        ("colour=red", ConfigError, "unknown setting `colour`"),
        ("verifiers=maybe", ConfigError, "`verify` must be true or false"),
    ],
)
def test_bad_axes_are_refused(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_axis(text)


def test_the_matrix_prints_one_row_per_combination_and_shows_what_verification_buys(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = two_case_repo(git_repo)
    cases = write_cases(tmp_path / "cases.jsonl", two_cases(str(repo)))
    # The verifiers refute the decoy: with them on, the clean change stays clean.
    fake_api.policy = EvalPolicy(ReviewScript([INJECTION, replace(SHELL, verdict=refute)]))
    out = tmp_path / "matrix.json"
    env = {**api_env, "ORCH_REVIEW_CACHE_DIR": str(tmp_path / "cache")}

    result = run_cli(
        tmp_path,
        env,
        "eval",
        str(cases),
        "--matrix",
        "verifiers=on,off",
        "effort=high",
        "--json",
        str(out),
        timeout=600,
    )

    assert result.returncode == ExitCode.CLEAN, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| verifiers=")]
    assert [row.split(" | ")[0] for row in rows] == [
        "| verifiers=on effort=high",
        "| verifiers=off effort=high",
    ]
    runs = {r["settings"]: r["overall"] for r in json.loads(out.read_text("utf-8"))["matrix"]}
    on, off = runs["verifiers=on effort=high"], runs["verifiers=off effort=high"]
    assert (on["precision"], on["false_positives_per_clean_change"]) == (1.0, 0.0)
    assert (off["precision"], off["false_positives_per_clean_change"]) == (0.5, 1.0)
    assert on["recall"] == off["recall"] == 0.5
    assert on["cost_usd"] > off["cost_usd"] > 0  # each arm paid for its own agents
    efforts = {r.body["output_config"]["effort"] for r in fake_api.message_requests}
    assert efforts == {"high"}
