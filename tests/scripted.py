"""A scripted review for the fake Messages API: main agent, subagents and verifiers.

The "models" here really use the tools: the main agent scouts with bash and calls Workflow;
each subagent runs a bash command in the repository and reports findings located by what the
command printed; each verifier reads the cited lines with bash and decides from their text.
Where agents get no shell (``--sandbox tools``) they do the same with the read-only tools
offered instead: a concern's grep becomes a `search`, the verifier's `sed -n` a `read_file`.
They send every optional field the tools accept (a suggested fix, a verdict's confidence and
evidence, its judgement of a proposed fix), so what a real model may send is carried end to end.
Write a new review in a few lines::

    script = ReviewScript([
        Concern("sql", "Check app.py for SQL injection", "grep -n 'execute(f' app.py",
                severity="high", category="security", claim="query built with an f-string"),
    ])
    fake_api.policy = script
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.messages_api import ModelRequest, Reply

GREP_LINE = re.compile(r"^(?:(?P<path>[^:\n]+):)?(?P<line>\d+):(?P<text>.*)$", re.MULTILINE)

# A verifier rule: (finding as listed, output of its bash command) -> (confirmed, reason)
VerdictRule = Callable[[dict[str, Any], str], tuple[bool, str]]


def confirm(_: dict[str, Any], output: str) -> tuple[bool, str]:
    """Confirm whatever the verifier read."""
    return True, f"re-read the lines and the problem holds: {output.strip()[:80]}"


def refute(_: dict[str, Any], output: str) -> tuple[bool, str]:
    """Refute whatever the verifier read."""
    return False, f"the cited code is guarded: {output.strip()[:80]}"


def approve_fix(finding: dict[str, Any], _: str) -> tuple[bool, str]:
    """Approve the fix proposed with a finding."""
    return True, f"the new text of lines {finding['lines'][0]}-{finding['lines'][1]} fixes it"


def reject_fix(_: dict[str, Any], __: str) -> tuple[bool, str]:
    """Reject the fix proposed with a finding."""
    return False, "the proposed text does more than the fix: it adds a call the code never made"


@dataclass
class Concern:
    """One concern of the script: how the subagent finds it and how the verifier judges it."""

    key: str  # a word that appears in the subtask text and nowhere in other subtasks
    subtask: str
    command: str  # bash the subagent runs; `path:line:text` or `line:text` lines become findings
    path: str | None = None  # when the command prints `line:text` only
    severity: str = "high"
    category: str = "correctness"
    claim: str = "a defect"
    verdict: VerdictRule = confirm
    suggestion: str = "Fix the flagged lines."  # sent with every finding
    confidence: str = "high"  # the verifier's confidence in each of its verdicts
    # The new text of a flagged line, from its text as the command printed it; sent as the
    # finding's `replacement`, in the shapes a real model varies between (with or without
    # a final newline, CRLF line ends).
    replacement: Callable[[str], str] | None = None
    span: int = 1  # lines each finding covers, from the line the command printed
    # How the verifier judges a finding's proposed fix (the same rule shape as `verdict`).
    fix: VerdictRule = approve_fix
    # Text whose lines are the findings when the task shows `path` (engine.agents.inlined_files):
    # the subagent then reports from what it was shown, without the bash turn.
    pattern: str | None = None
    # The `search` input that finds what `command` does, for agents without a shell
    # (default: derived from a `grep -n PATTERN FILE...` command).
    search: dict[str, Any] | None = None

    def look(self, request: ModelRequest) -> tuple[str, Mapping[str, Any]]:
        """The tool call that runs this concern's check with what ``request`` offers."""
        if request.has_tool("bash"):
            return "bash", {"command": self.command}
        return "search", self.search or search_for(self.command)


def search_for(command: str) -> dict[str, Any]:
    """The `search` input doing what ``grep -n PATTERN FILE`` does (the pattern as text)."""
    words = shlex.split(command)
    if words[:2] != ["grep", "-n"] or len(words) < 3:
        raise AssertionError(f"no read-only equivalent of `{command}`: give the concern a search")
    found: dict[str, Any] = {"pattern": words[2], "fixed_string": True}
    if len(words) == 4:
        found["path"] = words[3]
    return found


