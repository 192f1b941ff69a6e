"""The rdjson report as reviewdog reads it: its diff filter, written here from reviewdog's
documented rules (README "Filter mode"; ``filter/diff_filter.go`` and ``filter/filter.go``),
applied to the report of a real change in a real git repository.

- ``added`` (the default): a diagnostic is kept when a line of its range is a line the diff
  adds; ``diff_context``: any line of a hunk; ``file``: any line of a file in the diff;
  ``nofilter``: everything.
- The range is ``start.line`` to ``end.line`` (an end of 0 means the start line); a
  diagnostic without a line has line 0, which no diff holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from orch_review.findings.coverage import LedgerFile, build_coverage
from orch_review.reporters import rdjson
from orch_review.scope.diff import parse_patch
from tests.conftest import GitRepoFactory, git, write
from tests.reporters.sample import clean_report

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass
class _FileDiff:
    added: set[int] = field(default_factory=set)
    context: set[int] = field(default_factory=set)


def _reviewdog_diff(patch: str) -> dict[str, _FileDiff]:
    """New-side lines per path, as reviewdog's diff parser records them."""
    files: dict[str, _FileDiff] = {}
    current: _FileDiff | None = None
    line = 0
    for text in patch.splitlines():
        if text.startswith("+++ "):
            path = text[4:]
            current = files.setdefault(path.removeprefix("b/"), _FileDiff())
        elif (match := _HUNK.match(text)) and current is not None:
            line = int(match.group(1))
        elif current is not None and text.startswith("+"):
            current.added.add(line)
            line += 1
        elif current is not None and text.startswith(" "):
            current.context.add(line)
            line += 1
    return files


def _should_report(files: dict[str, _FileDiff], mode: str, path: str, line: int) -> bool:
    diff = files.get(path)
    if diff is None:
        return mode == "nofilter"
    if line not in diff.added | diff.context:
        return mode in ("nofilter", "file")
    return line in diff.added or mode in ("diff_context", "file", "nofilter")


def _kept(files: dict[str, _FileDiff], mode: str, diagnostic: dict[str, Any]) -> bool:
    location = diagnostic["location"]
    span = location.get("range", {})
    start = span.get("start", {}).get("line", 0)
    end = span.get("end", {}).get("line", 0) or start
    return any(_should_report(files, mode, location["path"], n) for n in range(start, end + 1))


@pytest.mark.parametrize("mode", ["added", "diff_context", "file", "nofilter"])
def test_reviewdog_keeps_a_not_covered_file_under_every_filter_mode(
    git_repo: GitRepoFactory, mode: str
) -> None:
    body = "".join(f"line {n}\n" for n in range(1, 41))
    repo = git_repo({"lib.py": body, "gone.py": body})
    edited = body.replace("line 20\n", "line 20 changed\n") + "line 41\n"
    write(repo, {"lib.py": edited, "new.py": "print(1)\n"})
    (repo / "gone.py").write_text(body.replace("line 5\n", ""))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    patch = git(repo, "diff", "--unified=3", "HEAD~1", "HEAD")
    # orch-review's own reading of the same change gives the ledger its hunks.
    changes = parse_patch(patch.splitlines())
    ledger = [LedgerFile(c.path, 1, c.hunks) for c in changes]
    coverage = build_coverage(ledger, covered_by={}, reasons={})
    report = replace(clean_report(), coverage=coverage)

    diagnostics = rdjson.to_data(report)["diagnostics"]

    files = _reviewdog_diff(patch)
    not_covered = [d for d in diagnostics if d["code"]["value"] == "not-covered"]
    assert {d["location"]["path"] for d in not_covered} == {"lib.py", "new.py", "gone.py"}
    kept = {d["location"]["path"] for d in not_covered if _kept(files, mode, d)}
    if mode == "added":
        # gone.py's change only deletes a line: no line of it is added, so reviewdog's
        # default filter keeps nothing there (the docs give -filter-mode=file for it).
        assert kept == {"lib.py", "new.py"}
    else:
        assert kept == {"lib.py", "new.py", "gone.py"}


def test_a_diagnostic_without_a_line_is_what_the_default_filter_drops(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo({"lib.py": "a\n"})
    write(repo, {"lib.py": "a\nb\n"})
    git(repo, "commit", "-qam", "change")
    files = _reviewdog_diff(git(repo, "diff", "HEAD~1", "HEAD"))
    lineless = {"location": {"path": "lib.py"}}
    assert not _kept(files, "added", lineless)
    assert _kept(files, "added", {"location": {"path": "lib.py", "range": {"start": {"line": 2}}}})
