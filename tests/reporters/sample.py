"""A fixed report for the reporters' tests: findings of every status, a failed and a skipped
concern, usage per role, snippets. Built by hand so every reporter sees the same input."""

from __future__ import annotations

from dataclasses import replace

from orch_review import __version__
from orch_review.findings.coverage import Coverage, LedgerFile, SkippedPath, build_coverage
from orch_review.findings.records import (
    ConcernOutcome,
    Finding,
    PatchCheck,
    Severity,
    Verdict,
    ranked,
)
from orch_review.findings.report import Report
from orch_review.findings.snippets import collect_snippets
from orch_review.findings.usage import Usage, UsageReport

FILES = {
    "app.py": [
        "import sqlite3",
        "",
        "",
        "def find_user(db, name):",
        "    cursor = db.cursor()",
        "    cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")",
        "    return cursor.fetchone()",
    ],
    "worker.py": [
        "import threading",
        "",
        "results = {}",
        "",
        "",
        "def work(key, fn):",
        "    try:",
        "        value = fn()",
        "    except Exception:",
        "        pass",
        "    results[key] = value",
        "",
        "",
        "def start(key, fn):",
        "    threading.Thread(target=work, args=(key, fn)).start()",
    ],
    "src/util, v2.py": [
        "def pct(part, whole):",
        "    return 100 * part // whole",
    ],
    "README.md": ["# Demo", "", "Run `make serve` to start.", ""],
}

SQL_CONCERN = "SQL injection in app.py: queries built from user input"
ERRORS_CONCERN = "Error handling in worker.py"
MISC_CONCERN = "Maintainability and docs of the rest"
FAILED_CONCERN = "Concurrency in worker.py: shared dict written from threads"
SKIPPED_CONCERN = "Performance of the report generation\nwith a second line"


def _confirmed(reason: str, confidence: str = "high", fix: str = "") -> Verdict:
    """Confirmed; ``fix``: why the verifier approved the finding's proposed fix."""
    return Verdict(
        True,
        reason,
        evidence="re-ran the check",
        confidence=confidence,
        fix_ok=True if fix else None,
        fix_reason=fix,
    )


def sample_findings() -> list[Finding]:
    """Eight findings: four confirmed (one per severity), then one of each other status."""
    return [
        Finding(
            path="app.py",
            start_line=6,
            end_line=6,
            start_column=5,
            severity=Severity.HIGH,
            category="security",
            claim="SQL query built with an f-string from the `name` argument.",
            evidence="app.py:6 interpolates `name` into the SQL text; "
            'find_user(db, "x\' OR 1=1 --") returns the first user.',
            suggestion='Use a parameter: cursor.execute("... WHERE name = ?", (name,)).',
            concern=SQL_CONCERN,
            concerns=(SQL_CONCERN, MISC_CONCERN),
            verdict=_confirmed(
                "Reproduced: the injected name returns a row.",
                fix="Binds `name` as a parameter and changes nothing else.",
            ),
            fingerprint="0f1e2d3c4b5a69788796a5b4c3d2e1f0:1",
            replacement='    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))',
            patch_check=PatchCheck(
                True,
                "applies to the reviewed lines; `ruff check` passed",
                FILES["app.py"][5],
            ),
        ),
        Finding(
            path="worker.py",
            start_line=9,
            end_line=11,
            severity=Severity.MEDIUM,
            category="error-handling",
            claim="An exception in fn() is swallowed, then `value` is unbound: UnboundLocalError.",
            evidence="worker.py:9-10 `except Exception: pass`\nworker.py:11 uses `value`.",
            concern=ERRORS_CONCERN,
            verdict=_confirmed("Ran work('k', lambda: 1/0): UnboundLocalError.", "medium"),
            fingerprint="1a2b3c4d5e6f708192a3b4c5d6e7f801:1",
        ),
        Finding(
            path="src/util, v2.py",
            start_line=2,
            end_line=2,
            severity=Severity.LOW,
            category="correctness",
            claim="pct() rounds down: 99.9% shows as 99%, and whole=0 raises: a 100% bug, surely.",
            evidence="python -c 'print(100 * 999 // 1000)' prints 99",
            suggestion="Use round(100 * part / whole) and guard whole == 0.",
            concern=MISC_CONCERN,
            verdict=_confirmed("Checked: 999/1000 gives 99.", fix="Rounds as the claim asks."),
            fingerprint="2b3c4d5e6f708192a3b4c5d6e7f8091a:1",
            replacement="    return round(100 * part / whole\x1b[2J",
            patch_check=PatchCheck(False, "`python3 -m py_compile {path}` failed (exit 1)"),
        ),
        Finding(
            path="README.md",
            start_line=3,
            end_line=3,
            severity=Severity.INFO,
            category="documentation",
            claim="The README names a `make serve` target the Makefile does not have.",
            evidence="grep -n serve Makefile: no match",
            concern=MISC_CONCERN,
            verdict=_confirmed("No Makefile target `serve`.", "low"),
            fingerprint="3c4d5e6f708192a3b4c5d6e7f8091a2b:1",
        ),
        Finding(
            path="calc.py",
            start_line=3,
            end_line=3,
            severity=Severity.HIGH,
            category="correctness",
            claim="Division by zero when the list is empty.",
            evidence="calc.py:3 divides by len(xs)",
            concern=MISC_CONCERN,
            verdict=Verdict(False, "calc.py:2 returns early for an empty list.", "", "high"),
            fingerprint="4d5e6f708192a3b4c5d6e7f8091a2b3c:1",
        ),
        Finding(
            path="worker.py",
            start_line=15,
            end_line=15,
            severity=Severity.MEDIUM,
            category="concurrency",
            claim="Threads are never joined.",
            evidence="worker.py:15",
            concern=FAILED_CONCERN,
            verdict=None,
            fingerprint="5e6f708192a3b4c5d6e7f8091a2b3c4d:1",
        ),
        Finding(
            path="app.py",
            start_line=1,
            end_line=1,
            severity=Severity.LOW,
            category="performance",
            claim="sqlite3 imported at module level.",
            evidence="app.py:1",
            concern=MISC_CONCERN,
            verdict=_confirmed("It is imported there.", "low"),
            fingerprint="6f708192a3b4c5d6e7f8091a2b3c4d5e:1",
            filtered="not on an added or changed line",
        ),
        Finding(
            path="worker.py",
            start_line=3,
            end_line=3,
            severity=Severity.HIGH,
            category="security",
            claim="Global mutable results dict.",
            evidence="worker.py:3",
            concern=ERRORS_CONCERN,
            verdict=_confirmed("It is global."),
            fingerprint="708192a3b4c5d6e7f8091a2b3c4d5e6f:1",
            suppressed="`orch-review: ignore` comment at line 3",
        ),
    ]


