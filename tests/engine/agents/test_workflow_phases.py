"""Multiphase Workflow plans: validation, ordering, and results passed to later phases."""

from __future__ import annotations

import pytest

from orch_review.engine.agents.tools import ToolInputError
from orch_review.engine.agents.workflow_phases import parse_phases, with_context
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import Concern, ReviewScript, confirm


def _plan(*phases: dict[str, object]) -> dict[str, object]:
    return {"phases": list(phases)}


def test_phases_run_in_given_order_unless_dependencies_say_otherwise() -> None:
    plan = _plan(
        {"name": "review", "subtasks": ["b"], "depends_on": ["understand"]},
        {"name": "understand", "subtasks": ["a"]},
        {"name": "extra", "subtasks": ["c"]},
    )
    assert [p.name for p in parse_phases(plan, 10)] == ["understand", "review", "extra"]


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (_plan(), "non-empty array"),
        (_plan({"name": "a", "subtasks": ["x"]}, {"name": "a", "subtasks": ["y"]}), "unique"),
        (_plan({"name": "a", "subtasks": ["x"], "depends_on": ["zzz"]}), "unknown zzz"),
        (
            _plan(
                {"name": "a", "subtasks": ["x"], "depends_on": ["b"]},
                {"name": "b", "subtasks": ["y"], "depends_on": ["a"]},
            ),
            "cycle: a, b",
        ),
        (_plan({"name": "a", "subtasks": ["x", "y", "z"]}), "more than the limit of 2"),
        (_plan({"name": "a", "subtasks": []}), "has no subtasks"),
        (_plan({"subtasks": ["x"]}), "needs a non-empty `name`"),
        (_plan({"name": "a", "subtasks": "x"}), "must be an array of strings"),
    ],
)
def test_invalid_plans_are_refused_with_a_reason(plan: dict[str, object], message: str) -> None:
    with pytest.raises(ToolInputError, match=message):
        parse_phases(plan, 2)


def test_context_is_delimited_data() -> None:
    text = with_context("check x", {"understand": "x is a parser"})
    assert text.startswith("check x\n")
    assert '<phase_results name="understand">\nx is a parser\n</phase_results>' in text
    assert with_context("check x", {}) == "check x"


def test_later_phase_sees_verified_results_of_the_earlier_one(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    review = Concern(
        "injection",
        "injection: check app.py queries",
        "grep -n 'execute(f' app.py",
        path="app.py",
        claim="SQL built with an f-string",
        verdict=confirm,
    )
    mapping = Concern(
        "mapping",
        "mapping: find where app.py talks to the database",
        "grep -n 'cursor' app.py",
        path="app.py",
        severity="info",
        claim="database access point",
        verdict=confirm,
    )
    script = ReviewScript([review, mapping])

    def policy(request: ModelRequest) -> Reply:
        if request.role != "main":
            return script(request)
        if request.assistant_turns == 0:
            return Reply.tool_use(
                "Workflow",
                {
                    "phases": [
                        {"name": "understand", "subtasks": [mapping.subtask]},
                        {
                            "name": "review",
                            "subtasks": [review.subtask],
                            "depends_on": ["understand"],
                        },
                    ]
                },
            )
        return Reply.text("done")

    fake_api.policy = policy
    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1, result.stderr
    review_tasks = [
        r.model_request().first_user_text
        for r in fake_api.requests_for("subagent")
        if r.model_request().first_user_text.startswith("Your subtask:\n\n<subtask>\ninjection")
    ]
    assert review_tasks
    assert all('<phase_results name="understand">' in t for t in review_tasks)
    assert all("database access point" in t for t in review_tasks)
    first_review = min(
        r.received_at
        for r in fake_api.requests_for("subagent")
        if "<subtask>\ninjection" in r.model_request().first_user_text
    )
    mapping_verifiers = [
        r.received_at
        for r in fake_api.requests_for("verifier")
        if "<subtask>\nmapping" in r.model_request().first_user_text
    ]
    assert max(mapping_verifiers) < first_review  # the phase was verified before the next began
    (tool_result,) = fake_api.requests_for("main")[-1].model_request().tool_results()
    assert "## Phase understand" in tool_result[1] and "## Phase review" in tool_result[1]
