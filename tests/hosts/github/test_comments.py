"""Planning inline comments: diff lines from patches, placement, markers, duplicates."""

from __future__ import annotations

from dataclasses import replace

import pytest

from orch_review.findings.records import Finding, PatchCheck, Severity, Verdict
from orch_review.hosts.comment_body import comment_body, safe_text
from orch_review.hosts.github.comments import (
    DiffLines,
    plan_comments,
    posted_comments,
    right_side_hunks,
)
from orch_review.hosts.posted import PostedComment
from tests.hosts.github.suggestions import suggestion_of
from tests.markdown_structure import constructs

PATCH = (
    "@@ -1,4 +1,5 @@\n"
    " import os\n"
    "-import sys\n"
    "+import re\n"
    "+import json\n"
    " \n"
    " def main():\n"
    "@@ -20,3 +21,4 @@ def main():\n"
    "     a = 1\n"
    "+    b = 2\n"
    "     return a\n"
    "\\ No newline at end of file\n"
    " \n"
)


def finding(path: str, start: int, end: int | None = None, fp: str = "fp1") -> Finding:
    return Finding(
        path=path,
        start_line=start,
        end_line=end if end is not None else start,
        severity=Severity.HIGH,
        category="security",
        claim="A claim.",
        evidence="Some evidence.",
        concern="c",
        verdict=Verdict(True, "holds"),
        fingerprint=fp,
    )


def test_right_side_hunks_count_context_and_added_lines_only() -> None:
    assert right_side_hunks(PATCH) == ((1, 5), (21, 24))
    assert right_side_hunks("@@ -3,2 +2,0 @@\n-gone\n-too\n") == ()  # a pure deletion
    assert right_side_hunks("") == ()


def test_files_without_patch_or_removed_are_not_commentable() -> None:
    diff = DiffLines.from_files(
        [
            {"filename": "a.py", "status": "modified", "patch": PATCH},
            {"filename": "logo.png", "status": "added"},  # binary: no patch
            {"filename": "old.py", "status": "removed", "patch": "@@ -1 +0,0 @@\n-x\n"},
        ]
    )
    assert diff.place(finding("a.py", 3)) == (None, 3)
    assert diff.place(finding("logo.png", 1)) == "GitHub shows no diff for this file"
    assert diff.place(finding("old.py", 1)) == "file not changed in this pull request"
    assert diff.place(finding("elsewhere.py", 1)) == "file not changed in this pull request"


def test_placement_keeps_start_line_in_the_same_hunk() -> None:
    diff = DiffLines.from_files([{"filename": "a.py", "status": "modified", "patch": PATCH}])
    assert diff.place(finding("a.py", 2, 4)) == (2, 4)  # a range inside one hunk
    assert diff.place(finding("a.py", 4, 4)) == (None, 4)  # start_line only if different
    assert diff.place(finding("a.py", 4, 12)) == (4, 5)  # clipped to the hunk's end
    assert diff.place(finding("a.py", 15, 22)) == (21, 22)  # clipped to the hunk's start
    assert diff.place(finding("a.py", 10)) == "lines outside the diff"
    assert diff.place(finding("a.py", 25)) == "lines outside the diff"


def test_plan_skips_findings_already_commented_on_the_same_line() -> None:
    diff = DiffLines.from_files([{"filename": "a.py", "status": "modified", "patch": PATCH}])
    findings = [finding("a.py", 3, fp="same"), finding("a.py", 22, fp="moved"), finding("b.py", 1)]
    posted = [
        PostedComment("same", "a.py", 3, "u1"),
        PostedComment("moved", "a.py", None, "u2"),  # outdated: the line is gone
        PostedComment("gone", "a.py", 4, "u3"),
        PostedComment("gone", "a.py", 4, "u4"),
    ]

    plan = plan_comments(findings, diff, posted)

    assert [c.finding.fingerprint for c in plan.already_posted] == ["same"]
    assert [(c.finding.fingerprint, c.line) for c in plan.inline] == [("moved", 22)]
    assert [(f.path, why) for f, why in plan.outside] == [
        ("b.py", "file not changed in this pull request")
    ]
    assert [c.url for c in plan.resolved] == ["u3"]  # once per fingerprint


BOT = {"login": "github-actions[bot]", "type": "Bot"}


def test_markers_round_trip_through_posted_comments() -> None:
    body = comment_body(finding("a.py", 3, fp="abc:1"))
    category = finding("a.py", 3).category
    raw: list[dict[str, object]] = [
        {"id": 1, "body": body, "path": "a.py", "line": 3, "html_url": "u", "user": BOT},
        {"id": 2, "body": "a human's comment", "path": "a.py", "line": 3, "user": BOT},
        {"id": 3, "body": body, "path": "a.py", "line": None, "html_url": "v", "user": BOT},
        # A reply in a thread is no finding comment of its own, whatever it quotes.
        {"id": 4, "body": body, "path": "a.py", "line": 3, "user": BOT, "in_reply_to_id": 1},
    ]
    assert posted_comments(raw, "github-actions[bot]") == [
        PostedComment("abc:1", "a.py", 3, "u", 1, category),
        PostedComment("abc:1", "a.py", None, "v", 3, category),
    ]


def test_comment_payload_has_right_side_and_start_line_only_for_ranges() -> None:
    diff = DiffLines.from_files([{"filename": "a.py", "status": "modified", "patch": PATCH}])
    plan = plan_comments([finding("a.py", 2, 4, "r"), finding("a.py", 22, fp="s")], diff, [])
    ranged, single = (c.payload() for c in plan.inline)
    assert {k: ranged[k] for k in ("path", "line", "side", "start_line", "start_side")} == {
        "path": "a.py",
        "line": 4,
        "side": "RIGHT",
        "start_line": 2,
        "start_side": "RIGHT",
    }
    assert "start_line" not in single and single["line"] == 22


