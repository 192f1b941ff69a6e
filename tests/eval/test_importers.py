"""Importers read the public sets' published formats (small fixtures here, nothing is
downloaded) and write cases `orch-review eval` accepts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orch_review.errors import ExitCode, UsageError
from orch_review.eval.cases import ExpectedIssue, load_cases
from orch_review.eval.importers import IMPORTERS
from orch_review.findings.records import Severity
from tests.helpers import run_cli

SHA_BASE, SHA_1, SHA_2 = "0" * 40, "1" * 40, "2" * 40


def _swr_record(instance: str, introduced: bool) -> dict[str, object]:
    change = {
        "change_type": "F.2 Logic",
        "change_introducing": {"commit_sha": SHA_1, "code_snippet": "x = y[0]"},
        "change_discussion": {
            "discussion_summary": "Empty input crashes.",
            "first_mention_timestamp": "2025-01-02T00:00:00Z",
            "original_reviewer_comment": "This fails when y is empty.",
        },
        "change_resolve_info": {"commit_sha": "3" * 40, "code_snippet": "..."},
    }
    return {
        "repo": "astropy/astropy",
        "instance_id": instance,
        "pr_title": "A change",
        "pr_statement": "Why",
        "change_introduced": introduced,
        "base_commit": SHA_BASE,
        "created_at": "2025-01-01T00:00:00Z",
        "changes": [change] if introduced else [],
        "pr_commits": [
            {"sha": SHA_1, "message": "first", "diff": [{"file": "a.py", "patch": "@@"}]},
            {"sha": SHA_2, "message": "second", "diff": [{"file": "a.py", "patch": "@@"}]},
        ],
        "pr_timeline": [],
        "all_commits": [],
    }


def test_swr_bench(tmp_path: Path) -> None:
    source = tmp_path / "swr_datasets_d5c5.jsonl"
    records = [_swr_record("astropy__astropy-187", True), _swr_record("astropy__astropy-9", False)]
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    bug, clean = IMPORTERS["swr-bench"](source)

    assert (bug.id, bug.repo, bug.base, bug.head) == (
        "swr-astropy__astropy-187",
        "https://github.com/astropy/astropy.git",
        SHA_BASE,
        SHA_2,  # the last commit of the pull request
    )
    assert bug.expected == (ExpectedIssue("[F.2 Logic] This fails when y is empty."),)
    assert clean.clean and clean.head == SHA_2


def test_swe_prbench(tmp_path: Path) -> None:
    root = tmp_path / "swe-prbench-data" / "dataset"
    (root / "annotations").mkdir(parents=True)
    prs = [{"task_id": "requests__6001", "repo": "psf/requests", "pr_number": 6001}]
    (root / "prs.jsonl").write_text(json.dumps(prs[0]) + "\n", encoding="utf-8")
    annotation = {
        "comments": [
            {
                "comment_id": "c1",
                "body": "Leaks the socket.",
                "file": "src/a.py",
                "line": 40,
                "severity": "P0",
            },
            {
                "comment_id": "c2",
                "body": "Typo in docstring.",
                "file": None,
                "line": None,
                "severity": "P2",
            },
            {"comment_id": "c3", "body": "Thanks, LGTM!", "file": None, "line": None},
        ],
        "substantive_comment_ids": ["c1", "c2"],
    }
    (root / "annotations" / "requests__6001_human.json").write_text(
        json.dumps(annotation), encoding="utf-8"
    )

    (case,) = IMPORTERS["swe-prbench"](tmp_path / "swe-prbench-data")

    assert (case.id, case.repo) == ("prb-requests__6001", "https://github.com/psf/requests.git")
    assert (case.base, case.head) == ("origin/HEAD", "origin/pull/6001/head")
    assert case.expected == (
        ExpectedIssue("Leaks the socket.", "src/a.py", 40, 40, Severity.HIGH),
        ExpectedIssue("Typo in docstring.", None, None, None, Severity.LOW),
    )


def _golden(tmp_path: Path) -> Path:
    folder = tmp_path / "golden_comments"
    folder.mkdir()
    entries = [
        {
            "pr_title": "Span buffer",
            "url": "https://github.com/getsentry/sentry/pull/93824",
            "comments": [
                {
                    "comment": "Metric tags use shard and shards.",
                    "severity": "Medium",
                    "category": "bug",
                },
                {"comment": "The isinstance check is always false.", "severity": "Critical"},
            ],
        }
    ]
    (folder / "sentry.json").write_text(json.dumps(entries), encoding="utf-8")
    return folder


def test_code_review_bench(tmp_path: Path) -> None:
    (case,) = IMPORTERS["code-review-bench"](_golden(tmp_path))

    assert case.id == "crb-sentry-getsentry-sentry-93824"
    assert (case.repo, case.base, case.head) == (
        "https://github.com/getsentry/sentry.git",
        "origin/HEAD",
        "origin/pull/93824/head",
    )
    assert [(e.description[:11], e.severity, e.located) for e in case.expected] == [
        ("Metric tags", Severity.MEDIUM, False),
        ("The isinsta", Severity.HIGH, False),
    ]


def test_hostile_fields_are_refused(tmp_path: Path) -> None:
    record = _swr_record("x", True) | {"repo": "--upload-pack=evil/x"}
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match="must be a GitHub owner/name"):
        IMPORTERS["swr-bench"](source)
    record = _swr_record("x", True)
    record["pr_commits"] = [{"sha": "--output=/tmp/x"}]
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match="not a revision git would accept"):
        IMPORTERS["swr-bench"](source)


@pytest.mark.slow
def test_the_import_command_writes_a_case_file_eval_accepts(tmp_path: Path) -> None:
    out = tmp_path / "cases" / "crb.jsonl"

    result = run_cli(
        tmp_path,
        dict(os.environ),
        "eval",
        "import",
        "code-review-bench",
        str(_golden(tmp_path)),
        "--output",
        str(out),
    )

    assert result.returncode == ExitCode.CLEAN, result.stderr
    assert "1 case, 0 clean, 2 expected issues" in result.stderr
    assert [c.id for c in load_cases(out)] == ["crb-sentry-getsentry-sentry-93824"]


def _aacr_sample(tmp_path: Path) -> Path:
    """Two pull requests in the shape of AACR-Bench's dataset/positive_samples.json."""
    comment = {
        "is_ai_comment": False,
        "source_model": "",
        "category": "Code Defect",
        "context": "Diff Level",
    }
    records = [
        {
            "change_line_count": 40,
            "project_main_language": "Python",
            "source_commit": SHA_BASE,
            "target_commit": SHA_1,
            "githubPrUrl": "https://github.com/psf/requests/pull/6001",
            "category": "Bug Fix",
            "comments": [
                comment
                | {"note": "Off by one.", "path": "a.py", "side": "right", "from_line": 3,
                   "to_line": 5},
                # A range written backwards, as one record of the set has it.
                comment
                | {"note": "Leaks.", "path": "b.py", "side": "right", "from_line": 9,
                   "to_line": 7},
                comment
                | {"note": "Was wrong before.", "path": "a.py", "side": "left", "from_line": 2,
                   "to_line": 2},
                comment | {"note": "  ", "path": "a.py", "side": "right", "from_line": 1},
            ],
        },
        {
            "change_line_count": 3,
            "project_main_language": "Go",
            "source_commit": SHA_1,
            "target_commit": SHA_2,
            "githubPrUrl": "https://github.com/golang/go/pull/7",
            "category": "Feature",
            "comments": [],
        },
    ]  # fmt: skip
    folder = tmp_path / "aacr-bench" / "dataset"
    folder.mkdir(parents=True)
    (folder / "positive_samples.json").write_text(json.dumps(records), encoding="utf-8")
    (folder / "negative_samples.json").write_text(json.dumps(records[:1]), encoding="utf-8")
    return tmp_path / "aacr-bench"


