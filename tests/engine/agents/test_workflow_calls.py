"""The Workflow tool as the main agent calls it: which subtasks run, which are refused and
why, who is told of a plan before it runs, and concerns answered from an earlier review.
Agents' shells are started (never used): slow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orch_review.config.settings import Config
from orch_review.engine.agents.workflow import Workflow
from orch_review.engine.memory.reuse import EarlierReviews
from orch_review.events import AgentEvent
from tests.engine.memory.test_reuse import FILES as REUSE_FILES
from tests.engine.memory.test_reuse import _finding, _rules, _store
from tests.engine.sessions import Files, StandIn, session

pytestmark = pytest.mark.slow

FILES = {"a.py": b"x = 1\n", "b.py": b"y = 1\n", "vendor/lib.py": b"z = 1\n"}
VENDORED = "vendor/lib.py is a skipped file (linguist-vendored)"
NO_FILE = (
    "it names no file of the change; concerns must be about changed files "
    "(name them by their paths, as listed in the pre-scout summary)"
)
SUBTASKS = ["Review `a.py` for defects.", "Look at the overall design.", "Check `vendor/lib.py`."]


def _call(
    tmp_path: Path,
    tool_input: dict[str, Any],
    config: Config | None = None,
    **options: Any,
) -> tuple[str, bool, Workflow, StandIn, list[list[str]]]:
    """One Workflow tool call; also who was told of which concerns, in order."""
    content = Files(tmp_path, FILES, refused={"vendor/lib.py": VENDORED})
    client = StandIn(content)
    told: list[list[str]] = []
    journal = tmp_path / "j.sqlite3"
    with session(tmp_path, content, client, journal=journal, config=config) as s:
        workflow = Workflow(s, on_concerns=told.append, **options)
        text, is_error = workflow.handle_tool_call(tool_input)
    return text, is_error, workflow, client, told


def test_a_change_s_subtasks_must_name_its_files_and_refused_ones_are_said(
    tmp_path: Path,
) -> None:
    text, is_error, workflow, client, told = _call(
        tmp_path, {"subtasks": list(SUBTASKS)}, require_files=True
    )
    assert not is_error
    assert workflow.refused == [(SUBTASKS[1], NO_FILE), (SUBTASKS[2], VENDORED)]
    assert f"refused: {NO_FILE}" in text and f"refused: {VENDORED}" in text
    assert told == [[SUBTASKS[0]]]  # only what runs is announced, before it runs
    assert client.tasks["subagent"] and all("a.py" in t for t in client.tasks["subagent"])
    assert [(o.concern, o.covered) for o in workflow.outcomes] == [(SUBTASKS[0], True)]
    assert workflow.files_of == {0: ("a.py",)}


def test_a_subtask_naming_no_file_runs_when_files_are_not_required(tmp_path: Path) -> None:
    text, is_error, workflow, client, told = _call(tmp_path, {"subtasks": list(SUBTASKS)})
    assert not is_error and workflow.refused == [(SUBTASKS[2], VENDORED)]
    assert told == [SUBTASKS[:2]]
    assert [o.concern for o in workflow.outcomes] == SUBTASKS[:2]
    assert len(client.tasks["subagent"]) == 2 and NO_FILE not in text


def test_every_subtask_refused_is_a_tool_error_and_runs_nothing(tmp_path: Path) -> None:
    content = Files(tmp_path, FILES, refused={"vendor/lib.py": VENDORED})
    client = StandIn(content)
    told: list[list[str]] = []
    with session(tmp_path, content, client, journal=tmp_path / "j.sqlite3") as s:
        workflow = Workflow(s, require_files=True, on_concerns=told.append)
        text, is_error = workflow.handle_tool_call({"subtasks": SUBTASKS[1:]})
    assert is_error and text.startswith("Workflow was not run: every subtask is out of scope")
    assert told == [] and client.tasks == {"subagent": [], "verifier": []}


def test_only_max_subtasks_run_and_the_model_is_told_of_the_rest(tmp_path: Path) -> None:
    config = Config(sandbox="off", max_subtasks=1)
    subtasks = {"subtasks": ["Review `a.py`.", "Review `b.py`."]}
    text, is_error, workflow, client, _ = _call(tmp_path, subtasks, config)
    assert not is_error and "only the first 1 subtasks were run; 1 were dropped" in text
    assert [o.concern for o in workflow.outcomes] == ["Review `a.py`."]
    assert len(client.tasks["subagent"]) == 1


def test_a_plan_of_phases_is_announced_whole_before_its_first_phase_runs(
    tmp_path: Path,
) -> None:
    plan = {
        "phases": [
            {"name": "first", "subtasks": ["Review `a.py`."]},
            {"name": "then", "subtasks": ["Review `b.py`."], "depends_on": ["first"]},
        ]
    }
    text, is_error, workflow, client, told = _call(tmp_path, plan)
    assert not is_error and "## Phase first" in text and "## Phase then" in text
    assert told[0] == ["Review `a.py`.", "Review `b.py`."]
    assert len(client.tasks["subagent"]) == 2 and all(o.covered for o in workflow.outcomes)


def test_the_files_a_concern_covers_can_be_given(tmp_path: Path) -> None:
    content = Files(tmp_path, FILES)
    client = StandIn(content)
    with session(tmp_path, content, client, journal=tmp_path / "j.sqlite3") as s:
        workflow = Workflow(s)
        outcomes = workflow.run(["Review `a.py` and the module around it."], files=[("b.py",)])
        queued = workflow.start(["Review `b.py` and its callers."], files=[("a.py",)])
        outcomes += workflow.collect(queued)
    assert workflow.files_of == {0: ("b.py",), 1: ("a.py",)}
    assert all(o.covered for o in outcomes)


def test_a_concern_about_files_an_earlier_review_covered_is_answered_from_it(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store(journal)  # a.py (with one finding) and b.py covered, c.py not
    content = Files(tmp_path, REUSE_FILES)
    client = StandIn(content)
    events: list[AgentEvent] = []
    concerns = ["Review `a.py` for defects.", "Review `c.py` for defects."]
    with session(tmp_path, content, client, journal=journal, events=events.append) as s:
        earlier = EarlierReviews(s, "base1", _rules("house rules"))
        earlier.load(sorted(REUSE_FILES))
        workflow = Workflow(s, earlier=earlier)
        outcomes = workflow.run(list(concerns))
    answered, reviewed = outcomes
    assert workflow.answered == {0}
    assert (answered.index, answered.concern, answered.status) == (0, concerns[0], "reviewed")
    assert answered.findings == (_finding("a.py"),) and answered.from_journal
    assert answered.summary == "Answered from an earlier review of the same content."
    assert (reviewed.index, reviewed.from_journal, reviewed.covered) == (1, False, True)
    assert client.tasks["subagent"] == [t for t in client.tasks["subagent"] if "c.py" in t]
    assert len(client.tasks["subagent"]) == 1
    cached = [(e.agent_id, e.role, e.label, e.detail) for e in events if e.state == "cached"]
    assert cached == [("s0", "subagent", concerns[0], "earlier review")]


SMALL = {f"m{n:02d}.py": f"v{n} = {n}\n".encode() for n in range(30)}


def _packing_call(tmp_path: Path, config: Config) -> tuple[str, Workflow, StandIn]:
    content = Files(tmp_path, SMALL)
    client = StandIn(content, clean=frozenset(SMALL))
    with session(tmp_path, content, client, journal=tmp_path / "j.sqlite3", config=config) as s:
        workflow = Workflow(s)
        text, is_error = workflow.handle_tool_call(
            {"subtasks": [f"Check `{path}` for defects." for path in SMALL]}
        )
    assert not is_error
    return text, workflow, client


def test_many_small_subtasks_run_in_as_many_agents_as_run_at_once(tmp_path: Path) -> None:
    text, workflow, client = _packing_call(tmp_path, Config(sandbox="off", max_concurrent=10))

    assert len(client.tasks["subagent"]) == 10
    assert all("Packed review of 3 small subtasks" in t for t in client.tasks["subagent"])
    assert all(t.count("<file path=") == 3 for t in client.tasks["subagent"])  # shown
    covered = sorted(p for o in workflow.outcomes for p in workflow.files_of[o.index])
    assert covered == sorted(SMALL) and all(o.covered for o in workflow.outcomes)
    assert "Note: 30 small subtasks ran in 10 packed agents" in text


def test_with_pack_subtasks_off_each_small_subtask_has_its_own_agent(tmp_path: Path) -> None:
    config = Config(sandbox="off", max_concurrent=10, pack_subtasks=False)
    text, workflow, client = _packing_call(tmp_path, config)

    assert len(client.tasks["subagent"]) == 30 and len(workflow.outcomes) == 30
    assert "packed" not in text
