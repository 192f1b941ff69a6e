"""Full reviews against a model that misbehaves on a share of its replies.

Whatever the model does, every review ends, every request is one the API accepts, nothing is
resent byte for byte after a reply (only a refused turn is asked again), and the
result is either the well-behaved run's findings or an honest "incomplete" (exit 3).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.fakes.wire import canonical_json, validate_messages_body
from tests.helpers import make_planted_repo, run_cli
from tests.misbehaving import BEHAVIOURS, MisbehavingModel, draw_key
from tests.scripted import planted_script

pytestmark = pytest.mark.slow

SEEDS = (1, 2, 3, 4, 5, 6, 7)  # together they exercise every behaviour


def _review(repo: Path, env: dict[str, str], out: Path) -> tuple[int, dict[str, Any]]:
    result = run_cli(repo, env, "--all", "--no-journal", "--json", str(out))
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(out.read_text())


def _confirmed(report: dict[str, Any]) -> set[tuple[Any, ...]]:
    keys = ("path", "start_line", "end_line", "severity", "category", "claim")
    return {tuple(f[k] for k in keys) for f in report["findings"] if f["status"] == "confirmed"}


def _lost(report: dict[str, Any]) -> bool:
    return not report["concerns"] or any(not c["covered"] for c in report["concerns"])


def _check_requests(api: FakeMessagesAPI, model: MisbehavingModel) -> None:
    """Every request is valid, none repeats the one before it in its conversation unless
    that one was refused (the refused turn is asked again), and none whose reply was cut
    off at max_tokens is ever sent again."""
    seen: dict[str, int] = {}
    previous: dict[tuple[str, str], str] = {}
    for recorded in api.message_requests:
        assert validate_messages_body(recorded.body) is None
        request = recorded.model_request()
        body, key = canonical_json(recorded.body), draw_key(request)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        cut = [n for n in range(occurrence) if model.behaviour_at(key, n) == "cut_off"]
        assert not cut, f"resent after its reply was cut off: {request.last_user_text[:200]}"
        conversation = (request.role, request.first_user_text)
        if previous.get(conversation) == body:
            assert model.behaviour_at(key, occurrence - 1) == "refusal", request.last_user_text
        previous[conversation] = body


@pytest.fixture
def baseline(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Path, int, set[tuple[Any, ...]]]:
    """The planted repository and what a well-behaved model's review of it reports."""
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):  # the same commit id every time,
        monkeypatch.setenv(name, "2026-01-01T00:00:00Z")  # so a seed draws the same replies
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    code, report = _review(repo, api_env, tmp_path / "baseline.json")
    assert code == 1 and not report["incomplete"]
    fake_api.reset()
    return repo, code, _confirmed(report)


def _misbehaving_review(
    fake_api: FakeMessagesAPI,
    env: dict[str, str],
    baseline: tuple[Path, int, set[tuple[Any, ...]]],
    model: MisbehavingModel,
    out: Path,
) -> tuple[int, dict[str, Any]]:
    repo, expected_code, expected = baseline
    fake_api.reset()
    fake_api.policy = model
    code, report = _review(repo, env, out)
    _check_requests(fake_api, model)
    if report["incomplete"]:
        assert code == 3, report["concerns"]
    elif _lost(report):
        # The engine's sweep covered what the lost concern left, with a verified review.
        assert code in (0, 1), report["concerns"]
        assert {f["status"] for f in report["coverage"]["files"]} <= {"covered", "reused"}
    else:
        assert (code, _confirmed(report)) == (expected_code, expected), report["concerns"]
    return code, report


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_each_misbehaviour_alone_is_absorbed(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    baseline: tuple[Path, int, set[tuple[Any, ...]]],
    tmp_path: Path,
    behaviour: str,
) -> None:
    model = MisbehavingModel(planted_script(), rate=0.5, seed=8, behaviours=(behaviour,))

    _misbehaving_review(fake_api, api_env, baseline, model, tmp_path / "r.json")

    assert {p.behaviour for p in model.perturbations} == {behaviour}


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_each_misbehaviour_is_absorbed_without_a_shell(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    baseline: tuple[Path, int, set[tuple[Any, ...]]],
    tmp_path: Path,
    behaviour: str,
) -> None:
    """The same model, offered the read-only tools: the same verified findings (the
    baseline is the review with a shell)."""
    model = MisbehavingModel(planted_script(), rate=0.5, seed=8, behaviours=(behaviour,))
    env = {**api_env, "ORCH_REVIEW_SANDBOX": "tools"}

    _misbehaving_review(fake_api, env, baseline, model, tmp_path / "r.json")

    assert {p.behaviour for p in model.perturbations} == {behaviour}


def test_reviews_survive_a_model_that_misbehaves_on_a_third_of_its_replies(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    baseline: tuple[Path, int, set[tuple[Any, ...]]],
    tmp_path: Path,
) -> None:
    seen: set[str] = set()
    codes = []
    for seed in SEEDS:
        model = MisbehavingModel(planted_script(), rate=0.3, seed=seed)
        code, _ = _misbehaving_review(
            fake_api, api_env, baseline, model, tmp_path / f"seed-{seed}.json"
        )
        codes.append(code)
        seen |= {p.behaviour for p in model.perturbations}

    assert seen == set(BEHAVIOURS)  # every behaviour was exercised at least once
    assert codes.count(1) >= 1  # and at least one run still found the planted bug


def test_a_subagent_that_keeps_refusing_loses_its_concern_with_the_refusal_recorded(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    baseline: tuple[Path, int, set[tuple[Any, ...]]],
    tmp_path: Path,
) -> None:
    repo, _, expected = baseline
    script = planted_script()

    def policy(request: ModelRequest) -> Reply:
        task = request.first_user_text
        # The concern, and the engine's sweep of the file it left uncovered, are refused.
        if request.role == "subagent" and ("division" in task or "calc.py" in task):
            return Reply.refusal()
        return script(request)

    fake_api.policy = policy
    code, report = _review(repo, api_env, tmp_path / "r.json")

    assert code == 3
    assert "calc.py" in {
        f["path"] for f in report["coverage"]["files"] if f["status"] == "uncovered"
    }
    division = next(c for c in report["concerns"] if "division" in c["concern"])
    assert division["status"] == "failed" and "refused" in division["error"]
    assert _confirmed(report) == expected  # the injection is still found
    refused = [
        r
        for r in fake_api.requests_for("subagent")
        if "division" in r.model_request().first_user_text
    ]
    assert len(refused) == 2  # the task, and its one restart (then the sweep, also refused)
