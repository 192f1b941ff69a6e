"""Reuse by content: a file is covered by an earlier review only of what this review sees."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from orch_review.config.settings import Config
from orch_review.engine.memory.reuse import LISTED, EarlierReviews
from orch_review.findings.coverage import LedgerFile, build_coverage
from orch_review.findings.records import Finding, Severity
from tests.engine.sessions import Files, StandIn, session

FILES = {"a.py": b"x = 1\n", "b.py": b"y = 1\n", "c.py": b"z = 1\n"}


def _finding(path: str) -> Finding:
    return Finding(path, 1, 1, Severity.HIGH, "correctness", "wrong", "e", "c")


def _rules(text: str) -> Callable[[str], str]:
    return lambda path: f"{text} ({path})"


def _store(journal: Path, files: Mapping[str, bytes] = FILES) -> None:
    """A complete earlier review of base `base1` that covered a.py and b.py, not c.py."""
    content = Files(journal.parent, files)
    with session(journal.parent, content, StandIn(content), journal=journal) as s:
        earlier = EarlierReviews(s, "base1", _rules("house rules"))
        earlier.load(sorted(files))
        assert earlier.paths == frozenset()  # nothing stored yet
        coverage = build_coverage(
            [LedgerFile(p, 1) for p in sorted(files)],
            covered_by={"a.py": [1], "b.py": [2]},
        )
        earlier.store(coverage, {"a.py": [_finding("a.py")]})


def _load(
    journal: Path,
    files: Mapping[str, bytes] = FILES,
    base: str | None = "base1",
    guidance: Callable[[str], str] | None = None,
    config: Config | None = None,
) -> EarlierReviews:
    content = Files(journal.parent, files)
    with session(journal.parent, content, StandIn(content), journal=journal, config=config) as s:
        earlier = EarlierReviews(s, base, guidance or _rules("house rules"))
        earlier.load(sorted(files))
    return earlier


def test_files_covered_before_are_reused_with_their_findings(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store(journal)

    earlier = _load(journal)

    assert earlier.paths == {"a.py", "b.py"}  # c.py was not covered: not stored
    assert earlier.findings["a.py"] == (_finding("a.py"),) and earlier.findings["b.py"] == ()
    assert earlier.answers(["a.py", "b.py"]) and not earlier.answers(["a.py", "c.py"])
    assert not earlier.answers([])


@pytest.mark.parametrize(
    "change",
    ["content", "guidance", "base", "model", "effort", "turns"],
)
def test_a_change_of_what_the_review_saw_is_reviewed_again(tmp_path: Path, change: str) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store(journal)
    files, base, guidance, config = dict(FILES), "base1", _rules("house rules"), Config()
    if change == "content":
        files["a.py"] = b"x = 2\n"
    elif change == "guidance":
        guidance = _rules("new house rules")
    elif change == "base":
        base = "base2"
    elif change == "model":
        config = Config(subagent_model="claude-other-1")
    elif change == "effort":
        config = Config(effort="low")
    else:
        config = Config(subagent_max_turns=3)

    earlier = _load(journal, files, base, guidance, config)

    expected = {"b.py"} if change == "content" else set()
    assert earlier.paths == expected


def test_guidance_is_asked_per_file(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store(journal)

    def only_b_changed(path: str) -> str:
        return _rules("house rules")(path) + (" and more" if path == "b.py" else "")

    assert _load(journal, guidance=only_b_changed).paths == {"a.py"}


def test_without_a_base_nothing_is_reused(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store(journal)
    assert _load(journal, base=None).paths == frozenset()


def test_the_main_agent_is_told_which_files_are_covered(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    assert _load(journal).note() == ""
    _store(journal)
    note = _load(journal).note()
    assert "2 changed file(s) are unchanged" in note
    assert note.endswith("<already_covered>\na.py\nb.py\n</already_covered>")

    many = {f"m{n:04d}.py": b"x\n" for n in range(LISTED + 2)}
    content = Files(tmp_path, many)
    with session(tmp_path, content, StandIn(content), journal=journal) as s:
        earlier = EarlierReviews(s, "base1", _rules("r"))
        earlier.load(sorted(many))
        earlier.store(build_coverage([LedgerFile(p, 1) for p in many], covered_by={}), {})
        assert earlier.paths == frozenset()  # nothing covered, nothing stored
        covered = {p: [1] for p in many}
        earlier.store(build_coverage([LedgerFile(p, 1) for p in many], covered_by=covered), {})
    note = _load(journal, many, guidance=_rules("r")).note()
    assert f"{LISTED + 2} changed file(s)" in note and "\n(2 more.)\n" in note
    assert f"m{LISTED - 1:04d}.py" in note and f"m{LISTED:04d}.py" not in note


def test_a_reused_file_keeps_its_stored_findings(tmp_path: Path) -> None:
    """The second review reuses a.py and stores only what it covered itself: a.py's finding
    from the first review is still there for the third."""
    journal = tmp_path / "journal.sqlite3"
    _store(journal)
    content = Files(tmp_path, FILES)
    with session(tmp_path, content, StandIn(content), journal=journal) as s:
        second = EarlierReviews(s, "base1", _rules("house rules"))
        second.load(sorted(FILES))
        reused = build_coverage(
            [LedgerFile(p, 1) for p in sorted(FILES)], covered_by={}, reused=second.paths
        )
        second.store(reused, {})  # its own verified findings: none
    assert _load(journal).findings["a.py"] == (_finding("a.py"),)


def test_a_file_with_the_same_content_as_a_covered_one_is_not_covered_by_it(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite3"
    twins = {"a.py": b"same\n", "b.py": b"same\n"}
    content = Files(tmp_path, twins)
    with session(tmp_path, content, StandIn(content), journal=journal) as s:
        first = EarlierReviews(s, "base1", lambda path: "rules")
        first.load(sorted(twins))
        covered = build_coverage([LedgerFile("a.py", 1)], covered_by={"a.py": [1]})
        first.store(covered, {"a.py": [_finding("a.py")]})
    earlier = _load(journal, twins, guidance=lambda path: "rules")
    assert earlier.paths == {"a.py"}


def test_every_file_is_looked_up_and_stored_whatever_comes_before_it(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    content = Files(tmp_path, FILES)
    with session(tmp_path, content, StandIn(content), journal=journal) as s:
        earlier = EarlierReviews(s, "base1", _rules("house rules"))
        earlier.load(["gone.py", *sorted(FILES)])  # a path with no content under review
        files = [LedgerFile(p, 1) for p in ("0-uncovered.py", *sorted(FILES))]
        earlier.store(build_coverage(files, covered_by={p: [1] for p in FILES}), {})
    assert _load(journal).paths == set(FILES)


def _store_complete(journal: Path, files: Mapping[str, bytes], summary: str) -> None:
    content = Files(journal.parent, files)
    with session(journal.parent, content, StandIn(content), journal=journal) as s:
        earlier = EarlierReviews(s, "base1", _rules("house rules"))
        earlier.load(sorted(files))
        ledger = [LedgerFile(p, 1) for p in sorted(files)]
        earlier.store(build_coverage(ledger, covered_by={p: [1] for p in files}), {}, summary)


def _summary(
    journal: Path,
    files: Mapping[str, bytes] = FILES,
    guidance: Callable[[str], str] | None = None,
    config: Config | None = None,
) -> str | None:
    content = Files(journal.parent, files)
    with session(journal.parent, content, StandIn(content), journal=journal, config=config) as s:
        earlier = EarlierReviews(s, "base1", guidance or _rules("house rules"))
        earlier.load(sorted(files))
        return earlier.summary()


def test_the_summary_of_a_complete_review_is_reused_only_for_the_same_files(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store_complete(journal, FILES, "All good.")
    assert _summary(journal) == "All good."
    assert _summary(journal, {**FILES, "a.py": b"x = 2\n"}) is None  # content
    assert _summary(journal, {"a.py": FILES["a.py"]}) is None  # another set of files
    assert _summary(journal, guidance=_rules("new rules")) is None  # guidance
    assert _summary(journal, config=Config(model="claude-sonnet-4-5")) is None  # main model


def test_the_note_states_the_reused_findings(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store(journal)
    note = _load(journal).note()
    assert "1 finding carried over" in note
    assert "Scout only the files listed above" in note


def test_the_summary_is_the_main_models_own(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store_complete(journal, FILES, "All good.")
    same_agents = Config(model="claude-sonnet-4-5", subagent_model=Config().agent_model)
    assert _load(journal, config=same_agents).paths == set(FILES)  # the files are reused
    assert _summary(journal, config=same_agents) is None  # the summary is not


def test_a_review_stores_a_summary_only_when_it_has_one_for_every_file_it_keyed(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store(journal)  # no summary given: none stored
    assert _summary(journal) is None
    _store_complete(journal, FILES, "")
    assert _summary(journal) is None
    content = Files(tmp_path, FILES)
    with session(tmp_path, content, StandIn(content), journal=journal) as s:
        partial = EarlierReviews(s, "base1", _rules("house rules"))
        partial.load(sorted(FILES))
        files = [LedgerFile(p, 1) for p in ("gone.py", *sorted(FILES))]  # one file unkeyed
        covered = {p: [1] for p in FILES}
        partial.store(build_coverage(files, covered_by=covered), {}, "Not all of it.")
        audit = EarlierReviews(s, None, _rules("house rules"))  # nothing to compare with
        audit.load(sorted(FILES))
        audit.store(build_coverage(files, covered_by=covered), {}, "An audit.")
    assert _summary(journal) is None


def test_the_notes_say_what_was_reused_and_what_the_main_agent_may_ask(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    _store(journal)
    earlier = _load(journal)
    note = earlier.note()
    assert (
        "are unchanged since an earlier complete review of the same base and are already "
        "covered by it (their verified results are reused"
    ) in note
    assert (
        "do not send subtasks about the covered files alone (such subtasks are answered "
        "from the earlier review):\n<already_covered>"
    ) in note
    assert earlier.reused_note(3) == (
        "Every one of the 3 changed files is unchanged since an earlier complete review of "
        "the same base: its coverage and verified findings were reused and no agent ran."
    )

    exactly = {f"m{n:04d}.py": b"x\n" for n in range(LISTED)}
    content = Files(tmp_path, exactly)
    with session(tmp_path, content, StandIn(content), journal=journal) as s:
        full = EarlierReviews(s, "base1", _rules("r"))
        full.load(sorted(exactly))
        covered = {p: [1] for p in exactly}
        full.store(build_coverage([LedgerFile(p, 1) for p in exactly], covered_by=covered), {})
    listed = _load(journal, exactly, guidance=_rules("r")).note()
    assert "more.)" not in listed and listed.endswith(f"m{LISTED - 1:04d}.py\n</already_covered>")