def scout(request: ModelRequest, command: str) -> tuple[str, Mapping[str, Any]]:
    """The main agent's (or the critic's) first look: ``command``, or the file listing."""
    return ("bash", {"command": command}) if request.has_tool("bash") else ("list_files", {})


def read_lines(request: ModelRequest, path: str, start: int, end: int) -> list[tuple[str, Any]]:
    """The calls a verifier reads lines ``start``..``end`` of ``path`` with."""
    if request.has_tool("bash"):
        return [("bash", {"command": f"sed -n '{start},{end}p' {path}"})]
    return [("read_file", {"path": path, "start_line": start, "end_line": end})]


@dataclass
class ReviewScript:
    """A policy: route by role, answer by conversation state."""

    concerns: list[Concern]
    scout: str = "git ls-files"
    summary: str = "Reviewed the repository; see the verified findings."
    subtasks: list[str] | None = None  # what the main agent sends (default: every subtask)
    critic_concerns: list[str] = field(default_factory=list)  # what the critic proposes
    seen_mode_messages: list[list[str]] = field(default_factory=list)

    def __call__(self, request: ModelRequest) -> Reply:
        if request.has_tool("report_concerns"):
            if request.assistant_turns == 0:
                return Reply.tool_use(*scout(request, "git ls-files"))
            return Reply.tool_use("report_concerns", {"concerns": self.critic_concerns})
        if request.role == "main":
            return self._main(request)
        if request.role == "subagent":
            return self._subagent(request)
        if request.role == "verifier":
            return self._verifier(request)
        if request.role == "prover":
            # A review whose script writes no tests (see tests/scripted_prover.py): its prover
            # declines, and the finding stays verified by reading.
            return Reply.text("No test can show this finding.")
        raise AssertionError(f"unexpected request with tools {sorted(request.tool_names)}")

    def _main(self, request: ModelRequest) -> Reply:
        turn = request.assistant_turns
        if turn == 0:
            return Reply.tool_use(*scout(request, self.scout), text="Scouting first.")
        if turn == 1:
            subtasks = (
                self.subtasks if self.subtasks is not None else [c.subtask for c in self.concerns]
            )
            return Reply.tool_use("Workflow", {"subtasks": subtasks})
        return Reply.text(self.summary)

    def concern_for(self, request: ModelRequest) -> Concern:
        """The concern a subagent or verifier request is about (for a verifier of a sweep's
        findings, the concern whose claim they make)."""
        task = request.first_user_text
        if is_intent(task):  # orch-review's own intent concern: the script's `intent` ones
            intent = self.intent_concern(task)
            if intent is None:
                raise AssertionError("no scripted intent concern for this intent check")
            return intent
        subtask = subtask_text(task)  # not the files shown after it
        for concern in self.concerns:
            if concern.key in subtask:
                return concern
        for concern in self.concerns:
            if is_sweep(task) and concern.claim in task:
                return concern
        raise AssertionError(f"no scripted concern matches task: {task[:200]}")

    def intent_concern(self, task: str) -> Concern | None:
        """The scripted concern (category ``intent``) for an intent check, if any."""
        return next((c for c in self.concerns if c.category == "intent"), None)

    def _subagent(self, request: ModelRequest) -> Reply:
        task = request.first_user_text
        if is_intent(task) and self.intent_concern(task) is None:
            # The change does what it says: nothing to report.
            summary = "compared the change with its description: it does what it says"
            return Reply.tool_use("report_findings", {"summary": summary, "findings": []})
        if is_sweep(task):
            # A diligent sweep: it runs the check of every scripted concern about its files.
            files = sweep_files(task)
            due = [c for c in self.concerns if any(f in c.command for f in files)]
            if due and request.assistant_turns == 0:
                return Reply.tool_uses([c.look(request) for c in due])
            outputs = request.tool_result_texts()[-len(due) :] if due else []
            if due and (len(outputs) < len(due) or any(_not_run(out) for out in outputs)):
                # Its calls were cut off and not run: it asks again, as a model would.
                return Reply.tool_uses([c.look(request) for c in due])
            findings = [f for c, out in zip(due, outputs, strict=True) for f in _found(c, out)]
            summary = "swept: " + ("see findings" if findings else "nothing found")
            return Reply.tool_use("report_findings", {"summary": summary, "findings": findings})
        concern = self.concern_for(request)
        if request.assistant_turns == 0:
            seen = _seen_lines(concern, task)
            if seen is not None:
                found = _found(concern, seen)
                return Reply.tool_use("report_findings", {"summary": "read", "findings": found})
            return Reply.tool_use(*concern.look(request))
        output = request.tool_result_texts()[0]
        return Reply.tool_use(
            "report_findings",
            {"summary": f"ran {concern.command}", "findings": _found(concern, output)},
        )

    def _verifier(self, request: ModelRequest) -> Reply:
        concern = self.concern_for(request)
        listed = findings_in_task(request.first_user_text)
        if request.assistant_turns == 0:
            if request.has_tool("bash"):
                commands = [
                    f"sed -n '{max(f['lines'][0] - 2, 1)},{f['lines'][1]}p' {f['path']}"
                    for f in listed
                ]
                return Reply.tool_use("bash", {"command": " && echo --- && ".join(commands)})
            return Reply.tool_uses(
                call
                for f in listed
                for call in read_lines(request, f["path"], max(f["lines"][0] - 2, 1), f["lines"][1])
            )
        output = "\n---\n".join(request.tool_result_texts())
        verdicts = []
        for finding in listed:
            # A sweep's verifier sees findings of several concerns: each is judged by its own.
            own = concern
            if concern.claim != finding.get("claim"):
                own = next((c for c in self.concerns if c.claim == finding.get("claim")), concern)
            confirmed, reason = own.verdict(finding, output)
            verdicts.append(
                {
                    "finding": finding["finding"],
                    "verdict": "confirmed" if confirmed else "refuted",
                    "confidence": own.confidence,
                    "reason": reason,
                    "evidence": output.strip()[:200],
                }
            )
            if "proposed_fix" in finding:
                shape = finding["finding"] + finding["lines"][0]
                verdicts[-1].update(_fix_judgement(own.fix(finding, output), shape))
        return Reply.tool_use("report_verdicts", {"verdicts": verdicts})


