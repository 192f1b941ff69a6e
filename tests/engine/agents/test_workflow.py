"""Workflow input parsing, the subtask cap, what the main agent is told, and verdicts kept whole."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from orch_review.engine.agents.tools import ToolInputError
from orch_review.engine.agents.workflow import GatedClient, describe, parse_subtasks
from orch_review.engine.api.client import Reply as ClientReply
from orch_review.engine.api.scheduler import PriorityPool
from orch_review.findings.records import ConcernOutcome, Finding, Severity, Verdict
from orch_review.trust import JOURNAL, signer_for
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.model_io import ModelRequest, Reply
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import Concern, ReviewScript, is_sweep, planted_script


@pytest.mark.parametrize(
    "raw",
    [
        ["check a.py", "check b.py"],
        json.dumps(["check a.py", "check b.py"]),
        "check a.py\ncheck b.py\n",
        "\n  check a.py  \n\n check b.py",
        ["check a.py", "", "   ", "check b.py"],
    ],
)
def test_accepts_what_models_emit(raw: object) -> None:
    assert parse_subtasks({"subtasks": raw}) == ["check a.py", "check b.py"]


def test_json_looking_garbage_is_taken_as_lines() -> None:
    assert parse_subtasks({"subtasks": "[not json\nsecond"}) == ["[not json", "second"]


@pytest.mark.parametrize(
    ("tool_input", "message"),
    [
        ({}, "must be an array"),
        ({"subtasks": 3}, "must be an array"),
        ({"subtasks": [1, 2]}, "must be a string"),
        ({"subtasks": []}, "is empty"),
        ({"subtasks": "   \n "}, "is empty"),
        ({"subtasks": {"a": 1}}, "must be an array"),
    ],
)
def test_garbage_is_a_tool_error(tool_input: dict[str, object], message: str) -> None:
    with pytest.raises(ToolInputError, match=message):
        parse_subtasks(tool_input)


def _finding(claim: str, confirmed: bool | None) -> Finding:
    verdict = None if confirmed is None else Verdict(confirmed, "because")
    return Finding("a.py", 3, 4, Severity.HIGH, "security", claim, "a.py:3", "c", verdict=verdict)


def test_describe_lists_confirmed_findings_and_uncovered_concerns() -> None:
    outcomes = [
        ConcernOutcome(
            0, "check a.py", "reviewed", (_finding("bad", True), _finding("fine", False))
        ),
        ConcernOutcome(1, "check b.py", "failed", error="API kept failing"),
        ConcernOutcome(2, "check c.py", "reviewed", (_finding("maybe", None),), error="x"),
    ]
    text = describe(outcomes)
    assert "[1] check a.py\n    1 confirmed, 1 refuted" in text
    assert "high a.py:3-4: bad" in text
    assert "fine" not in text
    assert "[2] check b.py\n    NOT COVERED (failed): API kept failing" in text
    assert "1 unverified" in text
    assert [o.covered for o in outcomes] == [True, False, False]


def _eval_concern(name: str, confidence: str) -> Concern:
    return Concern(
        name,
        f"Check {name}.py for eval() of caller input.",
        f"grep -n 'eval(' {name}.py",
        path=f"{name}.py",
        severity="medium",
        category="security",
        claim="eval() of a caller-supplied string runs arbitrary code.",
        confidence=confidence,
    )


def test_verifier_confidence_reaches_the_report_and_ranks_findings(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    code = "def run(text: str) -> object:\n    return eval(text)\n"
    repo = git_repo({"alpha.py": code, "beta.py": code})
    out = tmp_path / "report.json"
    script = [_eval_concern("alpha", "low"), _eval_concern("beta", "high")]
    confirmed_by_path = []
    for _ in range(2):  # the second run is served from the journal
        fake_api.reset()
        fake_api.policy = ReviewScript(script)

        result = run_cli(repo, api_env, "--all", "--json", str(out), "--fail-on", "medium")

        assert result.returncode == 1, result.stderr
        findings = json.loads(out.read_text())["findings"]
        confirmed = [f for f in findings if f["status"] == "confirmed"]
        confirmed_by_path.append([(f["path"], f["verdict"]["confidence"]) for f in confirmed])
    # Same severity: the high-confidence finding ranks first although its path sorts last.
    assert confirmed_by_path[0] == [("beta.py", "high"), ("alpha.py", "low")]
    assert confirmed_by_path[1] == confirmed_by_path[0]
    assert fake_api.message_requests == []


def test_a_finding_without_a_verdict_is_unverified_never_confirmed(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    journal = tmp_path / "journal.sqlite3"
    env = {**api_env, "ORCH_REVIEW_JOURNAL_PATH": str(journal)}
    assert run_cli(repo, env, "--all").returncode == 1
    # A stored verification that lost its verdicts, as orch-review itself could have written
    # it: signed with the key of the same credential (an unsigned edit is ignored).
    signer = signer_for(env, "anthropic", JOURNAL)
    assert signer is not None
    with closing(sqlite3.connect(journal)) as db, db:
        rows = db.execute("SELECT key, value FROM journal WHERE kind = 'verifier'").fetchall()
        for key, value in rows:
            text = json.dumps({**json.loads(value), "verdicts": {}})
            db.execute(
                "UPDATE journal SET value = ?, mac = ? WHERE key = ?",
                (text, signer.sign(key, "verifier", text), key),
            )
    assert rows
    out = tmp_path / "report.json"
    script = planted_script()

    def lazy_sweep(request: ModelRequest) -> Reply:  # a sweep that finds nothing
        if request.role == "subagent" and is_sweep(request.first_user_text):
            return Reply.tool_use("report_findings", {"summary": "nothing", "findings": []})
        return script(request)

    fake_api.policy = lazy_sweep

    result = run_cli(repo, env, "--all", "--json", str(out))

    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    findings = json.loads(out.read_text())["findings"]
    assert findings and {f["status"] for f in findings} == {"unverified"}


class _Answering:
    """A stand-in client: records which agent asked, then holds the reply until let go."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self._changed = threading.Condition()
        self._let_go = 0

    def complete(self, **request: Any) -> ClientReply:
        with self._changed:
            self.asked.append(str(request["model"]))
            self._changed.notify_all()
            mine = len(self.asked)
            assert self._changed.wait_for(lambda: self._let_go >= mine, timeout=60)
        return ClientReply([], "end_turn", 1, 1, 0, 0)

    def wait_asked(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.asked) >= count, timeout=60)

    def let_go(self) -> None:
        with self._changed:
            self._let_go += 1
            self._changed.notify_all()


