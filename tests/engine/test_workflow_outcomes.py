"""What becomes of a concern: reviewed and verified, skipped at a cap, failed, unverified,
and the progress events that say so. Agents' shells are started (never used): slow."""

from __future__ import annotations

from pathlib import Path

import pytest

from orch_review.config.settings import Config
from orch_review.engine.budget import Caps
from orch_review.engine.workflow import Workflow
from orch_review.events import AgentEvent
from orch_review.findings.records import ConcernOutcome
from tests.engine.sessions import Files, StandIn, session

pytestmark = pytest.mark.slow

FILES = {"a.py": b"x = 1\n", "b.py": b"y = 1\n"}
CONCERNS = ["Review `a.py` for defects.", "Review `b.py` for defects."]


def _run(
    tmp_path: Path, *, config: Config | None = None, caps: Caps | None = None, silent: bool = False
) -> tuple[list[ConcernOutcome], list[tuple[str, str, str, str]], StandIn]:
    content = Files(tmp_path, FILES)
    client = StandIn(content, silent_subagents=silent)
    events: list[AgentEvent] = []
    journal = tmp_path / "journal.sqlite3"
    with session(
        tmp_path, content, client, journal=journal, config=config, caps=caps, events=events.append
    ) as s:
        outcomes = Workflow(s).run(list(CONCERNS))
    shown = [(e.agent_id, e.role, e.state, e.detail) for e in events if e.state != "turn"]
    return outcomes, shown, client


def test_each_concern_is_reviewed_then_verified(tmp_path: Path) -> None:
    outcomes, events, _ = _run(tmp_path)
    assert [(o.index, o.concern, o.status, o.error) for o in outcomes] == [
        (0, CONCERNS[0], "reviewed", None),
        (1, CONCERNS[1], "reviewed", None),
    ]
    assert [f.path for o in outcomes for f in o.findings] == ["a.py", "b.py"]
    assert all(f.verdict is not None and f.verdict.confirmed for o in outcomes for f in o.findings)
    assert [o.summary for o in outcomes] == ["one", "one"] and all(o.covered for o in outcomes)
    for agent, role in (("s0", "subagent"), ("v0", "verifier"), ("s1", "subagent")):
        assert (agent, role, "started", "") in events
        assert any(e[:3] == (agent, role, "done") for e in events)


def test_a_rerun_is_served_from_the_journal_and_says_so(tmp_path: Path) -> None:
    _run(tmp_path)
    outcomes, events, client = _run(tmp_path)
    assert client.tasks == {"subagent": [], "verifier": []}
    assert all(o.from_journal and o.covered for o in outcomes)
    assert sorted(events) == [
        ("s0", "subagent", "cached", ""),
        ("s1", "subagent", "cached", ""),
        ("v0", "verifier", "cached", ""),
        ("v1", "verifier", "cached", ""),
    ]


def test_at_the_agent_cap_a_concern_is_skipped_and_a_finding_left_unverified(
    tmp_path: Path,
) -> None:
    config = Config(sandbox="off", max_concurrent=1)
    outcomes, events, client = _run(tmp_path, config=config, caps=Caps(max_agents=1))
    reason = "agent cap reached (1 agent)"
    reviewed = [o for o in outcomes if o.status == "reviewed"]
    skipped = [o for o in outcomes if o.status == "skipped"]
    assert len(reviewed) == 1 and len(skipped) == 1 and len(client.tasks["subagent"]) == 1
    assert skipped[0].error == reason and skipped[0].findings == ()
    assert reviewed[0].error == f"verification skipped: {reason}"
    assert [f.verdict for f in reviewed[0].findings] == [None]
    assert not any(o.covered for o in outcomes)
    s, v = f"s{skipped[0].index}", f"v{reviewed[0].index}"
    assert (s, "subagent", "skipped", reason) in events
    assert (v, "verifier", "skipped", reason) in events


def test_with_verification_off_findings_stay_unverified(tmp_path: Path) -> None:
    outcomes, _, client = _run(tmp_path, config=Config(sandbox="off", verify=False))
    assert [o.error for o in outcomes] == ["verification off", "verification off"]
    assert client.tasks["verifier"] == [] and not any(o.covered for o in outcomes)
    assert all(f.verdict is None for o in outcomes for f in o.findings)


def test_a_subagent_without_its_report_fails_its_concern(tmp_path: Path) -> None:
    outcomes, events, _ = _run(tmp_path, silent=True)
    assert [o.status for o in outcomes] == ["failed", "failed"]
    assert all("did not call report_findings" in (o.error or "") for o in outcomes)
    failed = [e for e in events if e[2] == "failed"]
    assert {e[0] for e in failed} == {"s0", "s1"} and all(e[1] == "subagent" for e in failed)