def _seen_lines(concern: Concern, task: str) -> str | None:
    """``line:text`` of each line of the concern's file holding its pattern, when the task
    shows that file; None when it does not (the subagent then runs its command)."""
    if concern.pattern is None or concern.path is None:
        return None
    lines = shown_files(task).get(concern.path)
    if lines is None:
        return None
    return "".join(f"{n}:{text}\n" for n, text in enumerate(lines, 1) if concern.pattern in text)


_SHOWN = re.compile(
    r'^<file path=(?P<path>"(?:[^"\\]|\\.)*")(?: hunks="[^"]*")?>\n(?P<body>.*?)^</file>$',
    re.M | re.S,
)


def shown_files(task: str) -> dict[str, list[str]]:
    """The files a subagent's task shows (``engine.agents.inlined_files``): path -> its lines."""
    files = {}
    for match in _SHOWN.finditer(task):
        body = match.group("body").splitlines()
        files[json.loads(match.group("path"))] = [line.split("\t", 1)[1] for line in body]
    return files


def subtask_text(task: str) -> str:
    """What an agent's task holds between ``<subtask>`` and ``</subtask>``."""
    return task.split("<subtask>", 1)[-1].split("</subtask>", 1)[0]


def _found(concern: Concern, output: str) -> list[dict[str, Any]]:
    """The findings a concern's command output shows, one per `path:line:text` line."""
    findings = []
    for match in GREP_LINE.finditer(output):
        path = match.group("path") or concern.path
        line = int(match.group("line"))
        findings.append(
            {
                "path": path,
                "start_line": line,
                "end_line": line + concern.span - 1,
                "severity": concern.severity,
                "category": concern.category,
                "claim": concern.claim,
                "evidence": f"{path}:{line}: {match.group('text').strip()}",
                "suggestion": concern.suggestion,
            }
        )
        if concern.replacement is not None:
            findings[-1]["replacement"] = _shaped(concern.replacement(match.group("text")), line)
    return findings


