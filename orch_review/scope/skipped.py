"""What to say when every file in scope is skipped: each reason counted, with the way to
review such files where there is one (never "use --all", which skips them just the same)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from orch_review.scope.reviewable import REVIEW_IGNORE_FILE, SkippedFile

# Reason (or how it begins) -> what to do to have such files reviewed.
_HINTS = (
    ("excluded by the `exclude` setting", "drop its glob from --exclude or the `exclude` setting"),
    (f"excluded by {REVIEW_IGNORE_FILE}", f"remove its pattern from {REVIEW_IGNORE_FILE}"),
    ("lock file or generated", "set `generated` to the patterns you want skipped"),
    ("larger than", "raise `max-file-size`"),
    ("generated code (linguist-generated", "unset linguist-generated in .gitattributes"),
    ("vendored code (linguist-vendored", "unset linguist-vendored in .gitattributes"),
    ("submodule", "review it in its own repository"),
)
# Reasons no setting changes: said as they are.
_FOR_GOOD = {
    "binary": "binary files are not reviewed",
    "deleted in this change": "a deleted file leaves nothing to review",
}


def _hint(reason: str) -> str | None:
    for start, hint in _HINTS:
        if reason.startswith(start):
            return hint
    return None


def all_skipped(skipped: Sequence[SkippedFile], unit: str) -> str:
    """One sentence for a scope whose ``skipped`` files are all it holds (``unit``:
    "changed files" or "files")."""
    counts = Counter(s.reason for s in skipped)
    listed = ", ".join(f"{n} {reason}" for reason, n in counts.most_common())
    total = len(skipped)
    noun = unit if total != 1 else unit.removesuffix("s")
    said = f"nothing to review: {'the' if total == 1 else 'all'} {total} {noun} in scope"
    said += f" {'is' if total == 1 else 'are'} skipped ({listed})"
    hints = []
    for reason in counts:
        hint = _hint(reason)
        if hint is not None:
            hints.append(f"to review a file {reason.split(' (')[0]}, {hint}")
        elif reason in _FOR_GOOD:
            hints.append(_FOR_GOOD[reason])
    return said + ("; " + "; ".join(dict.fromkeys(hints)) if hints else "") + "."
