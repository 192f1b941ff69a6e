"""The content under review cannot steer its own review or the outputs: through
``.gitattributes``, escape sequences and CI log commands in file names, source lines and
model text. Driven through the real CLI against the fake Messages API, as in CI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.gitrepos import commit
from tests.helpers import run_cli
from tests.scripted import Concern, ReviewScript
from tests.security.verdicts import HOST_RESULTS, HostVerdict

ESCAPES = "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b[2J\x1b]8;;https://evil.test\x07x\x9b2J"
FORGED = "\n::error file=app.py,line=1::FORGED\n  ::add-mask::secret ##[stop-commands]tok"
HOSTILE_NAME = "evil\x1b]0;t\x07##[stop-commands]x.py"
LINE_COMMAND = "::warning file=x::FORGED-BY-NAME.py"


def _record(request: pytest.FixtureRequest, attack: str, problems: list[str]) -> None:
    detail = "; ".join(problems)[:200]
    request.config.stash[HOST_RESULTS].append(HostVerdict(attack, not problems, detail))


def _problems(output: str) -> list[str]:
    """What in a CI log would be obeyed: escape sequences (NO_COLOR is set, so none at all
    is legitimate), BEL, C1 controls, lines the Actions runner executes."""
    problems = []
    if re.search("[\x1b\x07\x9b]", output):
        problems.append("escape sequence printed raw")
    for line in output.splitlines():
        if line.lstrip().startswith("::"):
            problems.append(f"workflow command line: {line[:60]!r}")
        if "##[" in line:
            problems.append(f"legacy command: {line[:60]!r}")
    return problems


# -- 1. a pull request marks its own code binary ----------------------------------------------


def test_a_pull_request_cannot_take_its_code_out_of_the_review(
    git_repo: GitRepoFactory,
    api_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    request: pytest.FixtureRequest,
) -> None:
    repo = git_repo({"app/a.py": "def run(x):\n    return int(x)\n"})
    git(repo, "checkout", "-q", "-b", "pr")
    # The PR's head is checked out, as actions/checkout leaves it.
    evil = "def run(x):\n    return eval(x)\n"
    commit(repo, {".gitattributes": "*.py -diff\n", "app/a.py": evil})
    fake_api.policy = ReviewScript(
        [
            Concern(
                "eval",
                "Check app/a.py for eval of input.",
                "grep -n 'eval(' app/a.py",
                path="app/a.py",
                category="security",
                claim="eval() of the caller's input runs arbitrary code.",
            )
        ]
    )

    planned = run_cli(repo, api_env, "plan", "--base", "main", "--head", "HEAD")
    result = run_cli(repo, api_env, "--base", "main", "--head", "HEAD")

    reviewed = result.returncode == 1 and "app/a.py:2" in result.stdout
    missed = [] if reviewed else [f"exit {result.returncode}: {result.stdout.strip()[-100:]}"]
    _record(request, "1. .gitattributes `*.py -diff` hides the PR's code", missed)
    assert planned.returncode == 0, planned.stderr
    assert "binary" not in planned.stdout and "app/a.py" in planned.stdout
    assert reviewed, result.stdout + result.stderr


# -- 3 and 4. CI log commands and terminal escapes ----------------------------------------------


def _hostile_repo(git_repo: GitRepoFactory) -> Path:
    return git_repo(
        {
            "app.py": f"def run(x):\n    return eval(x)  # {ESCAPES} ##[error]in-source\n",
            HOSTILE_NAME: "import os\nos.system(input())\n",
            LINE_COMMAND: "x = 1\n",
        }
    )


def _hostile_script() -> ReviewScript:
    return ReviewScript(
        [
            Concern(
                "eval",
                f"Check app.py for eval {ESCAPES}{FORGED}",
                "grep -n 'eval(' app.py",
                path="app.py",
                category="security",
                claim=f"eval of input {ESCAPES}{FORGED}",
            ),
            Concern(
                "system",
                "Check the evil file for os.system",
                "grep -n 'os.system' evil*",
                path=HOSTILE_NAME,
                category="security",
                claim="os.system of input",
            ),
        ],
        summary=f"Summary {ESCAPES}{FORGED}",
    )


@pytest.mark.parametrize("fmt", ["text", "hook"])
def test_review_output_obeys_no_escape_and_runs_no_ci_command(
    fmt: str,
    git_repo: GitRepoFactory,
    api_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    request: pytest.FixtureRequest,
) -> None:
    repo = _hostile_repo(git_repo)
    fake_api.policy = _hostile_script()
    env = {**api_env, "GITHUB_ACTIONS": "true"}

    if fmt == "hook":
        (repo / "app.py").write_text((repo / "app.py").read_text() + "y = eval('1')\n")
        git(repo, "add", "app.py")
        result = run_cli(repo, env, "hook", "--verbose", "app.py")
        expected = "app.py:"
    else:
        result = run_cli(repo, env, "--all")
        expected = "evil\\x1b]0;t\\x07# #[stop-commands]x.py:2"

    problems = _problems(result.stdout) + _problems(result.stderr)
    _record(request, f"3/4. escapes and CI commands in review output ({fmt})", problems)
    assert result.returncode == 1, result.stderr
    assert expected in result.stdout  # shown, defused, not dropped
    assert not problems, problems


def test_plan_shows_hostile_file_names_inert(
    git_repo: GitRepoFactory, api_env: dict[str, str], request: pytest.FixtureRequest
) -> None:
    repo = _hostile_repo(git_repo)

    result = run_cli(repo, {**api_env, "GITHUB_ACTIONS": "true"}, "plan", "--all")

    problems = _problems(result.stdout) + _problems(result.stderr)
    _record(request, "3/4. escapes and CI commands in file names (plan)", problems)
    assert result.returncode == 0, result.stderr
    assert ": :warning file=x::FORGED-BY-NAME.py" in result.stdout
    assert not problems, problems