def test_an_agents_later_turns_wait_behind_concerns_that_have_not_started() -> None:
    client = _Answering()
    pool = PriorityPool(1)
    cancel = threading.Event()
    agent = {
        name: GatedClient(client, pool, cancel, role, order)
        for name, role, order in [
            ("s0", "subagent", 0),
            ("s1", "subagent", 1),
            ("v2", "verifier", 2),
        ]
    }

    def ask(name: str) -> threading.Thread:
        thread = threading.Thread(
            target=lambda: agent[name].complete(model=name, system="", tools=[], messages=[]),
            daemon=True,
        )
        thread.start()
        return thread

    threads = [ask("s0")]  # turn 0 of concern 0 holds the only slot
    client.wait_asked(1)
    client.let_go()
    threads[0].join(timeout=60)
    threads.append(ask("v2"))  # a verifier's first turn holds the slot
    client.wait_asked(2)
    threads += [ask("s0"), ask("s1")]  # concern 0's second turn, concern 1's first
    assert _until(lambda: pool.waiting_requests() == 2)

    for _ in range(3):
        client.let_go()
    for thread in threads:
        thread.join(timeout=60)

    assert client.asked == ["s0", "v2", "s1", "s0"]


def _until(condition: Callable[[], bool]) -> bool:
    polled = threading.Event()
    for _ in range(6000):
        if condition():
            return True
        polled.wait(0.01)  # an upper bound on waiting for other threads, not a timing assert
    return False
