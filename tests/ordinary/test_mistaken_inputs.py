"""Mistaken inputs a new user or a CI job types, one table: each case runs the real
program in a real repository against the fake Messages API, and

* exits 0, 1, 2 or 3 (never 4, "this is a bug"), with the exit the table says;
* when it is an input error (exit 2), sends no request: not a cent is spent;
* says what the table says it says, in words a user can act on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script

Setup = Callable[[Path], None]


def _nothing(repo: Path) -> None:
    pass


def _write(name: str, text: str) -> Setup:
    def setup(repo: Path) -> None:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")

    return setup


def _origin(url: str) -> Setup:
    def setup(repo: Path) -> None:
        git(repo, "remote", "add", "origin", url)

    return setup


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    exit: int
    said: str  # words stderr must hold (whitespace-normalised); "" for none
    setup: Setup = _nothing
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "."


CASES: dict[str, Case] = {
    # --- commands and options in the wrong place, misspelt ---------------------------
    "misspelt command": Case(("plna",), 2, "did you mean `orch-review plan`"),
    "misspelt review": Case(("revew",), 2, "did you mean `orch-review review`"),
    "misspelt journal": Case(("jurnal", "stats"), 2, "did you mean `orch-review journal`"),
    "command after a flag": Case(("--all", "plan"), 0, ""),
    "command after an option with a value": Case(
        ("--config", "cfg.toml", "plan", "--all"), 0, "", _write("cfg.toml", "fail-on = 'low'\n")
    ),
    "option the command does not take": Case(
        ("--no-progress", "journal", "stats"), 2, "is not an option of `orch-review journal`"
    ),
    "a folder named like a command stays a path": Case(
        ("--all", "plan"), 0, "files matching plan", _write("plan/app.py", "import os\n")
    ),
    "review option before config": Case(
        ("--all", "config"), 2, "options go after the command they belong to"
    ),
    "unknown option": Case(("--al",), 2, "No such option"),
    # --- values ------------------------------------------------------------------------
    "bad fail-on": Case(("--all", "--fail-on", "bogus"), 2, "'bogus' is not one of"),
    "negative budget": Case(("--all", "--max-cost-usd", "-1"), 2, "greater than 0"),
    "budget not a number": Case(("--all", "--max-cost-usd", "abc"), 2, "not a valid float"),
    "zero timeout": Case(("--all", "--request-timeout", "0"), 2, "greater than 0"),
    "zero concurrency": Case(("--all", "--max-concurrent", "0"), 2, "from 1 to 100"),
    "zero agents": Case(("--all", "--max-agents", "0"), 2, "at least 1"),
    "shard out of range": Case(("--all", "--shard", "3/2"), 2, "K must be between 1 and N"),
    "unknown effort": Case(("--all", "--effort", "extreme"), 2, "is not one of"),
    "empty model": Case(("--all", "--model", ""), 2, "non-empty"),
    "bad sandbox": Case(("--all", "--sandbox", "maybe"), 2, "is not one of"),
    "budget from the environment": Case(
        ("--all",), 2, "ORCH_REVIEW_MAX_COST_USD", env={"ORCH_REVIEW_MAX_COST_USD": "abc"}
    ),
    "config not TOML": Case(("--all",), 2, ".orch-review.toml", _write(".orch-review.toml", "[[")),
    "config wrong type": Case(
        ("--all",), 2, "max-concurrent", _write(".orch-review.toml", "max-concurrent = 'ten'\n")
    ),
    "config file missing": Case(("--config", "nope.toml", "--all"), 2, "no such file"),
    # --- scopes ------------------------------------------------------------------------
    "unknown base": Case(("--base", "nonexistent"), 2, "unknown ref `nonexistent`"),
    "head without base": Case(("--head", "HEAD"), 2, "--head needs --base"),
    "two scopes": Case(("--staged", "--all"), 2, "cannot be combined"),
    "path that matches nothing": Case(("no/such.py",), 2, "matches no file"),
    "nothing staged": Case(("--staged",), 0, "nothing to review"),
    "clean branch": Case((), 0, "nothing to review"),
    "inside .git": Case(("--all",), 2, "not its working tree", cwd=".git"),
    # --- report files ------------------------------------------------------------------
    "report into a folder": Case(("--all", "--json", "."), 2, "is a directory"),
    "report over a source file": Case(("--all", "--json", "app.py"), 2, "is not a JSON file"),
    "two reports on stdout": Case(("--all", "--json", "-", "--sarif", "-"), 2, "both print"),
    "report and format on stdout": Case(
        ("--all", "--format", "json", "--json", "-"), 2, "both print on stdout"
    ),
    "baseline missing": Case(("--all", "--baseline", "missing.json"), 2, "does not exist"),
    # --- endpoints ---------------------------------------------------------------------
    "base URL without a scheme": Case(
        ("--all", "--no-progress"),
        2,
        "not an http:// or https:// URL",
        env={"ANTHROPIC_BASE_URL": "not-a-url"},
    ),
    "no credentials": Case(
        ("--all",), 2, "ANTHROPIC_API_KEY", env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
    ),
    # --- other commands ----------------------------------------------------------------
    "ask nothing": Case(("ask", ""), 2, "the question is empty"),
    "ask blanks": Case(("ask", "   "), 2, "the question is empty"),
    "ask with no review": Case(("ask", "why?"), 2, "no review to ask about"),
    "ask without a question": Case(("ask",), 2, "Missing argument"),
    "show-report with no review": Case(("journal", "show-report"), 2, "holds no report"),
    "eval missing file": Case(("eval", "missing.jsonl"), 2, "cannot read the case file"),
    "eval mine unreadable date": Case(
        ("eval", "mine", "--since", "yesterdayish", "-o", "m.jsonl"), 2, "--since"
    ),
    "eval mine zero limit": Case(("eval", "mine", "--limit", "0"), 2, "x>=1"),
    "pr not a number": Case(("pr", "abc"), 2, "is not a valid integer"),
    "pr without origin": Case(("pr", "5"), 2, "--repo OWNER/NAME"),
    "pr on GitLab": Case(
        ("pr", "5"), 2, "not on GitHub", _origin("git@gitlab.com:group/sub/demo.git")
    ),
    "mr not a number": Case(("mr", "x"), 2, "is not a valid integer"),
    "learn without reason": Case(("learn",), 2, "Missing option"),
    "merge nothing": Case(("merge",), 2, "Missing argument"),
    "config unknown option": Case(("config", "--bogus"), 2, "No such option"),
    "eval total cap zero": Case(
        ("eval", "c.jsonl", "--max-total-cost-usd", "0"), 2, "greater than 0"
    ),
    "eval review cap negative": Case(
        ("eval", "c.jsonl", "--max-cost-usd", "-1"), 2, "greater than 0"
    ),
    "journal subcommand misspelt": Case(("journal", "stat"), 2, "No such command"),
    "misspelt command after an option": Case(
        ("--config", "cfg.toml", "plna"), 2, "did you mean", _write("cfg.toml", "")
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_mistaken_input_gets_a_clear_answer_and_costs_nothing(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, name: str
) -> None:
    case = CASES[name]
    fake_api.policy = planted_script()
    repo = make_planted_repo(git_repo)
    case.setup(repo)

    result = run_cli(repo / case.cwd, {**api_env, **case.env}, *case.args)

    said = " ".join(result.stderr.split())
    assert result.returncode in (0, 1, 2, 3), said
    assert result.returncode == case.exit, said
    assert "this is a bug" not in said and "Traceback" not in said
    assert case.said in said
    if case.exit == 2:
        assert fake_api.message_requests == []
