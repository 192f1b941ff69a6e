"""Triage: fingerprints, deduplication, the diff filter modes and suppressions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orch_review.errors import ConfigError
from orch_review.findings.codec import finding_to_json
from orch_review.findings.records import Finding, Severity, Status, Verdict
from orch_review.findings.triage import (
    deduplicated,
    filter_reason,
    load_baseline,
    triage,
    with_fingerprints,
)
from orch_review.scope.git import open_repo
from orch_review.scope.resolve import ScopeRequest, resolve_scope
from tests.conftest import GitRepoFactory, git

CONFIRMED = Verdict(True, "holds", confidence="high")


def _finding(path: str = "a.py", start: int = 2, end: int | None = None, **kw: object) -> Finding:
    defaults: dict[str, object] = {
        "severity": Severity.HIGH,
        "category": "security",
        "claim": "bad thing",
        "evidence": f"{path}:{start}",
        "concern": "c1",
        "verdict": CONFIRMED,
    }
    defaults.update(kw)
    return Finding(path, start, start if end is None else end, **defaults)  # type: ignore[arg-type]


def _reader(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda path: files[path].splitlines() if path in files else None


def test_fingerprint_survives_an_edit_that_shifts_lines() -> None:
    before = {"a.py": "import os\n\nos.system(cmd)\n"}
    after = {"a.py": "import os\nimport sys\n\n\nos.system(cmd)\n"}
    (old,) = with_fingerprints([_finding(start=3)], _reader(before))
    (new,) = with_fingerprints([_finding(start=5)], _reader(after))
    assert old.fingerprint == new.fingerprint
    (changed,) = with_fingerprints(
        [_finding(start=5)], _reader({"a.py": after["a.py"].replace("cmd", "c")})
    )
    assert changed.fingerprint != old.fingerprint


def test_fingerprint_ignores_whitespace_but_not_category() -> None:
    files = {"a.py": "x  =  1\n"}
    (one,) = with_fingerprints([_finding(start=1)], _reader(files))
    (two,) = with_fingerprints([_finding(start=1)], _reader({"a.py": "    x = 1\n"}))
    (other,) = with_fingerprints([_finding(start=1, category="performance")], _reader(files))
    assert one.fingerprint == two.fingerprint != other.fingerprint


def test_identical_code_in_two_places_gets_distinct_fingerprints() -> None:
    files = {"a.py": "eval(x)\npass\neval(x)\n"}
    found = with_fingerprints([_finding(start=1), _finding(start=3)], _reader(files))
    assert [f.fingerprint.split(":")[1] for f in found] == ["1", "2"]
    assert len({f.fingerprint for f in found}) == 2


def test_overlapping_reports_of_one_problem_collapse_keeping_the_strongest() -> None:
    weak = _finding(
        start=3, end=5, evidence="short", concern="sql concern", severity=Severity.MEDIUM
    )
    strong = _finding(start=4, evidence="a much longer piece of evidence", concern="input concern")
    elsewhere = _finding(start=20, concern="sql concern")
    other_category = _finding(start=4, category="performance", concern="perf concern")

    kept = deduplicated([weak, strong, elsewhere, other_category])

    assert len(kept) == 3
    merged = next(f for f in kept if f.start_line == 4 and f.category == "security")
    assert merged.evidence == "a much longer piece of evidence"
    assert merged.severity is Severity.HIGH
    assert set(merged.all_concerns) == {"sql concern", "input concern"}


def test_confirmed_copy_wins_over_refuted_copy() -> None:
    refuted = _finding(verdict=Verdict(False, "no"), evidence="longer evidence text here")
    confirmed = _finding(evidence="x")
    (kept,) = deduplicated([refuted, confirmed])
    assert kept.status is Status.CONFIRMED


@pytest.fixture
def changed_repo(git_repo: GitRepoFactory) -> Path:
    """main has a.py (10 lines); the branch changes line 5 and appends two lines."""
    original = "".join(f"line {n}\n" for n in range(1, 11))
    repo = git_repo({"a.py": original, "b.py": "untouched\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    lines = original.splitlines()
    lines[4] = "line 5 changed"
    (repo / "a.py").write_text("\n".join([*lines, "new 11", "new 12"]) + "\n")
    return repo


@pytest.mark.parametrize(
    ("mode", "line", "kept"),
    [
        ("added", 5, True),
        ("added", 11, True),
        ("added", 4, False),  # context line of the hunk
        ("added", 1, False),
        ("diff_context", 4, True),
        ("diff_context", 2, True),  # inside the first hunk's context
        ("diff_context", 1, False),
        ("file", 1, True),
        ("nofilter", 1, True),
    ],
)
def test_filter_modes_on_a_real_diff(changed_repo: Path, mode: str, line: int, kept: bool) -> None:
    scope = resolve_scope(open_repo(changed_repo), ScopeRequest("change"))
    reason = filter_reason(_finding(start=line), mode, scope.changes)  # type: ignore[arg-type]
    assert (reason is None) is kept


def test_unchanged_file_is_filtered_except_without_filter(changed_repo: Path) -> None:
    scope = resolve_scope(open_repo(changed_repo), ScopeRequest("change"))
    finding = _finding(path="b.py", start=1)
    assert filter_reason(finding, "file", scope.changes) == "not in a changed file"
    assert filter_reason(finding, "nofilter", scope.changes) is None


@pytest.mark.parametrize(
    ("line_text", "suppressed"),
    [
        ("eval(x)  # orch-review: ignore", True),
        ("eval(x)  # orch-review: ignore[security]", True),
        ("eval(x)  # orch-review: ignore[performance, style]", False),
        ("eval(x)  // ORCH-REVIEW: ignore[Security,performance]", True),
        ("eval(x)", False),
    ],
)
def test_inline_suppression_comment(line_text: str, suppressed: bool) -> None:
    files = {"a.py": f"x = 1\n{line_text}\n"}
    (finding,) = triage([_finding(start=2)], read=_reader(files), changes=None, mode="nofilter")
    assert (finding.status is Status.SUPPRESSED) is suppressed


def test_suppression_comment_on_the_line_above() -> None:
    files = {"a.py": "# orch-review: ignore\neval(x)\n"}
    (finding,) = triage([_finding(start=2)], read=_reader(files), changes=None, mode="nofilter")
    assert finding.status is Status.SUPPRESSED
    assert finding.suppressed == "`orch-review: ignore` comment at line 1"


def test_baseline_suppresses_known_fingerprints(tmp_path: Path) -> None:
    files = {"a.py": "x = 1\neval(x)\nexec(y)\n"}
    first = triage(
        [_finding(start=2), _finding(start=3, claim="other")],
        read=_reader(files),
        changes=None,
        mode="nofilter",
    )
    baseline_file = tmp_path / "baseline.json"
    baseline_file.write_text(json.dumps({"findings": [finding_to_json(first[0])]}))

    again = triage(
        [_finding(start=2), _finding(start=3, claim="other")],
        read=_reader(files),
        changes=None,
        mode="nofilter",
        baseline=load_baseline(baseline_file),
    )

    statuses = {f.start_line: f.status for f in again}
    assert statuses[first[0].start_line] is Status.SUPPRESSED
    assert list(statuses.values()).count(Status.CONFIRMED) == 1


def test_bad_baseline_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="not a readable orch-review JSON report"):
        load_baseline(bad)


def test_triage_ranks_confirmed_first_then_severity_then_confidence() -> None:
    files = {"a.py": "\n".join(f"l{n}" for n in range(1, 30)) + "\n"}
    findings = [
        _finding(start=1, severity=Severity.LOW, claim="low"),
        _finding(start=5, verdict=Verdict(False, "no"), claim="refuted"),
        _finding(
            start=9,
            severity=Severity.HIGH,
            claim="high-low",
            verdict=Verdict(True, "r", confidence="low"),
        ),
        _finding(start=13, severity=Severity.HIGH, claim="high-high", category="correctness"),
    ]
    ranked = triage(findings, read=_reader(files), changes=None, mode="nofilter")
    assert [f.claim for f in ranked] == ["high-high", "high-low", "low", "refuted"]


def test_strictness_floor_filters_lower_severities() -> None:
    files = {"a.py": "x\ny\n"}
    found = triage(
        [_finding(start=1, severity=Severity.LOW, claim="low"), _finding(start=2, claim="high")],
        read=_reader(files),
        changes=None,
        mode="nofilter",
        floor="medium",
    )
    by_claim = {f.claim: f for f in found}
    assert by_claim["high"].status is Status.CONFIRMED
    assert by_claim["low"].status is Status.FILTERED
    assert by_claim["low"].filtered == "below the strictness floor (medium)"


def test_a_learning_suppresses_its_finding_wherever_it_moves() -> None:
    from orch_review.config.learnings import Learning, dismissed

    files = {"a.py": "x = 1\neval(x)\nexec(y)\n"}
    (first, _) = triage(
        [_finding(start=2), _finding(start=3, claim="other")],
        read=_reader(files),
        changes=None,
        mode="nofilter",
    )
    learned = Learning("trusted input", "octo", "2026-11-30", fingerprint=first.fingerprint)
    moved = {"a.py": "# new first line\nx = 1\neval(x)\nexec(y)\n"}

    again = triage(
        [_finding(start=3), _finding(start=4, claim="other")],
        read=_reader(moved),
        changes=None,
        mode="nofilter",
        dismissed=dismissed([learned]),
    )

    statuses = {f.start_line: (f.status, f.suppressed) for f in again}
    assert statuses[3][0] is Status.SUPPRESSED
    assert "dismissed by a learning" in str(statuses[3][1]) and "trusted input" in str(
        statuses[3][1]
    )
    assert statuses[4] == (Status.CONFIRMED, None)