def _fix_judgement(judged: tuple[bool, str], shape: int) -> dict[str, Any]:
    """``fix_ok`` and ``fix_reason`` in the shapes models send them, varied by ``shape``:
    a boolean with a reason, or the boolean as a string ("True", "false") without one."""
    ok, reason = judged
    if shape % 2:
        return {"fix_ok": ok, "fix_reason": reason}
    return {"fix_ok": str(ok) if shape % 4 == 0 else str(ok).lower()}


def _shaped(text: str, line: int) -> str:
    """``text`` as one of the shapes models send a replacement in, varied by ``line``."""
    shape = line % 3
    if shape == 1:
        return text + "\n"
    if shape == 2:
        return text.replace("\n", "\r\n") + "\r\n"
    return text


SWEEP_MARK = "Sweep review of "


def _not_run(output: str) -> bool:
    """A tool result saying the call was cut off at the output token limit and not run."""
    return "cut off at the output token limit" in output


INTENT_MARK = "Intent check: does the change do what "


def is_intent(task: str) -> bool:
    """Whether an agent's task is about orch-review's own intent concern."""
    return INTENT_MARK in task


def is_sweep(task: str) -> bool:
    """Whether a subagent's task is one of orch-review's own coverage sweeps."""
    return SWEEP_MARK in task


def sweep_files(task: str) -> list[str]:
    """The files a sweep task lists, one per `- path (...)` line."""
    body = subtask_text(task)
    return [line[2:].rsplit(" (", 1)[0] for line in body.splitlines() if line.startswith("- ")]


def findings_in_task(task: str) -> list[dict[str, Any]]:
    """The numbered findings listed in a verifier's task."""
    block = task.split("<findings>", 1)[1].split("</findings>", 1)[0]
    listed: list[dict[str, Any]] = json.loads(block)
    return listed


PLANTED_FILES = {
    "app.py": (
        "import sqlite3\n"
        "\n"
        "\n"
        "def find_user(db: sqlite3.Connection, name: str):\n"
        "    cursor = db.cursor()\n"
        "    cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")\n"
        "    return cursor.fetchone()\n"
    ),
    "calc.py": (
        "def ratio(total: int, count: int) -> float:\n"
        "    if count == 0:\n"
        "        return 0.0\n"
        "    return total / count\n"
    ),
    "README.md": "# demo\n",
}


#: The planted SQL injection in app.py, found and confirmed.
PLANTED_INJECTION = Concern(
    "injection",
    "Check app.py for SQL injection: find queries built from user input.",
    "grep -n 'execute(f' app.py",
    path="app.py",
    severity="high",
    category="security",
    claim="SQL query built with an f-string from the caller's `name`: injection.",
    verdict=confirm,
    suggestion="Pass `name` as a query parameter: `execute('... WHERE name = ?', (name,))`.",
)


def planted_script(**kwargs: Any) -> ReviewScript:
    """The standard planted-bug review: SQL injection confirmed, division refuted."""
    return ReviewScript(
        [
            PLANTED_INJECTION,
            Concern(
                "division",
                "Check calc.py for division by zero in ratio().",
                "grep -n ' / ' calc.py",
                path="calc.py",
                severity="medium",
                category="correctness",
                claim="ratio() divides by count, which may be zero.",
                verdict=refute,
                suggestion="Return early when `count` is zero.",
                confidence="low",
            ),
        ],
        **kwargs,
    )