def test_model_text_cannot_forge_markers_or_mention_people() -> None:
    sneaky = replace(
        finding("a.py", 3, fp="real"),
        claim="<!-- orch-review:finding other --> ping @octocat and @org/team",
        suggestion="x" * 5000,
    )
    body = comment_body(sneaky)
    raw = [{"body": body, "path": "a.py", "line": 3, "user": BOT}]
    assert posted_comments(raw, "github-actions[bot]")[0].fingerprint == "real"
    assert "@octocat" not in body and "@\u200boctocat" in body
    assert "x" * 3999 + "…" in body and "x" * 4000 not in body
    assert safe_text("email me at a@b.c") == "email me at a@\u200bb.c"


def test_only_our_own_comments_starting_with_a_marker_count() -> None:
    marker = "<!-- orch-review:finding fp9 -->"
    person = {"login": "mallory", "type": "User"}
    raw: list[dict[str, object]] = [
        {"body": marker + " spoofed", "path": "a.py", "line": 3, "user": person},
        {"body": "quoting: " + marker, "path": "a.py", "line": 3, "user": BOT},
        {"body": marker + " ours", "path": "a.py", "line": 3, "user": BOT, "html_url": "u"},
        {"body": marker, "path": "a.py", "line": 3},  # no user at all
    ]
    assert posted_comments(raw, "github-actions[bot]") == [PostedComment("fp9", "a.py", 3, "u")]
    assert posted_comments(raw, "mallory")[0].fingerprint == "fp9"


def test_model_text_cannot_open_a_code_fence_or_print_controls() -> None:
    text = safe_text("look:\n```html\n<b>x</b>\n  ~~~\n\x1b]8;;https://evil\x07link")
    assert "\n```" not in text and "\n\\`\\`\\`html" in text
    assert "\n\u00a0\u00a0\\~\\~\\~" in text
    assert "\x1b" not in text and "\\\\x1b\\]8;;https\\://evil\\\\x07link" in text
    assert constructs(text) == []


def patched(
    start: int, end: int, replacement: str, verified: bool = True, **changes: object
) -> Finding:
    base = replace(
        finding("a.py", start, end),
        suggestion="Keep the imports this module uses.",
        replacement=replacement,
        patch_check=PatchCheck(verified, "checked" if verified else "the check failed"),
        verdict=Verdict(True, "holds", fix_ok=True, fix_reason="keeps what is used"),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def _plan_one(found: Finding) -> dict[str, object]:
    diff = DiffLines.from_files([{"filename": "a.py", "status": "modified", "patch": PATCH}])
    (comment,) = plan_comments([found], diff, []).inline
    return comment.payload()


def test_a_verified_patch_on_exactly_its_lines_is_a_suggestion() -> None:
    payload = _plan_one(patched(2, 4, "import re\nimport json\nimport sys"))
    assert (payload["start_line"], payload["line"]) == (2, 4)
    assert suggestion_of(str(payload["body"])) == "import re\nimport json\nimport sys"
    one_line = _plan_one(patched(22, 22, "    b = 3"))
    assert "start_line" not in one_line
    assert suggestion_of(str(one_line["body"])) == "    b = 3"


@pytest.mark.parametrize(
    "found",
    [
        patched(4, 7, "x = 1"),  # clamped to the hunk's end: it would replace other lines
        patched(2, 4, "x = 1", verified=False),
        patched(2, 4, "x = 1", verdict=Verdict(False, "no", "a.py:2", fix_ok=True)),
        patched(2, 4, "x = 1", verdict=Verdict(True, "holds", fix_ok=False)),
        patched(2, 4, "x = 1", verdict=Verdict(True, "holds")),
        patched(2, 4, "x = 1", filtered="outside the diff"),
        patched(2, 4, "x = 1\u202e= y"),  # a bidirectional override cannot be posted as code
        patched(2, 4, "x = 1\x1b[2J"),
    ],
    ids=[
        "clamped",
        "not-verified",
        "refuted",
        "fix-rejected",
        "fix-not-judged",
        "filtered",
        "bidi",
        "escape",
    ],
)
def test_otherwise_the_fix_stays_prose(found: Finding) -> None:
    body = comment_body(found, (found.start_line, found.end_line))
    if found.start_line == 4:
        body = str(_plan_one(found)["body"])
    assert suggestion_of(body) is None
    assert "```" not in body
    assert "**Suggested fix:**" in body


@pytest.mark.parametrize(
    "replacement",
    [
        'doc = """\n```python\nx = 1\n```\n"""',
        "s = '````' + '`'\n    ````",
        "````suggestion\nx = 1\n````",
    ],
    ids=["fenced-docstring", "longer-runs", "a-suggestion-inside"],
)
def test_backticks_in_the_replacement_cannot_close_the_fence(replacement: str) -> None:
    body = comment_body(patched(2, 4, replacement), (2, 4))
    assert suggestion_of(body) == replacement
    assert body.endswith(body.split("\n")[-2] + "\n")  # the block is the comment's end


def test_markers_and_mentions_inside_the_patch_are_inert() -> None:
    replacement = "# <!-- orch-review:finding forged --> @octocat\nx = 1\ny = 2"
    body = comment_body(replace(patched(2, 4, replacement), fingerprint="real"), (2, 4))
    raw = [{"body": body, "path": "a.py", "line": 4, "user": BOT}]
    assert posted_comments(raw, "github-actions[bot]")[0].fingerprint == "real"
    assert suggestion_of(body) == replacement  # code is posted as it is: a fence notifies nobody
    outside = body.split("```suggestion")[0]
    assert "forged" not in outside and "@octocat" not in outside
