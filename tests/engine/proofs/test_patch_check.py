"""Verified patches: the finding confirmed, the replacement applies to the reviewed lines, and
the configured check passes in the sandbox on a scratch copy (real shells, real bwrap)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from orch_review.engine.proofs.patch_check import PatchChecker, unconfined_reason
from orch_review.engine.shell.bwrap import BubblewrapLauncher
from orch_review.engine.shell.confinement import SandboxUnavailable
from orch_review.engine.shell.sandbox import PlainLauncher, Sandbox, resolve_sandbox
from orch_review.findings.records import Finding, PatchCheck, Severity, Verdict
from orch_review.scope.view import View

SOURCE = "def ratio(total, count):\n    return total / count\n\n\nLIMIT = 3\n"
FIXED = "    if count == 0:\n        return 0.0\n    return total / count"
CONFIRMED = Verdict(
    True, "count comes from the request", "calc.py:2", "high", True, "the guard fixes it"
)

# Every test here starts a shell or an orch-review subprocess.
pytestmark = pytest.mark.slow


def _finding(**changes: object) -> Finding:
    base = Finding(
        path="pkg/calc.py",
        start_line=2,
        end_line=2,
        severity=Severity.MEDIUM,
        category="correctness",
        claim="divides by count, which may be zero",
        evidence="pkg/calc.py:2",
        concern="division",
        verdict=CONFIRMED,
        replacement=FIXED,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


@pytest.fixture
def content(tmp_path: Path) -> Path:
    """The content under review, read-only as a snapshot is."""
    root = tmp_path / "content"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "calc.py").write_text(SOURCE)
    (root / "pkg" / "helper.py").write_text("VALUE = 1\n")
    for path in (root / "pkg" / "calc.py", root / "pkg" / "helper.py"):
        path.chmod(0o444)
    for directory in (root / "pkg", root):
        directory.chmod(0o555)
    return root


def _sandbox(kind: str, root: Path, tmp_path: Path) -> tuple[Sandbox, Path]:
    """The sandbox of ``kind`` and where it shows the content: bubblewrap over a plain
    directory, bubblewrap through a view (as a review with a snapshot uses it), Landlock, or
    none."""
    if kind == "off":
        return resolve_sandbox("off", root, search_path=os.environ["PATH"]), root
    asked = "landlock" if kind == "landlock" else "bubblewrap"
    try:
        sandbox = resolve_sandbox(asked, root, search_path=os.environ["PATH"])
    except SandboxUnavailable as exc:
        pytest.skip(f"{asked} cannot run here: {exc}")
    if kind == "landlock":
        return sandbox, root
    if kind == "bubblewrap":
        return sandbox, root
    shown = tmp_path / "view-root"
    shown.mkdir()
    view = View(shown, (("bind", str(root), str(shown)),), ())
    assert isinstance(sandbox.launcher, BubblewrapLauncher)
    return dataclasses.replace(
        sandbox, launcher=dataclasses.replace(sandbox.launcher, view=view)
    ), shown


def _checker(root: Path, command: str | None, sandbox: Sandbox | None, shown: Path) -> PatchChecker:
    def read(path: str) -> bytes | None:
        file = root / path
        return file.read_bytes() if file.is_file() else None

    return PatchChecker(read, command, sandbox, shown, {"PATH": os.environ["PATH"]}, timeout=20)


SANDBOXES = ["bubblewrap", "view", "landlock", "off"]


def test_a_confirmed_replacement_that_applies_is_verified_without_a_check(content: Path) -> None:
    (checked,) = _checker(content, None, None, content).check_all([_finding()])
    assert checked.patch_check is not None and checked.patch_check.verified
    assert checked.verified_patch == FIXED


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"verdict": Verdict(False, "guarded above", "calc.py:1")}, "refuted"),
        ({"verdict": None}, "not verified"),
        (
            {"verdict": dataclasses.replace(CONFIRMED, fix_ok=False, fix_reason="also logs")},
            "the verifier did not approve the fix: also logs",
        ),
        (
            {"verdict": dataclasses.replace(CONFIRMED, fix_ok=False, fix_reason="")},
            "the verifier did not approve the fix: it rejected the fix",
        ),
        (
            {"verdict": dataclasses.replace(CONFIRMED, fix_ok=None, fix_reason="")},
            "the verifier did not approve the fix: it did not judge the fix",
        ),
        ({"filtered": "outside the diff"}, "filtered"),
        ({"start_line": 5, "end_line": 7}, "lines 5-7 are not in the reviewed file"),
        ({"replacement": "    return total / count"}, "does not change the lines"),
        ({"path": "pkg/gone.py"}, "not in the reviewed content"),
    ],
    ids=[
        "refuted",
        "unverified",
        "fix-rejected",
        "fix-rejected-silently",
        "fix-not-judged",
        "filtered",
        "out-of-range",
        "unchanged",
        "no-file",
    ],
)
def test_a_replacement_is_not_verified_and_says_why(
    content: Path, changes: dict[str, object], reason: str
) -> None:
    (checked,) = _checker(content, None, None, content).check_all([_finding(**changes)])
    assert checked.patch_check is not None
    assert not checked.patch_check.verified
    assert reason in checked.patch_check.reason
    assert checked.verified_patch is None


def test_a_finding_without_a_replacement_is_left_alone(content: Path) -> None:
    finding = _finding(replacement=None)
    assert _checker(content, "false", None, content).check_all([finding]) == [finding]


@pytest.mark.parametrize("kind", SANDBOXES)
def test_the_check_passes_on_the_patched_copy(kind: str, content: Path, tmp_path: Path) -> None:
    sandbox, shown = _sandbox(kind, content, tmp_path)
    checker = _checker(
        content, "python3 -m py_compile {path} && grep -q 'count == 0' {path}", sandbox, shown
    )

    (checked,) = checker.check_all([_finding()])

    assert checked.patch_check is not None
    assert checked.patch_check.verified, checked.patch_check.reason
    assert "passed" in checked.patch_check.reason
    assert (content / "pkg" / "calc.py").read_text() == SOURCE  # the content is untouched


@pytest.mark.parametrize("kind", SANDBOXES)
def test_a_replacement_that_breaks_the_file_fails_the_check(
    kind: str, content: Path, tmp_path: Path
) -> None:
    sandbox, shown = _sandbox(kind, content, tmp_path)
    checker = _checker(content, "python3 -m py_compile {path}", sandbox, shown)

    (checked,) = checker.check_all([_finding(replacement="    if count == 0\n        return 0")])

    assert checked.patch_check is not None and not checked.patch_check.verified
    assert "failed (exit 1)" in checked.patch_check.reason
    assert "SyntaxError" in checked.patch_check.reason
    assert checked.verified_patch is None


@pytest.mark.parametrize("kind", ["view", "landlock"])
def test_in_a_sandbox_the_check_sees_the_rest_of_the_content(
    kind: str, content: Path, tmp_path: Path
) -> None:
    sandbox, shown = _sandbox(kind, content, tmp_path)
    checker = _checker(
        content, "test -f pkg/helper.py && python3 -m py_compile {path}", sandbox, shown
    )
    (checked,) = checker.check_all([_finding()])
    assert checked.patch_check is not None and checked.patch_check.verified


@pytest.mark.parametrize("kind", SANDBOXES)
def test_the_path_reaches_the_command_quoted(kind: str, tmp_path: Path) -> None:
    root = tmp_path / "content"
    name = "$(touch pwned) it's.py"
    root.mkdir()
    (root / name).write_text("x = 1\n")
    sandbox, shown = _sandbox(kind, root, tmp_path)
    checker = _checker(root, "cat {path}", sandbox, shown)

    (checked,) = checker.check_all(
        [_finding(path=name, start_line=1, end_line=1, replacement="x = 2")]
    )

    assert checked.patch_check is not None and checked.patch_check.verified, checked.patch_check
    assert not any(p.name == "pwned" for p in tmp_path.rglob("pwned"))


def test_a_check_that_hangs_is_stopped(content: Path, tmp_path: Path) -> None:
    sandbox, shown = _sandbox("off", content, tmp_path)
    checker = dataclasses.replace(_checker(content, "sleep 30", sandbox, shown), timeout=1)
    (checked,) = checker.check_all([_finding()])
    assert checked.patch_check is not None and not checked.patch_check.verified
    assert "timed out" in checked.patch_check.reason


def test_the_check_cannot_write_the_content(content: Path, tmp_path: Path) -> None:
    sandbox, shown = _sandbox("view", content, tmp_path)
    checker = _checker(content, "echo gone > {path}; echo x > pkg/helper.py; true", sandbox, shown)
    checker.check_all([_finding()])
    assert (content / "pkg" / "calc.py").read_text() == SOURCE
    assert (content / "pkg" / "helper.py").read_text() == "VALUE = 1\n"


def test_a_checked_patch_records_the_lines_it_replaces(content: Path) -> None:
    (checked,) = _checker(content, None, None, content).check_all([_finding(end_line=3)])
    assert checked.patch_check is not None
    assert checked.patch_check.reviewed == "    return total / count\n"  # line 3 is blank


def test_no_check_starts_once_the_review_s_budget_is_spent(content: Path, tmp_path: Path) -> None:
    sandbox, shown = _sandbox("off", content, tmp_path)
    now = [0.0]

    def clock() -> float:
        return now[0]

    def read(path: str) -> bytes | None:
        now[0] += 40.0  # each check (its read, here) takes 40 s of the 100 s budget
        return (content / path).read_bytes()

    checker = PatchChecker(read, "true", sandbox, shown, {}, budget=100.0, clock=clock)
    checked = checker.check_all([_finding(), _finding(), _finding()])

    verdicts = [(c.patch_check.verified, c.patch_check.reason) for c in checked if c.patch_check]
    assert [v for v, _ in verdicts] == [True, True, False]
    assert "not checked: suggestion-check used the 100 s" in verdicts[2][1]


@pytest.mark.parametrize("kind", SANDBOXES)
def test_the_check_sees_no_secret(kind: str, content: Path, tmp_path: Path) -> None:
    sandbox, shown = _sandbox(kind, content, tmp_path)
    env = {"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": "sk-canary", "GITHUB_TOKEN": "ghp"}
    checker = PatchChecker(
        _checker(content, None, None, shown).read,
        "! env | grep -e sk-canary -e ghp",
        sandbox,
        shown,
        env,
        timeout=20,
    )
    (checked,) = checker.check_all([_finding()])
    assert checked.patch_check is not None and checked.patch_check.verified, checked.patch_check


def test_a_rejected_fix_stays_prose_even_when_the_check_passes(
    content: Path, tmp_path: Path
) -> None:
    sandbox, shown = _sandbox("off", content, tmp_path)
    rejected = _finding(verdict=dataclasses.replace(CONFIRMED, fix_ok=False, fix_reason="no"))

    (checked,) = _checker(content, "true", sandbox, shown).check_all([rejected])

    assert checked.patch_check is not None and not checked.patch_check.verified
    assert checked.patch_check.reason == "the verifier did not approve the fix: no"
    # Even a record claiming a verified patch offers none without the verifier's approval.
    claimed = dataclasses.replace(checked, patch_check=PatchCheck(True, "applies"))
    assert claimed.verified_patch is None
    approved = dataclasses.replace(claimed, verdict=CONFIRMED)
    assert approved.verified_patch == FIXED


@pytest.mark.parametrize(
    ("kind", "says"),
    [("tools", "no sandboxed shell can run here"), ("none", "--sandbox off")],
)
def test_only_a_shell_sandbox_may_run_the_check(kind: str, says: str, content: Path) -> None:
    reason = unconfined_reason(Sandbox(kind, PlainLauncher()))  # type: ignore[arg-type]
    assert reason is not None and says in reason and "reviewed code" in reason
    checker = dataclasses.replace(_checker(content, "true", None, content), unavailable=reason)

    (checked,) = checker.check_all([_finding()])

    assert checked.patch_check is not None and not checked.patch_check.verified
    assert checked.patch_check.reason == f"suggestion-check did not run: {reason}"
    assert checked.verified_patch is None


@pytest.mark.parametrize("kind", ["bubblewrap", "landlock"])
def test_a_shell_sandbox_may_run_the_check(kind: str, content: Path, tmp_path: Path) -> None:
    sandbox, _ = _sandbox(kind, content, tmp_path)
    assert unconfined_reason(sandbox) is None