def test_aacr_bench(tmp_path: Path) -> None:
    first, second = IMPORTERS["aacr-bench"](_aacr_sample(tmp_path))

    assert first.id == "aacr-psf__requests-6001"
    # The benchmark's converter reviews target_commit against source_commit.
    assert (first.repo, first.base, first.head) == (
        "https://github.com/psf/requests.git",
        SHA_BASE,
        SHA_1,
    )
    assert [(e.description, e.path, e.start_line, e.end_line) for e in first.expected] == [
        ("Off by one.", "a.py", 3, 5),
        ("Leaks.", "b.py", 7, 9),
        ("Was wrong before.", "a.py", None, None),  # the old side: for the judge
    ]
    assert (second.base, second.head, second.clean) == (SHA_1, SHA_2, True)


def _bc_sample(tmp_path: Path) -> Path:
    """A finding and a clean change in the shape of BC-Bench's dataset/codereview.jsonl."""
    patch = (
        "diff --git a/src/Key.Codeunit.al b/src/Key.Codeunit.al\n"
        "new file mode 100644\n--- /dev/null\n+++ b/src/Key.Codeunit.al\n@@ -0,0 +1,2 @@\n"
        "+codeunit 50100 Key\n+{ procedure Store(K: Text) begin end; }\n"
    )
    common = {
        "repo": "microsoft/BCApps",
        "base_commit": SHA_BASE,
        "created_at": "2026-05-15T00:00:00Z",
        "environment_setup_version": "27.0",
        "project_paths": [],
        "metadata": {"area": "security"},
        "patch": patch,
        "match_line_tolerance": 2,
        "domain": "security",
        "category": "code-review",
        "source": "vsoadmin",
    }
    rows = [
        common
        | {
            "instance_id": "synthetic__security-008",
            "expect_findings": True,
            "description": "True positive",
            "expected_comments": [
                {"file": "src/Key.Codeunit.al", "line_start": 2, "line_end": 2,
                 "domain": "security", "severity": "critical", "body": "Use SecretText.",
                 "articles": ["security/secret-text"]},
            ],
        },
        common
        | {
            "instance_id": "synthetic__security-001",
            "expect_findings": False,
            "description": "Clean",
            "expected_comments": [],
        },
    ]  # fmt: skip
    path = tmp_path / "codereview.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_bc_bench(tmp_path: Path) -> None:
    finding, clean = IMPORTERS["bc-bench"](_bc_sample(tmp_path))

    assert finding.id == "bc-synthetic__security-008"
    assert finding.repo == "https://github.com/microsoft/BCApps.git"
    assert (finding.base, finding.head) == (SHA_BASE, SHA_BASE)  # the patch makes the head
    assert finding.patch is not None and finding.patch.startswith("diff --git")
    assert [(e.path, e.start_line, e.severity) for e in finding.expected] == [
        ("src/Key.Codeunit.al", 2, Severity.HIGH)
    ]
    assert clean.clean and clean.patch == finding.patch
    # The case file round-trips: a patch case has no head of its own.
    (line,) = [json.dumps(finding.to_json())]
    assert "head" not in json.loads(line)
    reread = load_cases(_write(tmp_path / "again.jsonl", line))
    assert reread == [finding]


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
