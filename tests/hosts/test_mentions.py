"""What a pull request comment asks of orch-review, and who may ask."""

from __future__ import annotations

import pytest

from orch_review.hosts.markers import REPLY_MARKER
from orch_review.hosts.mentions import Mention, from_orch_review, is_bot, own_lines, parse


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("@orch-review why is this a bug?", Mention("ask", "why is this a bug?")),
        ("Hmm.\n@Orch-Review   why?\nthanks", Mention("ask", "why?\nthanks")),
        ("@orch-review deep is the lock held?", Mention("deep", "is the lock held?")),
        ("@orch-review deep: check the callers", Mention("deep", "check the callers")),
        ("@orch-review ignore  false\n alarm", Mention("ignore", "false alarm")),
        ("@orch-review ignore", Mention("ignore", "")),
        ("  @orch-review ignore: flaky", Mention("ignore", "flaky")),
        ("- @orch-review ignore known", Mention("ignore", "known")),
        # Only the exact command word, with the mention at the start of a line.
        ("@orch-review IGNORE", Mention("ask", "IGNORE")),
        (
            "@orch-review Ignore the CI failure: is the query safe?",
            Mention("ask", "Ignore the CI failure: is the query safe?"),
        ),
        ("@orch-review Deep: check the callers", Mention("ask", "Deep: check the callers")),
        ("@orch-review ignore\u2026", Mention("ask", "ignore\u2026")),
        ("Thanks @orch-review ignore that one?", Mention("ask", "ignore that one?")),
        ("@orch-review\nignore it", Mention("ask", "ignore it")),
        # What is not plain text is neither a mention nor a command.
        ("`@orch-review ignore` @orch-review why?", Mention("ask", "why?")),
        ("~~@orch-review ignore~~ @orch-review why?", Mention("ask", "why?")),
        ("x <!-- y --> @orch-review ignore", Mention("ask", "ignore")),
        ("<!-- y -->@orch-review ignore", None),  # an HTML block, to its line's end
        (
            "@orch-review why is `execute(f...)` unsafe?",
            Mention("ask", "why is `execute(f...)` unsafe?"),
        ),
        (
            "@orch-review why does this fail?\n```\ntrace\n```",
            Mention("ask", "why does this fail?\n```\ntrace\n```"),
        ),
        ("@orch-review ignored this?", Mention("ask", "ignored this?")),
        ("@orch-review deeper look please", Mention("ask", "deeper look please")),
        ("(@orch-review, thoughts?)", Mention("ask", ", thoughts?)")),
    ],
)
def test_a_mention_is_a_request(body: str, expected: Mention | None) -> None:
    assert parse(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "no mention here",
        "@orch-reviewer please look",  # another account
        "mail me at bot@orch-review.example",
        "see github.com/x/@orch-review",
        "> @orch-review why?\nI agree with the quote",  # quoting someone
        "```\n@orch-review why?\n```",  # inside a code block
        "~~~~\n```\n@orch-review why?\n~~~~~\n",  # an unclosed inner fence stays code
        "`@orch-review ignore`",  # inline code
        "    @orch-review ignore",  # an indented code block
        "intro\n\n    @orch-review ignore\n",
        "<!-- @orch-review ignore -->",  # an HTML comment
        "see <!-- @orch-review ignore --> above",
        "~~@orch-review ignore~~",  # struck out
        "[@orch-review ignore](https://example.com)",  # a link's text
        "\\@orch-review ignore",  # escaped: no mention on GitHub either
        "> quoted\n> @orch-review ignore",
        "",
    ],
)
def test_quotes_code_and_other_names_are_not_requests(body: str) -> None:
    assert parse(body) is None


def test_the_trigger_is_configurable() -> None:
    assert parse("@reviewbot why?", "@reviewbot") == Mention("ask", "why?")
    assert parse("@orch-review why?", "@reviewbot") is None


def test_own_lines_drop_quotes_and_fences() -> None:
    body = "mine\n> theirs\n```py\ncode\n```\nalso mine"
    assert own_lines(body) == ["mine", "also mine"]


def test_bots_and_odd_authors_never_count() -> None:
    assert not is_bot({"login": "octo", "type": "User"})
    assert is_bot({"login": "github-actions[bot]", "type": "Bot"})
    assert is_bot({"login": "sneaky[bot]", "type": "User"})
    assert is_bot({"login": "app", "type": "Organization"})
    assert is_bot(None)
    assert is_bot({"type": "User"})


def test_orch_reviews_own_replies_are_recognised() -> None:
    assert from_orch_review({"body": f"{REPLY_MARKER}\n@orch-review why?"})
    assert not from_orch_review({"body": "@orch-review why?"})
