"""Tool definitions offered to the agents, and validation of what they send back.

The definitions are constants so that the cached prompt prefix (tools + system) is
byte-identical across turns and across agents of one role.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from orch_review.config.choices import CATEGORIES
from orch_review.engine.agents.prompts import without_shell
from orch_review.findings.provenance import confined_path
from orch_review.findings.records import Finding, Severity, Verdict

# Bump when a schema or a system prompt changes: it is part of every journal key.
TOOLS_VERSION = "2026-12-02.1"


OTHER_CATEGORY = "other"  # what any category outside CATEGORIES becomes
SEVERITY_SYNONYMS = {
    "critical": "high",
    "blocker": "high",
    "severe": "high",
    "major": "medium",
    "moderate": "medium",
    "minor": "low",
    "trivial": "low",
    "note": "info",
    "informational": "info",
    "information": "info",
}

WORKFLOW_DESCRIPTION = """\
Run a review workflow: fan a list of independent subtasks out to parallel subagents, then have \
a second wave of verifier agents try to refute every finding. You receive only what survives.

When to use it. Only when the user asks for orchestration or a system message says orchestration \
mode is on. While the mode is on you have standing consent: for every substantive task, author \
and run a workflow without asking first. Work solo only on conversational or trivial turns.

How to split the work. One subtask per distinct concern, component or question: not one per line, \
hunk or file section. A focused review of a few hundred lines rarely needs more than about ten \
subtasks; a large change may need more. Scout first with bash to find the real work-list (which \
files changed, what they do, where the risk is), then fan out over it.

How to write a subtask. Each subagent starts with no memory of this conversation. Make every \
subtask self-contained: name the files (repository-relative paths) and line ranges, say what to \
check and why it is a risk, and mention what you already learned that saves it time. Each \
subagent has bash in the repository and must report findings with exact locations.

Quality patterns you can rely on: every finding is attacked by an independent verifier that \
defaults to refuting it, so ask for depth rather than hedging. If a first workflow leaves \
obvious gaps (a component nobody looked at, a class of bug nobody checked), run a follow-up \
workflow for just those gaps; phase work by calling the tool again with subtasks that build on \
the previous results.

Phases. Instead of `subtasks` you may send `phases`: named phases, each with its subtasks and \
optionally `depends_on` (names of earlier phases). Phases run in order; every subtask of a \
phase receives the verified results of the phases it depends on (all earlier ones when it \
names none). A common shape is "understand" (map the components and their contracts) then \
"review" (one subtask per concern, informed by the map); verification always follows \
automatically. Plans are validated: unique names, known dependencies, no cycles.

