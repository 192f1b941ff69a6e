"""The walkthrough the model writes is validated: changed files only, one bounded line each,
and Mermaid in the accepted subset, written out again from its parsed structure."""

from __future__ import annotations

import json

import pytest

from orch_review.findings.walkthrough import (
    MAX_NODES,
    SUMMARY_LIMIT,
    MermaidError,
    parse_mermaid,
    parse_walkthrough,
)

CHANGED = ["app.py", "lib/db.py"]


def _answer(files: object, diagram: object = "") -> str:
    return "Here it is:\n" + json.dumps({"files": files, "diagram": diagram}) + "\nDone."


def test_a_flowchart_is_parsed_and_written_out_canonically() -> None:
    chart = parse_mermaid('graph TD;\n  a["App"] --> b[DB]\n  b -.-> c\n  a -->|reads| c;\n')
    assert chart.direction == "TD"
    assert dict(chart.nodes) == {"a": "App", "b": "DB", "c": "c"}
    assert chart.render() == (
        'flowchart TD\n  a["App"]\n  b["DB"]\n  c["c"]\n  a --> b\n  b -.-> c\n  a -->|reads| c'
    )
    assert parse_mermaid(chart.render()) == chart


@pytest.mark.parametrize(
    "text",
    [
        "sequenceDiagram\n  a->>b: hi",
        "flowchart XY\n  a --> b",
        'flowchart LR\n  a --> b\n  click a "javascript:alert(1)"',
        "flowchart LR\n  a --> b\n  style a fill:#f00",
        'flowchart LR\n  a["<img src=x onerror=alert(1)>"] --> b',
        'flowchart LR\n  a["@all #1 `x`"] --> b',
        "flowchart LR\n  a --> end",
        "flowchart LR\n  a --x b",
        "flowchart LR\n  %%{init: {'securityLevel': 'loose'}}%%\n  a --> b",
        "flowchart LR\n  a",
        "flowchart LR\n" + "\n".join(f"  n{i} --> n{i + 1}" for i in range(MAX_NODES)),
        "",
    ],
)
def test_anything_outside_the_subset_is_refused(text: str) -> None:
    with pytest.raises(MermaidError):
        parse_mermaid(text)


def test_entries_keep_changed_files_only_and_one_bounded_line() -> None:
    walkthrough = parse_walkthrough(
        _answer(
            [
                {"paths": ["app.py", "nope.py"], "summary": "Adds\nfind_user()\x1b[31m. " * 50},
                {"paths": "lib/db.py", "summary": "Opens the database."},
                {"paths": ["app.py"], "summary": "Again."},
                {"paths": ["x.py"], "summary": "Not changed."},
                "junk",
            ],
            'flowchart LR\n  a["app"] --> b["db"]',
        ),
        CHANGED,
    )
    assert walkthrough is not None
    assert [e.paths for e in walkthrough.entries] == [("app.py",), ("lib/db.py",)]
    first = walkthrough.entries[0].summary
    assert len(first) <= SUMMARY_LIMIT and "\n" not in first and "\x1b" not in first
    assert walkthrough.diagram == 'flowchart LR\n  a["app"]\n  b["db"]\n  a --> b'


def test_a_bad_diagram_is_dropped_and_one_component_gets_none() -> None:
    bad = parse_walkthrough(
        _answer([{"paths": ["app.py"], "summary": "s"}], "graph LR\n  a"), CHANGED
    )
    assert bad is not None and bad.diagram is None
    single = parse_walkthrough(
        _answer([{"paths": ["app.py"], "summary": "s"}], "flowchart LR\n  a --> b"), ["app.py"]
    )
    assert single is not None and single.diagram is None


@pytest.mark.parametrize("answer", ["", "no json here", "[1, 2]", _answer([]), _answer("x")])
def test_an_unusable_answer_is_no_walkthrough(answer: str) -> None:
    assert parse_walkthrough(answer, CHANGED) is None
