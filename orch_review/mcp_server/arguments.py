"""What a calling agent may send: checked like any other untrusted input.

Each tool's typed parameters are checked by the MCP SDK against the tool's JSON Schema;
what a schema cannot say (a path that leaves the repository, a cap that is not positive,
two scopes at once) is checked here and answered with :class:`BadArguments`, one sentence
that says what to send instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from orch_review.errors import UsageError

MAX_PATHS = 1000
MAX_TEXT = 10_000


class BadArguments(UsageError):
    """A tool call whose arguments cannot be used."""


@dataclass(frozen=True, slots=True)
class ScopeArgs:
    """The review command's scope flags, as a tool receives them."""

    staged: bool = False
    base: str | None = None
    head: str | None = None
    all_files: bool = False
    paths: tuple[str, ...] = ()


def scope_args(
    *,
    staged: bool,
    base: str | None,
    head: str | None,
    all_files: bool,
    paths: Sequence[str] | None,
) -> ScopeArgs:
    """The scope asked for; :class:`BadArguments` for a ref or path no command line takes."""
    for name, ref in (("base", base), ("head", head)):
        if ref is not None:
            _ref(name, ref)
    given = tuple(paths or ())
    if len(given) > MAX_PATHS:
        raise BadArguments(f"paths: at most {MAX_PATHS} paths, not {len(given)}.")
    for path in given:
        _path(path)
    return ScopeArgs(staged, base, head, all_files, given)


def caps(
    *, max_cost_usd: float | None, max_agents: int | None, max_total_tokens: int | None
) -> dict[str, object]:
    """The budget caps asked for, as settings overrides; each must be positive."""
    settings: dict[str, object] = {}
    if max_cost_usd is not None:
        if not math.isfinite(max_cost_usd) or max_cost_usd <= 0:
            raise BadArguments("max_cost_usd: a positive number of US dollars, such as 2.5.")
        settings["max_cost_usd"] = float(max_cost_usd)
    for name, value in (("max_agents", max_agents), ("max_total_tokens", max_total_tokens)):
        if value is not None:
            if value <= 0:
                raise BadArguments(f"{name}: a positive whole number.")
            settings[name] = int(value)
    return settings


def question(text: str) -> str:
    """A follow-up question: some text, bounded."""
    cleaned = text.strip()
    if not cleaned:
        raise BadArguments("question: ask something, such as 'why is this a problem?'.")
    if len(cleaned) > MAX_TEXT:
        raise BadArguments(f"question: at most {MAX_TEXT:,} characters.")
    return cleaned


def finding_id(value: str) -> str:
    """A finding's fingerprint, as the review tool returned it."""
    cleaned = value.strip()
    if not cleaned or len(cleaned) > 200 or not cleaned.isprintable():
        raise BadArguments("finding: the `id` of a finding from the last review's result.")
    return cleaned


def _ref(name: str, ref: str) -> None:
    if not ref or len(ref) > 255 or ref.startswith("-") or not ref.isprintable():
        raise BadArguments(f"{name}: a git revision such as origin/main, not {ref[:40]!r}.")


def _path(path: str) -> None:
    if not path or len(path) > 4096 or "\x00" in path or path.startswith("-"):
        raise BadArguments(f"paths: {path[:60]!r} is not a path or pathspec.")
    if path.startswith("/") or path == ".." or path.startswith("../") or "/../" in path:
        raise BadArguments(
            f"paths: {path[:60]!r} leaves the repository; give paths relative to its top."
        )
