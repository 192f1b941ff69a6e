"""The library leaves its caller's environment alone, so the secrets stay in it: a hijacked
agent that prints its shell's environment must still find none of them.

The CLI also removes them from its own process; a program calling ``review()`` does not, so
only the environment each child is given keeps them out.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from orch_review import ReviewOptions, review
from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo
from tests.security.attacks import ATTACKS, ENV_CANARIES, HijackedModel

PRINT_ENV = next(a for a in ATTACKS if a.key == "attack-print-env")


def test_an_agent_shell_of_a_library_review_gets_no_secret_of_the_caller(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_planted_repo(git_repo)
    canaries = {name: f"CANARY-{name}-{secrets.token_hex(8)}" for name in ENV_CANARIES}
    for name, value in api_env.items():
        monkeypatch.setenv(name, value)
    for name, value in canaries.items():
        if name != "SECRET":
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("ORCH_REVIEW_TEST_SECRET", canaries["SECRET"])
    values = {"HOME": api_env["HOME"], "REPO": str(repo), "URL": "-", "PORT": "-"}
    model = HijackedModel(values, attacks=(PRINT_ENV,))
    fake_api.policy = model
    before = dict(os.environ)

    # `off`: the weakest mode, where the environment given is all that stands in the way.
    review(repo, ReviewOptions(all_files=True, settings={"sandbox": "off", "journal": False}))

    assert dict(os.environ) == before
    printed = [text for (key, _), (text, _) in model.outcomes.items() if key == PRINT_ENV.key]
    assert printed and all("PATH=" in text for text in printed)  # the shell did print it
    for name, value in canaries.items():
        assert not any(value in text for text in printed), f"{name} reached an agent's shell"
    assert not any(
        value in r.raw.decode("utf-8", "replace")
        for r in fake_api.requests
        for value in canaries.values()
    )
