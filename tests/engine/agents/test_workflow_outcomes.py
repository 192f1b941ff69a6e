"""What becomes of a concern: reviewed and verified, skipped at a cap, failed, unverified,
and the progress events that say so. Agents' shells are started (never used): slow."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from orch_review.config.settings import Config
from orch_review.engine.agents.workflow import Workflow
from orch_review.engine.api.budget import Caps
from orch_review.engine.memory.journal import Journal
from orch_review.events import AgentEvent
from orch_review.findings.records import ConcernOutcome
from orch_review.findings.usage import UsageReport
from orch_review.trust import Signer
from tests.engine.sessions import Files, StandIn, session

pytestmark = pytest.mark.slow

T = TypeVar("T")

FILES = {"a.py": b"x = 1\n", "b.py": b"y = 1\n"}
CONCERNS = ["Review `a.py` for defects.", "Review `b.py` for defects."]


def _run(
    tmp_path: Path,
    *,
    config: Config | None = None,
    caps: Caps | None = None,
    silent: bool = False,
    reports: list[UsageReport] | None = None,
    labels: list[tuple[str, str, str]] | None = None,
) -> tuple[list[ConcernOutcome], list[tuple[str, str, str, str]], StandIn]:
    """Review CONCERNS; ``reports`` gets the budget's report, ``labels`` each event's
    (agent, label, state)."""
    content = Files(tmp_path, FILES)
    client = StandIn(content, silent_subagents=silent)
    events: list[AgentEvent] = []
    journal = tmp_path / "journal.sqlite3"
    with session(
        tmp_path, content, client, journal=journal, config=config, caps=caps, events=events.append
    ) as s:
        outcomes = Workflow(s).run(list(CONCERNS))
        if reports is not None:
            reports.append(s.budget.report())
    shown = [(e.agent_id, e.role, e.state, e.detail) for e in events if e.state != "turn"]
    if labels is not None:
        labels.extend((e.agent_id, e.label, e.state) for e in events if e.state != "turn")
    return outcomes, shown, client


def test_each_concern_is_reviewed_then_verified(tmp_path: Path) -> None:
    reports: list[UsageReport] = []
    outcomes, events, _ = _run(tmp_path, reports=reports)
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
    assert reports[0].verified_share == 1.0  # all of the spend ended in verified coverage


def test_a_rerun_is_served_from_the_journal_and_says_so(tmp_path: Path) -> None:
    _run(tmp_path)
    with Journal(tmp_path / "journal.sqlite3", signer=Signer(b"k" * 32, "credential")) as journal:
        assert journal.stats().by_kind == {"subagent": 2, "verifier": 2}
    labels: list[tuple[str, str, str]] = []
    outcomes, events, client = _run(tmp_path, labels=labels)
    assert client.tasks == {"subagent": [], "verifier": []}
    assert ("s0", CONCERNS[0], "cached") in labels and ("v1", CONCERNS[1], "cached") in labels
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
    reports: list[UsageReport] = []
    labels: list[tuple[str, str, str]] = []
    outcomes, events, client = _run(
        tmp_path, config=config, caps=Caps(max_agents=1), reports=reports, labels=labels
    )
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
    assert (s, skipped[0].concern, "skipped") in labels
    assert (skipped[0].index, skipped[0].concern) in {(0, CONCERNS[0]), (1, CONCERNS[1])}
    assert reports[0].verified_share == 0.0  # nothing it spent ended verified


def test_with_verification_off_findings_stay_unverified(tmp_path: Path) -> None:
    outcomes, _, client = _run(tmp_path, config=Config(sandbox="off", verify=False))
    assert [o.error for o in outcomes] == ["verification off", "verification off"]
    assert client.tasks["verifier"] == [] and not any(o.covered for o in outcomes)
    assert all(f.verdict is None for o in outcomes for f in o.findings)


def test_a_subagent_without_its_report_fails_its_concern(tmp_path: Path) -> None:
    labels: list[tuple[str, str, str]] = []
    outcomes, events, _ = _run(tmp_path, silent=True, labels=labels)
    assert [(o.index, o.concern, o.status) for o in outcomes] == [
        (0, CONCERNS[0], "failed"),
        (1, CONCERNS[1], "failed"),
    ]
    assert all("did not call report_findings" in (o.error or "") for o in outcomes)
    failed = [e for e in events if e[2] == "failed"]
    assert sorted(failed) == [
        ("s0", "subagent", "failed", outcomes[0].error),
        ("s1", "subagent", "failed", outcomes[1].error),
    ]
    assert ("s0", CONCERNS[0], "failed") in labels and ("s1", CONCERNS[1], "failed") in labels


THREE = {"a.py": b"x = 1\n", "b.py": b"y = 1\n", "c.py": b"z = 1\n"}


def _concern(path: str) -> str:
    return f"Review `{path}` for defects."


def _bounded(review: Callable[[], T], seconds: float = 60) -> T:
    """``review()``, failing the test when it has not ended within ``seconds`` (a place in
    the budget held for ever makes the next admission wait for ever)."""
    result: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(review())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"the review did not end within {seconds:g} s")
    if errors:
        raise errors[0]
    return result[0]


def _serial(
    tmp_path: Path,
    client_options: dict[str, Any],
    *,
    caps: Caps | None = None,
    files: dict[str, bytes] = THREE,
    labels: list[tuple[str, str, str]] | None = None,
) -> tuple[list[ConcernOutcome], StandIn, list[str]]:
    """Review one concern per file, one agent at a time; also the order of the agents'
    requests ("subagent a.py", "verifier a.py", ...)."""
    content = Files(tmp_path, files)
    client = StandIn(content, **client_options)
    events: list[AgentEvent] = []

    def review() -> list[ConcernOutcome]:
        journal = tmp_path / "journal.sqlite3"
        with session(
            tmp_path, content, client, journal=journal, caps=caps, events=events.append, serial=True
        ) as s:
            return Workflow(s).run([_concern(p) for p in sorted(files)])

    outcomes = _bounded(review)
    order = [
        f"{e.role} {content.mentioned_files(e.label)[0]}" for e in events if e.state == "started"
    ]
    if labels is not None:
        labels.extend((e.agent_id, e.label, e.state) for e in events if e.state != "turn")
    return outcomes, client, order


def test_a_verifier_runs_ahead_of_the_concerns_not_yet_started(tmp_path: Path) -> None:
    outcomes, _, order = _serial(tmp_path, {})
    assert order == [f"{role} {p}" for p in sorted(THREE) for role in ("subagent", "verifier")]
    assert all(o.covered for o in outcomes)


def test_a_concern_that_finds_nothing_is_covered_without_a_verifier(tmp_path: Path) -> None:
    outcomes, client, order = _serial(tmp_path, {"clean": frozenset({"a.py"})})
    assert [(o.status, len(o.findings), o.covered) for o in outcomes] == [
        ("reviewed", 0, True),
        ("reviewed", 1, True),
        ("reviewed", 1, True),
    ]
    assert "verifier a.py" not in order and len(client.tasks["verifier"]) == 2


@pytest.mark.parametrize("first", ["clean", "silent"])
def test_the_verifier_place_of_a_concern_that_needs_none_is_given_back(
    tmp_path: Path, first: str
) -> None:
    # Three agents in all: a.py's subagent, then b.py's subagent and its verifier. a.py's
    # concern was admitted with a place for a verifier; finding nothing, or failing, gives
    # it back, or b.py's concern would wait for it for ever.
    files = {"a.py": THREE["a.py"], "b.py": THREE["b.py"]}
    outcomes, _, order = _serial(
        tmp_path, {first: frozenset({"a.py"})}, caps=Caps(max_agents=3), files=files
    )
    assert order == ["subagent a.py", "subagent b.py", "verifier b.py"]
    assert [o.status for o in outcomes] == [
        "reviewed" if first == "clean" else "failed",
        "reviewed",
    ]
    assert outcomes[1].covered


def test_under_a_token_cap_a_concern_starts_only_when_it_and_its_verification_fit(
    tmp_path: Path,
) -> None:
    # Each subagent spends 110 tokens and finds nothing. Once one has ended, the next is
    # expected to cost 110, verifying it 110 times the share of concerns that needed a
    # verifier so far (1 of n+1, with the prior one that did): 55, 36, 27, and one whole
    # verifier (110) is kept free. After three concerns (330 spent), a fourth would need
    # 330 + 247 > 500; without its verification it would fit.
    files = {f"m{n}.py": b"x = 1\n" for n in range(5)}
    labels: list[tuple[str, str, str]] = []
    outcomes, client, _ = _serial(
        tmp_path,
        {"clean": frozenset(files)},
        caps=Caps(max_total_tokens=500),
        files=files,
        labels=labels,
    )
    reason = "token cap reached (500 tokens)"
    assert [(o.index, o.status, o.error) for o in outcomes] == [
        (0, "reviewed", None),
        (1, "reviewed", None),
        (2, "reviewed", None),
        (3, "skipped", reason),
        (4, "skipped", reason),
    ]
    assert [o.concern for o in outcomes] == [_concern(p) for p in sorted(files)]
    assert len(client.tasks["subagent"]) == 3
    assert ("s3", _concern("m3.py"), "skipped") in labels


def test_after_a_stop_no_concern_starts_and_each_says_it_was_interrupted(tmp_path: Path) -> None:
    content = Files(tmp_path, FILES)
    client = StandIn(content)
    events: list[AgentEvent] = []
    with session(
        tmp_path, content, client, journal=tmp_path / "j.sqlite3", events=events.append
    ) as s:
        s.cancel.set()
        outcomes = Workflow(s).run(list(CONCERNS))
    assert [(o.index, o.concern, o.status, o.error) for o in outcomes] == [
        (0, CONCERNS[0], "skipped", "interrupted"),
        (1, CONCERNS[1], "skipped", "interrupted"),
    ]
    assert client.tasks == {"subagent": [], "verifier": []}
    assert sorted((e.agent_id, e.label, e.state, e.detail) for e in events) == [
        ("s0", CONCERNS[0], "skipped", "interrupted"),
        ("s1", CONCERNS[1], "skipped", "interrupted"),
    ]


def test_a_ctrl_c_while_waiting_for_concerns_stops_those_not_started(tmp_path: Path) -> None:
    # a.py's subagent is interrupted; b.py's, if it started, holds until the interrupt has
    # reached the review; c.py's concern must then never start.
    content = Files(tmp_path, THREE)
    handled = threading.Event()

    def before(path: str) -> None:
        if path == "a.py":
            raise KeyboardInterrupt
        if path == "b.py":
            handled.wait(30)

    client = StandIn(content, before=before)
    with session(tmp_path, content, client, journal=tmp_path / "j.sqlite3", serial=True) as s:
        workflow = Workflow(s)
        futures = workflow.start([_concern(p) for p in sorted(THREE)])
        with pytest.raises(KeyboardInterrupt):
            workflow.collect(futures)
        handled.set()
        rest = _bounded(lambda: workflow.collect(futures[1:]))
    assert rest[-1] == ConcernOutcome(2, _concern("c.py"), "skipped", error="interrupted")
    assert not any("c.py" in task for task in client.tasks["subagent"])
    assert client.tasks["verifier"] == []


def test_a_concern_asked_for_again_is_not_paid_twice(tmp_path: Path) -> None:
    content = Files(tmp_path, THREE)
    client = StandIn(content)
    with session(tmp_path, content, client, journal=tmp_path / "j.sqlite3") as s:
        workflow = Workflow(s)
        first = workflow.run([_concern("a.py")])
        again = _bounded(lambda: workflow.run([_concern("a.py"), _concern("b.py")]))
    assert again[0] == first[0] and again[1].index == 1 and again[1].covered
    assert len(client.tasks["subagent"]) == 2
    assert [o.index for o in workflow.outcomes] == [0, 1]
