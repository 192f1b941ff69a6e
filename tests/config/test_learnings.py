"""The learnings file: strict parsing, safe appending, read from the right revision."""

from __future__ import annotations

import datetime as dt
import json
import tomllib
from pathlib import Path

import pytest

from orch_review.config import learnings
from orch_review.config.from_revision import load_learnings
from orch_review.config.learnings import (
    LEARNINGS_FILE,
    Learning,
    parse_learnings,
    to_toml,
    toml_comment,
)
from orch_review.errors import ConfigError
from orch_review.scope.git import open_repo
from orch_review.scope.resolve import ScopeRequest
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import commit

FP = "0123456789abcdef0123456789abcdef:1"
GOOD = f"""\
# Findings the team dismissed.
[[learning]]
fingerprint = "{FP}"
category = "security"
reason = "the query takes a constant"
who = "octo"
when = 2026-11-30

[[learning]]
glob = "tests/**"
reason = "fixtures hold fake secrets"
who = "Ada <ada@example.com>"
when = "2026-11-01"
"""


def test_a_good_file_reads_back_every_field() -> None:
    first, second = learnings.parse_learnings(GOOD)

    assert first == Learning(
        "the query takes a constant", "octo", "2026-11-30", fingerprint=FP, category="security"
    )
    assert second.glob == "tests/**" and second.fingerprint is None and second.when == "2026-11-01"
    assert learnings.dismissed([first, second]) == {
        FP: f"dismissed by a learning ({LEARNINGS_FILE}, octo): the query takes a constant"
    }


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[[learning]\n", "is not valid TOML"),
        ('learning = "x"\n', "array of tables"),
        ('other = 1\n', "unknown key `other`"),
        ('[[learning]]\nreason = "r"\nwho = "w"\nwhen = "2026-01-01"\n', "exactly one of"),
        (f'[[learning]]\nfingerprint = "{FP}"\nglob = "x"\nreason = "r"\nwho = "w"\n'
         'when = "2026-01-01"\n', "exactly one of"),
        ('[[learning]]\nfingerprint = "abc"\nreason = "r"\nwho = "w"\nwhen = "2026-01-01"\n',
         "`fingerprint` must be"),
        (f'[[learning]]\nfingerprint = "{FP}"\nreason = "r"\nwho = "w"\nwhen = "yesterday"\n',
         "`when` must be an ISO date"),
        (f'[[learning]]\nfingerprint = "{FP}"\nreason = ""\nwho = "w"\nwhen = "2026-01-01"\n',
         "`reason` must be a non-empty string"),
        (f'[[learning]]\nfingerprint = "{FP}"\nreason = "{"x" * 501}"\nwho = "w"\n'
         'when = "2026-01-01"\n', "at most 500"),
        (f'[[learning]]\nfingerprint = "{FP}"\nreason = "r"\nwho = "w"\nwhen = "2026-01-01"\n'
         'run = "rm -rf /"\n', "unknown key `run`"),
        (f'[[learning]]\nfingerprint = "{FP}"\ncategory = "Not A Category!"\nreason = "r"\n'
         'who = "w"\nwhen = "2026-01-01"\n', "`category` must be"),
    ],
)  # fmt: skip
def test_a_broken_file_is_a_config_error_naming_the_file_and_entry(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        learnings.parse_learnings(text)
    message = str(caught.value)
    assert says in message and LEARNINGS_FILE in message


def test_the_entry_at_fault_is_named() -> None:
    bad = GOOD + '\n[[learning]]\nglob = "x"\nreason = "r"\nwho = "w"\n'
    with pytest.raises(ConfigError, match="learning 3: `when`"):
        learnings.parse_learnings(bad)


def test_size_and_count_are_bounded() -> None:
    with pytest.raises(ConfigError, match="larger than"):
        learnings.parse_learnings("# " + "x" * learnings.MAX_BYTES)
    many = "".join(
        f'[[learning]]\nglob = "g{i}"\nreason = "r"\nwho = "w"\nwhen = "2026-01-01"\n'
        for i in range(learnings.MAX_LEARNINGS + 1)
    )
    with pytest.raises(ConfigError, match="at most 500"):
        learnings.parse_learnings(many)


def test_any_text_round_trips_through_a_toml_string() -> None:
    hostile = 'a "quote" \\ back\nnew line\t\x1b[31m\x7f\x85\u2028 ``` """'
    encoded = learnings.toml_string(hostile)
    assert "\n" not in encoded and "\x1b" not in encoded and "\x7f" not in encoded
    assert tomllib.loads(f"x = {encoded}")["x"] == hostile


def test_a_toml_string_shows_bidirectional_overrides_as_escapes() -> None:
    trojan = "allowed \u202e\u2066 if admin \u2069"
    encoded = learnings.toml_string(trojan)
    assert "\u202e" not in encoded and "\\u202e" in encoded
    assert tomllib.loads(f"x = {encoded}")["x"] == trojan


def test_appending_keeps_entries_and_comments(tmp_path: Path) -> None:
    path = tmp_path / LEARNINGS_FILE
    path.parent.mkdir()
    path.write_text(GOOD.rstrip("\n"), encoding="utf-8")  # no final newline
    new = learnings.new_learning(
        reason='said "no"\ntwice', who="octo", today=dt.date(2026, 12, 1), glob="docs/**"
    )

    learnings.append(tmp_path, new)

    text = path.read_text(encoding="utf-8")
    assert text.startswith(GOOD.rstrip("\n") + "\n\n[[learning]]\n")
    assert "# Findings the team dismissed." in text
    assert learnings.parse_learnings(text)[-1] == new and len(learnings.parse_learnings(text)) == 3


def test_appending_to_a_broken_file_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / LEARNINGS_FILE
    path.parent.mkdir()
    path.write_text("[[learning]\n", encoding="utf-8")
    new = learnings.new_learning(reason="r", who="w", today=dt.date(2026, 12, 1), glob="x")

    with pytest.raises(ConfigError, match="not valid TOML"):
        learnings.append(tmp_path, new)
    assert path.read_text(encoding="utf-8") == "[[learning]\n"


def test_a_pull_request_reads_the_base_revisions_learnings(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "x = 1\n", LEARNINGS_FILE: GOOD})
    base = git(repo, "rev-parse", "HEAD").strip()
    # The change dismisses more of its own findings: that must not count for its review.
    more = (
        GOOD
        + '\n[[learning]]\nglob = "**"\nreason = "ignore all"\nwho = "x"\nwhen = "2026-01-01"\n'
    )
    commit(repo, {LEARNINGS_FILE: more, "a.py": "x = 2\n"})
    opened = open_repo(repo)

    from_base = load_learnings(opened, ScopeRequest("base", base=base, head="HEAD"))
    local = load_learnings(opened, ScopeRequest("change"))

    assert len(from_base) == 2 and len(local) == 3


