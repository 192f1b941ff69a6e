"""A scripted prover for the fake Messages API, in front of a :class:`~tests.scripted.ReviewScript`.

The prover reads the cited lines first (bash, or `read_file` without a shell), as a model
would, then reports the test the script gives for the finding's claim. A claim without a test
gets no report at all (the prover ends with text).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tests.fakes.messages_api import ModelRequest, Reply
from tests.scripted import ReviewScript, read_lines


@dataclass(frozen=True)
class ProofTest:
    """The test a prover answers with for findings of one claim."""

    path: str
    code: str
    command: str = ""


@dataclass
class ProverScript:
    """Routes prover requests to ``tests`` (by a word of the finding's claim), the rest to
    ``review``; ``first_look`` replaces the prover's first command (bash) when set."""

    review: ReviewScript
    tests: Mapping[str, ProofTest]
    first_look: Callable[[dict[str, object]], str] | None = None
    looked: list[str] = field(default_factory=list)  # what the prover's first look printed

    def __call__(self, request: ModelRequest) -> Reply:
        if request.role != "prover":
            return self.review(request)
        task = request.first_user_text
        finding = json.loads(task.split("<finding>", 1)[1].split("</finding>", 1)[0])
        if request.assistant_turns == 0:
            if request.has_tool("bash") and self.first_look is not None:
                return Reply.tool_use("bash", {"command": self.first_look(finding)})
            start, end = finding["lines"]
            calls = read_lines(request, finding["path"], start, end)
            return Reply.tool_uses(calls)
        self.looked.extend(request.tool_result_texts())
        test = next((t for word, t in self.tests.items() if word in finding["claim"]), None)
        if test is None:
            return Reply.text("No test can show this.")
        command = test.command or f"python3 -m unittest -v {test.path}"
        return Reply.tool_use(
            "report_proof", {"test_path": test.path, "test_code": test.code, "command": command}
        )
