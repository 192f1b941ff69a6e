"""A scripted model for coverage tests: it asks for one subtask per changed file.

The main agent scouts with `git diff --name-only`, then calls Workflow once with one subtask
per changed file (worded by ``wording``) and never calls it again, whatever it is told.
Subagents grep the files their task names for the marker ``BUG`` and report each hit;
verifiers re-read the cited lines and confirm a finding when the marker is there. Offered
the read-only tools instead of bash, they do the same with git_diff, search and read_file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.fakes.messages_api import ModelRequest, Reply
from tests.scripted import GREP_LINE, findings_in_task, is_sweep, read_lines, sweep_files

MARKER = "BUG"
_NAMED = re.compile(r"`([^`\s]+)`")


def per_file(path: str, run: int) -> str:
    """The default wording: the same every run."""
    return f"Review `{path}` for defects."


@dataclass
class OneSubtaskPerFile:
    """The policy; ``run`` changes the wording on every review when ``wording`` uses it."""

    base: str  # the commit the change is compared with
    wording: Callable[[str, int], str] = per_file
    run: int = 0
    summary: str = "Reviewed every changed file."
    workflow: bool = True  # False: the model decides nothing needs a fan-out
    extra_subtasks: list[str] = field(default_factory=list)  # sent along with the per-file ones
    subagent_tasks: list[str] = field(default_factory=list)

    def __call__(self, request: ModelRequest) -> Reply:
        if request.role == "main":
            return self._main(request)
        if request.role == "subagent":
            return self._subagent(request)
        if request.role == "verifier":
            return self._verifier(request)
        raise AssertionError(f"unexpected request with tools {sorted(request.tool_names)}")

    def _main(self, request: ModelRequest) -> Reply:
        shell = request.has_tool("bash")
        if request.assistant_turns == 0:
            if not shell:
                listing = {"from": self.base, "to": "HEAD", "stat": True}
                return Reply.tool_use("git_diff", listing, text="Listing the change.")
            command = f"git diff --name-only {self.base} HEAD"
            return Reply.tool_use("bash", {"command": command}, text="Listing the change.")
        if request.assistant_turns == 1 and self.workflow:
            listed = request.tool_result_texts()[0]
            names = listed.split() if shell else _stat_names(listed)
            subtasks = [self.wording(name, self.run) for name in names if "." in name]
            subtasks += self.extra_subtasks
            return Reply.tool_use("Workflow", {"subtasks": subtasks})
        return Reply.text(self.summary)

    def _subagent(self, request: ModelRequest) -> Reply:
        task = request.first_user_text
        if request.assistant_turns == 0:
            self.subagent_tasks.append(task)
            files = sweep_files(task) if is_sweep(task) else _NAMED.findall(task)
            if not request.has_tool("bash"):
                search = {"pattern": MARKER, "fixed_string": True}
                return Reply.tool_uses(("search", {**search, "path": f}) for f in files)
            command = f"grep -n {MARKER} -- {' '.join(files)} /dev/null || true"
            return Reply.tool_use("bash", {"command": command})
        findings = [
            {
                "path": match.group("path"),
                "start_line": int(match.group("line")),
                "end_line": int(match.group("line")),
                "severity": "high",
                "category": "correctness",
                "claim": "a planted defect",
                "evidence": match.group(0),
            }
            for output in request.tool_result_texts()
            for match in GREP_LINE.finditer(output)
            if match.group("path")
        ]
        return Reply.tool_use("report_findings", {"summary": "grepped", "findings": findings})

    def _verifier(self, request: ModelRequest) -> Reply:
        listed = findings_in_task(request.first_user_text)
        if request.assistant_turns == 0:
            if not request.has_tool("bash"):
                return Reply.tool_uses(
                    call
                    for f in listed
                    for call in read_lines(request, f["path"], f["lines"][0], f["lines"][0])
                )
            commands = [f"sed -n '{f['lines'][0]}p' {f['path']}" for f in listed]
            return Reply.tool_use("bash", {"command": " && echo --- && ".join(commands)})
        output = "\n".join(request.tool_result_texts())
        verdicts = [
            {
                "finding": f["finding"],
                "verdict": "confirmed" if MARKER in output else "refuted",
                "reason": "the marker is on the cited line",
                "evidence": output.strip()[:200],
            }
            for f in listed
        ]
        return Reply.tool_use("report_verdicts", {"verdicts": verdicts})


def _stat_names(stat: str) -> list[str]:
    """The file names of a `git diff --stat` (` name | 3 +-` lines)."""
    return [line.split("|", 1)[0].strip() for line in stat.splitlines() if "|" in line]
