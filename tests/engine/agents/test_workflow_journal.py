"""The journal key of a concern: what a re-run pays for and what it reuses.

Each test runs Workflow twice over the same journal. Agents' shells are started (and
never used), hence slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orch_review.config.guidance import Guidance
from orch_review.config.settings import Config
from orch_review.engine.agents.workflow import Workflow
from tests.engine.sessions import Files, StandIn, session


def _review_twice(
    tmp_path: Path, before: dict[str, bytes], after: dict[str, bytes], concerns: list[str]
) -> tuple[StandIn, StandIn]:
    clients = []
    for files in (before, after):
        content = Files(tmp_path, files)
        client = StandIn(content)
        with session(tmp_path, content, client, journal=tmp_path / "journal.sqlite3") as s:
            outcomes = Workflow(s).run(list(concerns))
        assert all(o.covered for o in outcomes)
        clients.append(client)
    return clients[0], clients[1]


@pytest.mark.slow
def test_a_concern_is_run_again_when_a_file_it_names_changes(tmp_path: Path) -> None:
    concerns = ["Review `a.py` for defects.", "Review `b.py` for defects."]
    before = {"a.py": b"x = 1\n", "b.py": b"y = 1\n"}
    after = {"a.py": b"x = 2\n", "b.py": b"y = 1\n"}  # same wording; only a.py's content

    first, second = _review_twice(tmp_path, before, after, concerns)

    assert len(first.tasks["subagent"]) == 2 and len(first.tasks["verifier"]) == 2
    assert [t for t in second.tasks["subagent"] if "a.py" in t] == second.tasks["subagent"]
    assert len(second.tasks["subagent"]) == 1 and len(second.tasks["verifier"]) == 1


@pytest.mark.slow
def test_nothing_is_run_again_when_nothing_it_names_changed(tmp_path: Path) -> None:
    concerns = ["Review `a.py` for defects."]
    before = {"a.py": b"x = 1\n", "b.py": b"y = 1\n"}
    after = {"a.py": b"x = 1\n", "b.py": b"y = 2\n"}  # another file changed

    _, second = _review_twice(tmp_path, before, after, concerns)

    assert second.tasks == {"subagent": [], "verifier": []}


@pytest.mark.slow
def test_a_concern_is_run_again_when_its_guidance_changes(tmp_path: Path) -> None:
    files = {"a.py": b"x = 1\n"}
    asked = []
    for rules in ("Check for races.", "Check for leaks."):
        content = Files(tmp_path, files)
        client = StandIn(content)
        guidance = Guidance(documents={"REVIEW.md": rules})
        journal = tmp_path / "journal.sqlite3"
        with session(tmp_path, content, client, journal=journal, guidance=guidance) as s:
            Workflow(s).run(["Review `a.py` for defects."])
        asked.append(client.tasks["subagent"])
    assert len(asked[1]) == 1 and "Check for leaks." in asked[1][0]


@pytest.mark.slow
def test_another_question_about_the_same_file_is_not_answered_from_the_journal(
    tmp_path: Path,
) -> None:
    files = {"a.py": b"x = 1\n"}
    asked = []
    for concern in ("Review `a.py` for races.", "Review `a.py` for leaks."):
        content = Files(tmp_path, files)
        client = StandIn(content)
        with session(tmp_path, content, client, journal=tmp_path / "journal.sqlite3") as s:
            Workflow(s).run([concern])
        asked.append(client.tasks["subagent"])
    assert len(asked[1]) == 1 and "for leaks" in asked[1][0]


@pytest.mark.slow
@pytest.mark.parametrize(
    "changed",
    [
        {"subagent_model": "claude-other-1"},
        {"effort": "low"},
        {"subagent_max_turns": 3},
    ],
    ids=["model", "effort", "turns"],
)
def test_a_concern_is_run_again_when_a_setting_that_changes_its_answer_does(
    tmp_path: Path, changed: dict[str, object]
) -> None:
    files = {"a.py": b"x = 1\n"}
    asked = []
    for config in (Config(sandbox="off"), Config(sandbox="off", **changed)):  # type: ignore[arg-type]
        content = Files(tmp_path, files)
        client = StandIn(content)
        journal = tmp_path / "journal.sqlite3"
        with session(tmp_path, content, client, journal=journal, config=config) as s:
            Workflow(s).run(["Review `a.py` for defects."])
        asked.append(len(client.tasks["subagent"]))
    assert asked == [1, 1]
