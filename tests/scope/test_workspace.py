"""The workspace maps names as the model saw them back to the files under review."""

from __future__ import annotations

from pathlib import Path

from orch_review.scope.workspace import Workspace


def test_a_name_that_is_not_utf8_is_found_from_its_quoted_form(tmp_path: Path) -> None:
    raw = "caf\udce9.py"
    workspace = Workspace(tmp_path, [raw, "plain.py"], "key", {"lock\udcff.bin": "binary"})

    assert workspace.canonical_path('"caf\\351.py"') == raw
    assert workspace.canonical_path("caf\\351.py") == raw  # without git's quotes
    assert workspace.canonical_path("plain.py") == "plain.py"
    assert workspace.canonical_path('"lock\\377.bin"') == "lock\udcff.bin"
    assert workspace.canonical_path("other\\351.py") == "other\\351.py"  # not ours: as is
    assert '`"lock\\377.bin"` is out of scope' in (workspace.refusal("lock\udcff.bin") or "")


def test_a_finding_on_the_quoted_name_is_recorded_on_the_file(tmp_path: Path) -> None:
    from orch_review.engine.agents.tools import parse_findings

    raw = "caf\udce9.py"
    with open(tmp_path / raw, "w", encoding="utf-8", errors="surrogateescape") as stream:
        stream.write("a = 1\nb = 2\n")
    workspace = Workspace(tmp_path, [raw], "key")
    finding = {
        "path": '"caf\\351.py"',
        "start_line": 2,
        "end_line": 2,
        "severity": "low",
        "category": "correctness",
        "claim": "c",
        "evidence": "e",
    }

    reported = parse_findings(
        {"findings": [finding]}, "k", workspace.line_count, workspace.canonical_path
    )

    assert [f.path for f in reported.findings] == [raw]
