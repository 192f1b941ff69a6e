"""The subtasks a review refused, told once: one line, grouped by reason.

A main agent that misreads the scope often sends many subtasks refused for the same reason,
and may send them again in a later Workflow call. Listing each with its reason makes a wall of
repeated text, and under ``--format github`` every warning is an annotation on the pull
request; so the warning counts the subtasks, gives each distinct reason once with how many it
refused ("5 because it names no file of the change: ..."), and names the subtasks by a short title.
"""

from __future__ import annotations

from collections.abc import Sequence

from orch_review.wording import counted

#: Subtasks named per reason; the others are counted.
NAMED_PER_REASON = 3
#: Characters of a subtask's title.
TITLE_LIMIT = 48


def title(text: str, limit: int = TITLE_LIMIT) -> str:
    """A subtask's text on one line, cut at a word boundary near ``limit`` characters."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.") + "…"


def refusal_warning(refused: Sequence[tuple[str, str]]) -> str | None:
    """One line for the report's warnings about ``refused`` (subtask, reason) pairs, as the
    workflow recorded them (a subtask refused twice for the same reason counts once); None
    when nothing was refused."""
    by_reason: dict[str, list[str]] = {}
    for subtask, reason in dict.fromkeys(refused):
        by_reason.setdefault(reason, []).append(subtask)
    if not by_reason:
        return None
    total = sum(len(subtasks) for subtasks in by_reason.values())
    groups = []
    for reason, subtasks in sorted(by_reason.items(), key=lambda item: -len(item[1])):
        named = ", ".join(f'"{title(s)}"' for s in subtasks[:NAMED_PER_REASON])
        more = len(subtasks) - NAMED_PER_REASON
        named += f" and {more} more" if more > 0 else ""
        groups.append(f"{len(subtasks)} because {' '.join(reason.split()).rstrip('.')}: {named}.")
    return (
        f"{counted(total, 'subtask')} of the main agent {'was' if total == 1 else 'were'} "
        f"refused and not reviewed. {' '.join(groups)}"
    )
