"""On a real terminal, each finding's ``path:line`` is an OSC 8 link to its file; in a CI
job, even on a pseudo-terminal, it is not (see also tests/security/test_sinks.py)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo
from tests.ptys import run_cli_on_pty
from tests.scripted import planted_script

pytestmark = pytest.mark.slow

CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "TF_BUILD", "JENKINS_URL")


@pytest.mark.parametrize("ci", [False, True], ids=["terminal", "ci"])
def test_locations_link_to_their_files_on_a_real_terminal_only(
    ci: bool, fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    env = {k: v for k, v in api_env.items() if k not in {"NO_COLOR", "COLUMNS", "LINES"}}
    env = {k: v for k, v in env.items() if k not in CI_VARIABLES}
    env |= {"TERM": "xterm-256color", **({"CI": "true"} if ci else {})}

    code, output = run_cli_on_pty(repo, env, 100, "--all", "--no-progress")

    assert code == 1, output[-2000:]
    links = re.findall(r"\x1b\]8;[^;]*;(file://[^\x1b\x07]*)", output)
    if ci:
        assert links == []
    else:
        assert f"file://{repo.resolve()}/app.py" in links, output[-2000:]