Limits: at most {max_subtasks} subtasks per call (extra ones are dropped with a note; queue them \
in a follow-up call); agents take turns so that at most {max_concurrent} model requests are in \
flight at once."""


def workflow_tool(max_subtasks: int, max_concurrent: int, shell: bool = True) -> dict[str, Any]:
    """The Workflow tool definition with the configured limits in its contract."""
    return described(_workflow_tool(max_subtasks, max_concurrent), shell)


def _workflow_tool(max_subtasks: int, max_concurrent: int) -> dict[str, Any]:
    return {
        "name": "Workflow",
        "description": WORKFLOW_DESCRIPTION.format(
            max_subtasks=max_subtasks, max_concurrent=max_concurrent
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "subtasks": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "One self-contained instruction per concern.",
                },
                "phases": {
                    "type": "array",
                    "description": "Instead of subtasks: named phases run in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "subtasks": {"type": "array", "items": {"type": "string"}},
                            "depends_on": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["name", "subtasks"],
                    },
                },
            },
        },
    }


REPORT_FINDINGS_TOOL: dict[str, Any] = {
    "name": "report_findings",
    "description": (
        "Report the result of your subtask. Call it exactly once, at the end, with every problem "
        "you confirmed with bash (an empty list when you found none). Each finding needs an exact "
        "location in the repository and evidence a person can check: the file:line you read or "
        "the command output that shows the problem."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "summary": {
                "type": "string",
                "description": "What you checked and how, in a few sentences.",
            },
            "findings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string",
                            "description": "Repository-relative path of the file.",
                        },
                        "start_line": {"type": "integer", "minimum": 1},
                        "end_line": {"type": "integer", "minimum": 1},
                        "severity": {"type": "string", "enum": [s.value for s in Severity]},
                        "category": {"type": "string", "enum": [*CATEGORIES, OTHER_CATEGORY]},
                        "claim": {
                            "type": "string",
                            "description": "The problem, in one or two sentences.",
                        },
                        "evidence": {
                            "type": "string",
                            "description": "file:line quotes or command output proving it.",
                        },
                        "suggestion": {
                            "type": "string",
                            "description": "Optional: how to fix it.",
                        },
                        "replacement": {
                            "type": "string",
                            "description": (
                                "Optional: the complete new text of lines start_line.."
                                "end_line, exactly as they should read after the fix "
                                "(indentation included, no line numbers, no diff markers). "
                                "Give it only for a small, self-contained fix of those "
                                "lines; it is offered as a committable suggestion only "
                                "after it is checked."
                            ),
                        },
                    },
                    "required": [
                        "path",
                        "start_line",
                        "end_line",
                        "severity",
                        "category",
                        "claim",
                        "evidence",
                    ],
                },
            },
        },
        "required": ["summary", "findings"],
    },
}

REPORT_VERDICTS_TOOL: dict[str, Any] = {
    "name": "report_verdicts",
    "description": (
        "Report your verdict on every finding you were given, exactly once, at the end. "
        "`confirmed` only if you re-derived the problem yourself; otherwise `refuted`. For a "
        "finding that comes with a proposed fix, also judge the fix: `fix_ok` true only if it "
        "fixes the problem, changes nothing else and introduces no new problem."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "finding": {
                            "type": "integer",
                            "minimum": 1,
                            "description": "The finding's number as listed in your task.",
                        },
                        "verdict": {"type": "string", "enum": ["confirmed", "refuted"]},
                        "confidence": {
                            "type": "string",
                            "enum": ["high", "medium", "low"],
                            "description": "How sure you are of this verdict.",
                        },
                        "reason": {
                            "type": "string",
                            "description": "Why, in one or two sentences.",
                        },
                        "evidence": {
                            "type": "string",
                            "description": "The file:line or command output that decided.",
                        },
                        "fix_ok": {
                            "type": "boolean",
                            "description": (
                                "Only for a finding with a proposed fix: true if the fix "
                                "resolves the problem, changes nothing else and adds no new "
                                "problem or behaviour; false otherwise or when unsure."
                            ),
                        },
                        "fix_reason": {
                            "type": "string",
                            "description": "Why you approved or rejected the proposed fix.",
                        },
                    },
                    "required": ["finding", "verdict", "reason", "evidence"],
                },
            }
        },
        "required": ["verdicts"],
    },
}


REPORT_CONCERNS_TOOL: dict[str, Any] = {
    "name": "report_concerns",
    "description": (
        "Report the concerns nobody covered, exactly once, at the end: each a self-contained "
        "instruction for a new reviewer (files, what to check, why). An empty list means "
        "coverage is complete."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "concerns": {"type": "array", "items": {"type": "string"}},
            "reason": {"type": "string", "description": "Why these were missed, briefly."},
        },
        "required": ["concerns"],
    },
}


MAX_REPLACEMENT_CHARS = 20_000
MAX_REPLACEMENT_LINES = 400


class ToolInputError(ValueError):
    """The model sent a tool input we cannot use; the message goes back to it."""


@dataclass(frozen=True, slots=True)
class ReportedFindings:
    """A validated ``report_findings`` call."""

    summary: str
    findings: tuple[Finding, ...]


def _text(item: Mapping[str, Any], key: str, *, required: bool = True) -> str:
    value = item.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ToolInputError(f"`{key}` is required and must be a non-empty string")
        return ""
    if not isinstance(value, str):
        raise ToolInputError(f"`{key}` must be a string")
    return value.strip()


def _line(item: Mapping[str, Any], key: str, what: str = "line number") -> int:
    value = item.get(key)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ToolInputError(f"`{key}` must be a positive {what}")
    return value


def canonical_path(raw: str) -> str:
    """A repository-relative path in one spelling (``a/./b``, ``a//b`` and ``a/x/../b`` are
    ``a/b``); raises :class:`ToolInputError` for a path outside the tree or into ``.git``."""
    try:
        return confined_path(raw)
    except ValueError as exc:
        raise ToolInputError(str(exc)) from None


def _severity(item: Mapping[str, Any]) -> Severity:
    given = _text(item, "severity").lower()
    severity = SEVERITY_SYNONYMS.get(given, given)
    if severity not in {s.value for s in Severity}:
        raise ToolInputError(f"`severity` must be one of high, medium, low, info, not `{given}`")
    return Severity(severity)


def _category(item: Mapping[str, Any]) -> str:
    given = _text(item, "category", required=False).lower().replace("_", "-").replace(" ", "-")
    return given if given in CATEGORIES else OTHER_CATEGORY


def _replacement(item: Mapping[str, Any], start: int, end: int, lines: int) -> str | None:
    """The ``replacement`` of a finding, without its final newline; None when absent."""
    value = item.get("replacement")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolInputError("`replacement` must be a string: the new text of the lines")
    if "\0" in value:
        raise ToolInputError("`replacement` must not contain NUL bytes")
    if len(value) > MAX_REPLACEMENT_CHARS:
        raise ToolInputError(
            f"`replacement` is {len(value):,} characters; a suggested replacement may have "
            f"at most {MAX_REPLACEMENT_CHARS:,}: leave it out and describe the fix instead"
        )
    text = value.replace("\r\n", "\n")
    if "\r" in text:
        raise ToolInputError("`replacement` must use newlines, not bare carriage returns")
    text = text.removesuffix("\n")
    if text.count("\n") >= MAX_REPLACEMENT_LINES:
        raise ToolInputError(
            f"`replacement` may have at most {MAX_REPLACEMENT_LINES} lines; leave it out and "
            "describe the fix instead"
        )
    if end > lines:
        raise ToolInputError(
            f"`replacement` replaces lines {start}-{end}, but the file has {lines} lines"
        )
    return text


def parse_findings(
    tool_input: Mapping[str, Any],
    concern: str,
    line_count: Callable[[str], int | None],
    canonical: Callable[[str], str] = str,
) -> ReportedFindings:
    """Validate a ``report_findings`` input; ``line_count(path)`` is None for unknown files;
    ``canonical`` maps a name as the model saw it (git's quoted form) to the file's path.

    Unambiguous variants are normalized (path spellings, line numbers as strings, severity
    synonyms); a category outside :data:`CATEGORIES` becomes ``other``.
    """
    raw = tool_input.get("findings")
    if not isinstance(raw, list):
        raise ToolInputError("`findings` must be an array (use [] when you found nothing)")
    findings = []
    for number, item in enumerate(raw, 1):
        if not isinstance(item, Mapping):
            raise ToolInputError(f"finding {number}: must be an object")
        try:
            path = canonical(canonical_path(_text(item, "path")))
            start, end = _line(item, "start_line"), _line(item, "end_line")
            severity = _severity(item)
            lines = line_count(path)
            if lines is None:
                raise ToolInputError(
                    f"`{path}` is not a file under review; use a repository-relative path"
                )
            if end < start:
                start, end = end, start
            if start > max(lines, 1):
                raise ToolInputError(f"`{path}` has {lines} lines; line {start} does not exist")
            replacement = _replacement(item, start, end, lines)
            findings.append(
                Finding(
                    path=path,
                    start_line=start,
                    end_line=min(end, max(lines, 1)),
                    severity=severity,
                    category=_category(item),
                    claim=_text(item, "claim"),
                    evidence=_text(item, "evidence"),
                    suggestion=_text(item, "suggestion", required=False) or None,
                    concern=concern,
                    replacement=replacement,
                )
            )
        except ToolInputError as exc:
            raise ToolInputError(f"finding {number}: {exc}") from None
    summary = tool_input.get("summary")
    return ReportedFindings(
        summary=summary if isinstance(summary, str) else "", findings=tuple(findings)
    )


_YES_NO = {"true": True, "false": False}


def _fix_ok(item: Mapping[str, Any]) -> bool | None:
    """A verdict's ``fix_ok``: a boolean, or the strings ``"true"``/``"false"`` (a boolean
    JSON-encoded once more, as models sometimes send it); None when absent."""
    value = item.get("fix_ok")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _YES_NO:
        return _YES_NO[value.strip().lower()]
    raise ToolInputError("`fix_ok` must be true or false (or left out when there is no fix)")


def parse_verdicts(
    tool_input: Mapping[str, Any], count: int, fixes: Collection[int] = ()
) -> dict[int, Verdict]:
    """Validate a ``report_verdicts`` input for ``count`` findings; keys are 1-based numbers.

    ``fixes``: the numbers of findings shown with a proposed fix. Only their verdicts keep a
    judgement of the fix (``fix_ok``, ``fix_reason``); on other findings it is ignored.
    """
    raw = tool_input.get("verdicts")
    if not isinstance(raw, list):
        raise ToolInputError("`verdicts` must be an array with one entry per finding")
    verdicts: dict[int, Verdict] = {}
    for item in raw:
        if not isinstance(item, Mapping):
            raise ToolInputError("each verdict must be an object")
        number = _line(item, "finding", "finding number, as listed in your task")
        if number > count:
            raise ToolInputError(f"there is no finding {number}; you were given {count}")
        if number in verdicts:
            raise ToolInputError(f"finding {number} has two verdicts; give exactly one")
        decision = _text(item, "verdict").lower()
        if decision not in {"confirmed", "refuted"}:
            raise ToolInputError("`verdict` must be `confirmed` or `refuted`")
        confidence = _text(item, "confidence", required=False).lower() or "medium"
        if confidence not in {"high", "medium", "low"}:
            raise ToolInputError("`confidence` must be high, medium or low")
        fix_ok, fix_reason = None, ""
        if number in fixes:
            try:
                fix_ok, fix_reason = _fix_ok(item), _text(item, "fix_reason", required=False)
            except ToolInputError as exc:
                raise ToolInputError(f"finding {number}: {exc}") from None
        verdicts[number] = Verdict(
            confirmed=decision == "confirmed",
            reason=_text(item, "reason"),
            evidence=_text(item, "evidence", required=False),
            confidence=confidence,
            fix_ok=fix_ok,
            fix_reason=fix_reason,
        )
    missing = [n for n in range(1, count + 1) if n not in verdicts]
    if missing:
        raise ToolInputError(
            "give a verdict for every finding; missing: " + ", ".join(map(str, missing))
        )
    return verdicts


def described(tool: dict[str, Any], shell: bool) -> dict[str, Any]:
    """``tool``'s definition as agents with (``shell``) or without a shell are offered it:
    without, its descriptions name the read-only tools where they name bash."""
    if shell:
        return tool
    reworded = _reworded(tool)
    assert isinstance(reworded, dict)
    return reworded


def _reworded(value: object) -> object:
    if isinstance(value, dict):
        return {
            key: without_shell(item)
            if key == "description" and isinstance(item, str)
            else _reworded(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_reworded(item) for item in value]
    return value