def _outcome(index: int, concern: str, status: str, **kwargs: object) -> ConcernOutcome:
    findings = tuple(f for f in sample_findings() if f.concern == concern)
    return ConcernOutcome(index, concern, status, findings, **kwargs)  # type: ignore[arg-type]


def sample_usage(cap_reached: str | None = "agent cap reached (8 agents)") -> UsageReport:
    """Usage of three roles, two agents served from the journal."""
    return UsageReport(
        by_role={
            "main": Usage(12_000, 1_500, 4_000, 30_000, 0.4125, 3),
            "subagent": Usage(40_000, 6_000, 9_000, 120_000, 1.05, 14),
            "verifier": Usage(22_000, 3_000, 5_000, 60_000, 0.5, 9),
        },
        agents_started={"main": 1, "subagent": 3, "verifier": 4},
        agents_from_journal={"main": 0, "subagent": 1, "verifier": 0},
        cap_reached=cap_reached,
    )


def sample_coverage(complete: bool = False) -> Coverage:
    """The ledger: two files covered, one left uncovered by the failed concern."""
    files = [
        LedgerFile("app.py", 6, ((1, 9),)),
        LedgerFile("worker.py", 12, ((1, 4), (20, 28))),
        LedgerFile("src/util, v2.py", 3, ((5, 7),)),
    ]
    covered_by = {"app.py": [1], "worker.py": [2]}
    if complete:
        covered_by["src/util, v2.py"] = [3]
    return build_coverage(
        files,
        covered_by=covered_by,
        reasons={"src/util, v2.py": "concern [4] failed: API overloaded (529) after 3 retries"},
        skipped=[SkippedPath("poetry.lock", "lock file or generated/vendored code")],
    )


def sample_report() -> Report:
    """The fixed report: incomplete (a failed and a skipped concern), every status present."""
    findings = ranked(sample_findings())

    def read(path: str) -> list[str] | None:
        return FILES.get(path)

    concerns = (
        _outcome(0, SQL_CONCERN, "reviewed", summary="One injection found."),
        _outcome(1, ERRORS_CONCERN, "reviewed", from_journal=True),
        _outcome(2, MISC_CONCERN, "reviewed"),
        _outcome(3, FAILED_CONCERN, "failed", error="API overloaded (529) after 3 retries"),
        _outcome(4, SKIPPED_CONCERN, "skipped", error="agent cap reached (8 agents)"),
    )
    return Report(
        scope="changes on feature against main (merge-base 1a2b3c4), 4 files",
        summary="Two real problems in app.py and worker.py; the rest is minor.",
        notes=("orch-review reviewed 1 file no concern had covered, in a sweep.",),
        findings=tuple(findings),
        concerns=concerns,
        usage=sample_usage(),
        wall_seconds=83.25,
        model="claude-opus-5-5",
        agent_model="claude-sonnet-5",
        warnings=("main agent: stopped at the turn limit (30 turns)",),
        scope_kind="base",
        filter_mode="added",
        snippets=collect_snippets(findings, read),
        coverage=sample_coverage(),
    )


def clean_report() -> Report:
    """A complete review with nothing to report."""
    return replace(
        sample_report(),
        findings=(),
        concerns=(ConcernOutcome(0, SQL_CONCERN, "reviewed"),),
        usage=sample_usage(cap_reached=None),
        warnings=(),
        snippets={},
        summary="",
        coverage=sample_coverage(complete=True),
    )


def mask(text: str) -> str:
    """Replace volatile values (the package version) so golden files survive releases."""
    return text.replace(__version__, "<version>")
