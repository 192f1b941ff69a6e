"""A misbehaving model: wraps a scripted review and perturbs a share of its replies.

Each perturbation is something the real API documents or models really do: an empty reply, a
refusal (``stop_reason: "refusal"``, no content), a tool call cut off at ``max_tokens``, a
report sent in the same turn as the bash call it should have waited for, and odd but
unambiguous shapes in reports (``./`` and ``x/../`` paths, severity synonyms, line numbers as
strings, a verdict for a finding that does not exist)::

    model = MisbehavingModel(planted_script(), rate=0.3, seed=4)
    fake_api.policy = model

Whether a request is perturbed is drawn from the seed, the request body (tool-use ids aside:
the fake numbers them across concurrent agents) and how many times that body was seen before,
so a run is reproducible although agents run concurrently, and a request resent after a
refusal gets a fresh draw.
"""

from __future__ import annotations

import collections
import hashlib
import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from orch_review.engine.shell.read_tools import READ_TOOLS
from tests.fakes.messages_api import ModelRequest, Reply
from tests.fakes.wire import canonical_json
from tests.scripted import findings_in_task

Policy = Callable[[ModelRequest], Reply]

BEHAVIOURS = ("empty", "refusal", "cut_off", "bundled_report", "odd_shapes")
TERMINALS = {"subagent": "report_findings", "verifier": "report_verdicts"}
SEVERITY_SYNONYMS = {"high": "critical", "medium": "major", "low": "minor", "info": "note"}


@dataclass(frozen=True)
class Perturbation:
    """One perturbed reply: which behaviour, to which request body, its n-th occurrence."""

    behaviour: str
    body: str
    occurrence: int


@dataclass
class MisbehavingModel:
    """The policy; ``perturbations`` lists what it did, in the order it did it."""

    inner: Policy
    rate: float = 0.3
    seed: int = 0
    behaviours: tuple[str, ...] = BEHAVIOURS
    perturbations: list[Perturbation] = field(default_factory=list)
    _seen: collections.Counter[str] = field(default_factory=collections.Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: ModelRequest) -> Reply:
        reply = self.inner(request)
        body = draw_key(request)
        with self._lock:
            occurrence = self._seen[body]
            self._seen[body] += 1
        digest = hashlib.sha256(f"{self.seed}:{occurrence}:{body}".encode()).hexdigest()
        draw = random.Random(digest)
        if draw.random() >= self.rate:
            return reply
        candidates = [b for b in self.behaviours if _applies(b, reply, request)]
        if not candidates:
            return reply
        behaviour = draw.choice(candidates)
        with self._lock:
            self.perturbations.append(Perturbation(behaviour, body, occurrence))
        return _PERTURB[behaviour](reply, request)

    def behaviour_at(self, body: str, occurrence: int) -> str | None:
        """The behaviour the ``occurrence``-th request with ``body`` got, if any."""
        with self._lock:
            return next(
                (
                    p.behaviour
                    for p in self.perturbations
                    if (p.body, p.occurrence) == (body, occurrence)
                ),
                None,
            )


def draw_key(request: ModelRequest) -> str:
    """The request body as the draw sees it: canonical JSON without the tool-use ids."""
    return re.sub(r"toolu_\d+", "toolu", canonical_json(request.body))


def _calls(reply: Reply) -> list[dict[str, Any]]:
    return [b for b in reply.blocks if b.get("type") == "tool_use"]


def _applies(behaviour: str, reply: Reply, request: ModelRequest) -> bool:
    calls = _calls(reply)
    if behaviour == "cut_off":
        return bool(calls)
    if behaviour == "bundled_report":
        looking = {"bash", *(str(t["name"]) for t in READ_TOOLS)}
        return request.role in TERMINALS and bool(calls) and {c["name"] for c in calls} <= looking
    if behaviour == "odd_shapes":
        names = [c["name"] for c in calls]
        return names == ["report_verdicts"] or (
            names == ["report_findings"] and bool(calls[0]["input"].get("findings"))
        )
    return True


def _empty(reply: Reply, request: ModelRequest) -> Reply:
    return Reply.empty()


def _refusal(reply: Reply, request: ModelRequest) -> Reply:
    return Reply.refusal()


def _cut_off(reply: Reply, request: ModelRequest) -> Reply:
    *before, last = reply.blocks
    cut = {**last, "cut_off": True}
    return Reply([*before, cut], "max_tokens")


def _bundled_report(reply: Reply, request: ModelRequest) -> Reply:
    """The calls that look (bash, or the read-only tools) and, in the same turn, a report
    made before reading their results."""
    if request.role == "subagent":
        premature: dict[str, Any] = {"summary": "nothing found", "findings": []}
    else:
        premature = {
            "verdicts": [
                {"finding": f["finding"], "verdict": "refuted", "reason": "unread", "evidence": "-"}
                for f in findings_in_task(request.first_user_text)
            ]
        }
    return Reply(
        [*reply.blocks, {"type": "tool_use", "name": TERMINALS[request.role], "input": premature}]
    )


def _odd_shapes(reply: Reply, request: ModelRequest) -> Reply:
    (call,) = _calls(reply)
    tool_input = dict(call["input"])
    if call["name"] == "report_findings":
        spellings = ("./{}", "sub/../{}", ".//{}")
        tool_input["findings"] = [
            {
                **f,
                "path": spellings[i % len(spellings)].format(f["path"]),
                "severity": SEVERITY_SYNONYMS[f["severity"]],
                "start_line": str(f["start_line"]),
                "end_line": str(f["end_line"]),
            }
            for i, f in enumerate(tool_input["findings"])
        ]
    else:  # numbers as strings, and a verdict for a finding nobody reported
        verdicts = [{**v, "finding": str(v["finding"])} for v in tool_input["verdicts"]]
        extra = {**verdicts[0], "finding": len(verdicts) + 1} if verdicts else None
        tool_input["verdicts"] = verdicts + ([extra] if extra else [])
    return Reply([{"type": "tool_use", "name": call["name"], "input": tool_input}])


_PERTURB: dict[str, Callable[[Reply, ModelRequest], Reply]] = {
    "empty": _empty,
    "refusal": _refusal,
    "cut_off": _cut_off,
    "bundled_report": _bundled_report,
    "odd_shapes": _odd_shapes,
}
