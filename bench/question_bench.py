"""Messages API requests for one follow-up question about a finding, against the fake API.

Usage: python -m bench.question_bench [--json FILE]

The planted repository (``tests.helpers.PLANTED_FILES``) is reviewed (``orch-review --all``,
the planted-bug script), then asked "why is this a problem?" about its confirmed finding
through ``orch-review ask``: the follow-up a question in a finding's pull request thread takes
too (the review's conversation continued with orchestration mode off; the GitHub wiring is
tested in tests/hosts/github/test_comment_run.py). Two models answer: one that answers at once, and
one that first calls Workflow (as a model that fans out to answer a question does), then
checks with bash, then answers. Goal: at most 3 requests per question, no subagent.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.figures import Figure, write_figures
from tests.fakes.messages_api import FakeMessagesAPI, ModelRequest, Reply
from tests.scripted import PLANTED_FILES, planted_script

CLI = (sys.executable, "-m", "orch_review")
QUESTION = "@orch-review why is this a problem? (the SQL query built with an f-string in app.py)"
GOAL = 3


def _answers_at_once() -> Callable[[ModelRequest], Reply]:
    return lambda request: Reply.text("The name reaches the SQL text unescaped.")


def _fans_out_first() -> Callable[[ModelRequest], Reply]:
    seen: list[ModelRequest] = []

    def policy(request: ModelRequest) -> Reply:
        seen.append(request)
        if request.role != "main":
            return Reply.text("a subagent ran")  # counted: it should never be asked
        if len(seen) == 1:
            return Reply.tool_use("Workflow", {"subtasks": ["Review app.py again."]})
        if len(seen) == 2:
            return Reply.tool_use("bash", {"command": "grep -n execute app.py"})
        return Reply.text("The query is built from the name: see the f-string.")

    return policy


def _repo(root: Path, env: dict[str, str]) -> Path:
    repo = root / "repo"
    for path, text in PLANTED_FILES.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "planted"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return repo


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here for run_all")
    args = parser.parse_args(argv)
    figures = []
    print("| model | requests | by role | answered |")
    print("|---|---:|---|---|")
    for name, make in (("answers at once", _answers_at_once), ("fans out first", _fans_out_first)):
        with tempfile.TemporaryDirectory(prefix="orch-review-question-bench-") as tmp:
            home = Path(tmp) / "home"
            home.mkdir()
            with FakeMessagesAPI(planted_script()) as api:
                env = {
                    **{k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
                    "ANTHROPIC_BASE_URL": api.base_url,
                    "ORCH_REVIEW_PROVE": "off",  # these figures are of reviews without proofs
                    "ANTHROPIC_API_KEY": "bench",
                    "HOME": str(home),
                    "GIT_AUTHOR_NAME": "bench",
                    "GIT_AUTHOR_EMAIL": "bench@orch-review.invalid",
                    "GIT_COMMITTER_NAME": "bench",
                    "GIT_COMMITTER_EMAIL": "bench@orch-review.invalid",
                    "NO_COLOR": "1",
                }
                repo = _repo(Path(tmp), env)
                subprocess.run(
                    [*CLI, "--all", "--no-progress"],
                    cwd=repo,
                    env=env,
                    check=False,
                    capture_output=True,
                    timeout=600,
                )
                api.reset()
                api.policy = make()
                done = subprocess.run(
                    [*CLI, "ask", QUESTION],
                    cwd=repo,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                roles = [r.model_request().role for r in api.message_requests]
        count = len(roles)
        by_role = ", ".join(f"{r} {roles.count(r)}" for r in sorted(set(roles)))
        answered = done.returncode == 0 and (
            "unescaped" in done.stdout or "f-string" in done.stdout
        )
        print(f"| {name} | {count} | {by_role} | {'yes' if answered else 'no'} |", flush=True)
        figures.append(
            Figure(
                "question",
                f"Messages API requests for a question about a finding ({name})",
                str(count),
                f"<= {GOAL}",
                count <= GOAL and set(roles) <= {"main"} and answered,
            )
        )
    write_figures(args.json, figures)


if __name__ == "__main__":
    main()
