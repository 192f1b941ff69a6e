"""``orch-review plan``: what a review would cover, with no API call, as data (the CLI
renders it: ``cli/plan_view.py``)."""

from __future__ import annotations

from typing import Any

from orch_review.cost import Estimate
from orch_review.engine.agents.prescout import task_text
from orch_review.quoting import path_fields, text_for_json
from orch_review.scope.resolve import Scope

CHARS_PER_TOKEN = 4  # a rough average for code and English; --count-tokens asks the API


def estimate_tokens(scope: Scope, system: str) -> int:
    """A local estimate of the main agent's first prompt (``system`` plus pre-scout)."""
    return (len(system) + len(task_text(scope))) // CHARS_PER_TOKEN


def plan_data(
    scope: Scope,
    system: str,
    counted_tokens: int | None = None,
    cost: Estimate | None = None,
) -> dict[str, Any]:
    """The plan as JSON-ready data (sorted, deterministic; names that are not UTF-8 in
    git's C-quoted form, so the JSON is valid UTF-8, with their bytes in base64 beside);
    ``system``: the main agent's system prompt, counted in the estimate; ``cost``: the
    estimated cost of the review (``orch_review/cost.py``)."""
    return {
        "scope": {
            "kind": scope.kind,
            "description": text_for_json(scope.describe()),
            "base": scope.base_commit,
            "base_ref": scope.base_ref,
            "head": scope.head_commit,
            "source": scope.source,
            "pathspecs": [text_for_json(p) for p in scope.pathspecs],
        },
        "files": [
            {
                **path_fields(f.path),
                "size": f.size,
                "status": f.change.status if f.change else None,
                # What the path was before when it changed kind (a symlink, now a file).
                "replaced": f.change.replaced if f.change else None,
                "old_path": None,
                **(
                    path_fields(f.change.old_path, "old_path")
                    if f.change and f.change.old_path
                    else {}
                ),
                "additions": f.change.additions if f.change else None,
                "deletions": f.change.deletions if f.change else None,
                "hunks": [list(h) for h in f.change.hunks] if f.change else None,
            }
            for f in sorted(scope.files, key=lambda f: f.path)
        ],
        "skipped": [
            {**path_fields(s.path), "reason": text_for_json(s.reason)}
            for s in sorted(scope.skipped, key=lambda s: s.path)
        ],
        # Set when every file in scope is skipped: why, and what would have them reviewed.
        "nothing_to_review": _maybe(scope.nothing_reviewable()),
        "tokens": {
            "estimate": estimate_tokens(scope, system),
            "counted": counted_tokens,
            "method": "count_tokens API" if counted_tokens is not None else "local estimate",
        },
        "cost": None if cost is None else cost.to_json(),
    }


def _maybe(text: str | None) -> str | None:
    return None if text is None else text_for_json(text)
