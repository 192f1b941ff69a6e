"""A main agent restarted after a refusal reuses what its first attempt completed: nothing
it already asked is paid for again, and no request whose reply was cut off is resent."""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass, field

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.fakes.wire import canonical_json
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import ReviewScript, is_sweep, planted_script

pytestmark = pytest.mark.slow


def _injection_subagent(request: ModelRequest) -> bool:
    return request.role == "subagent" and "injection" in request.first_user_text


def _division_subagent(request: ModelRequest) -> bool:
    return request.role == "subagent" and "division" in request.first_user_text


@dataclass
class RefusingOnce:
    """The planted review, except: the main agent's turn after its Workflow call is refused
    the first time, and the division subagent's first reply is cut off at max_tokens."""

    script: ReviewScript = field(default_factory=planted_script)
    refused: bool = False
    cut: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: ModelRequest) -> Reply:
        with self.lock:
            if request.role == "main" and request.assistant_turns == 2 and not self.refused:
                self.refused = True
                return Reply.refusal()
            if _division_subagent(request) and request.assistant_turns == 0 and not self.cut:
                self.cut = True
                call = {"type": "tool_use", "name": "bash", "input": {"command": "cat calc.py"}}
                return Reply([{**call, "cut_off": True}], "max_tokens")
        return self.script(request)


@pytest.mark.parametrize("journal", [True, False], ids=["journal", "no-journal"])
def test_a_restart_after_a_refusal_pays_only_from_the_refused_turn(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, journal: bool
) -> None:
    repo = make_planted_repo(git_repo)
    policy = RefusingOnce()
    fake_api.policy = policy
    # The injection concern fails (one attempt, no retry): the sweep covers its file.
    fake_api.add_fault("status", status=500, match=_injection_subagent, times=None)
    env = {**api_env, "ORCH_REVIEW_MAX_RETRIES": "0"}

    args = ["--all", "--no-progress", *([] if journal else ["--no-journal"])]
    result = run_cli(repo, env, *args)

    assert result.returncode == 1, result.stderr
    assert policy.refused and policy.cut
    bodies = collections.Counter(canonical_json(r.body) for r in fake_api.message_requests)
    resent = {body: count for body, count in bodies.items() if count > 1}
    refused = [r for r in fake_api.requests_for("main") if r.model_request().assistant_turns == 2]
    # Only the refused request is asked again, once; everything before it is reused.
    assert list(resent.values()) == [2], list(resent)
    assert list(resent) == [canonical_json(refused[0].body)]
    # The failed concern is not run again, and the sweep covered its file.
    concern = [r for r in fake_api.message_requests if _injection_subagent(r.model_request())]
    assert len(concern) == 1
    assert any(
        is_sweep(r.model_request().first_user_text) for r in fake_api.requests_for("subagent")
    )
    # The request whose reply was cut off went out once; the next one told the model so.
    division = [r for r in fake_api.message_requests if _division_subagent(r.model_request())]
    assert [r.model_request().assistant_turns for r in division] == [0, 0, 1]
    assert len({canonical_json(r.body) for r in division}) == 3
