"""What Ctrl-C says is true: one reply or several, with the journal or without it."""

from __future__ import annotations

import signal

import pytest

from tests.cli.test_cli_resume import _report_turn, _signal_while_held, _workflow_turn
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo


@pytest.mark.parametrize(
    ("count", "journal", "on_the_way", "at_the_end"),
    [
        (1, "true", "the 1 reply on the way is kept in the journal if it arrives", "resume"),
        (2, "true", "the 2 replies on the way are kept in the journal if they arrive", "resume"),
        (1, "false", "the 1 reply on the way is waited for, but not kept", "nothing was kept"),
        (2, "false", "the 2 replies on the way are waited for, but not kept", "nothing was kept"),
    ],
)
def test_ctrl_c_says_what_is_kept(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    count: int,
    journal: str,
    on_the_way: str,
    at_the_end: str,
) -> None:
    repo = make_planted_repo(git_repo)
    env = {**api_env, "ORCH_REVIEW_JOURNAL": journal}

    held = _workflow_turn if count == 1 else _report_turn  # the main agent's, or two subagents'
    status, said, _ = _signal_while_held(fake_api, repo, env, held, count, signal.SIGINT)

    words = " ".join(said.split())
    assert status == 130, said
    assert on_the_way in words
    assert at_the_end in words.rsplit("interrupted;", 1)[-1]
    if journal == "false":
        assert "in the journal" not in words