def test_learning_entries_are_one_table_each() -> None:
    entry = learnings.to_toml(
        learnings.Learning(reason="why", who="who", when="2026-12-01", fingerprint="fp")
    )
    assert tomllib.loads(entry) == {
        "learning": [{"fingerprint": "fp", "reason": "why", "who": "who", "when": "2026-12-01"}]
    }
    assert json.loads(entry.splitlines()[1].split(" = ", 1)[1]) == "fp"


@pytest.mark.parametrize("breaker", ["\n", "\r", "\r\n", "\v", "\f", "\x85", "\u2028", "\u2029"])
def test_a_comment_naming_the_finding_stays_one_line_of_valid_toml(breaker: str) -> None:
    claim = f'real claim{breaker}[[learning]]{breaker}glob = "**"\x00\x1b[2J\u202e\u200b'
    learning = Learning(
        "why", "octo", "2026-11-30", "a" * 32 + ":1", location="app.py:6", claim=claim
    )
    text = to_toml(learning)

    assert tomllib.loads(text) == {
        "learning": [
            {"fingerprint": "a" * 32 + ":1", "reason": "why", "who": "octo", "when": "2026-11-30"}
        ]
    }
    assert parse_learnings(text) == (learning,)
    assert text.splitlines()[:3] == [
        "[[learning]]",
        "# finding: app.py:6",
        '# claim: real claim [[learning]] glob = "**"[2J',
    ]


def test_a_long_claim_is_cut_in_its_comment() -> None:
    assert len(toml_comment("word " * 100)) <= 200
