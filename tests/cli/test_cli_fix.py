"""`orch-review --fix` as a subprocess: verified patches reach the working tree, never the
index or a commit, and only where the file still has the reviewed lines."""

from __future__ import annotations

import dataclasses

from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli, skip_without_bubblewrap
from tests.scripted import PLANTED_FILES, Concern, ReviewScript, findings_in_task, reject_fix

SAFE_QUERY = (
    '    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))\n'
    "    row = cursor.fetchone()\n"
    "    return row"
)
CALC = "def half(x):\n    return x / 2\n"


def _script() -> ReviewScript:
    return ReviewScript(
        [
            Concern(
                "injection",
                "Check app.py for SQL injection.",
                "grep -n 'execute(f' app.py",
                path="app.py",
                category="security",
                claim="The query interpolates `name`.",
                replacement=lambda _: SAFE_QUERY,
                span=2,
            ),
            Concern(
                "fetches",
                "Check how app.py fetches rows.",
                "grep -n 'fetchone' app.py",
                path="app.py",
                severity="low",
                claim="fetchone() hides a missing user.",
                replacement=lambda text: text + "  # None when absent",
            ),
            Concern(
                "division",
                "Check calc.py for float division.",
                "grep -n ' / ' calc.py",
                path="calc.py",
                severity="medium",
                claim="half() returns a float.",
                replacement=lambda text: text.replace("/", "//"),
            ),
        ]
    )


def test_fix_applies_verified_patches_to_the_working_tree_only(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"README.md": "# demo\n"})
    skip_without_bubblewrap(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    write(repo, {"app.py": PLANTED_FILES["app.py"], "calc.py": CALC})
    git(repo, "add", "app.py", "calc.py")
    edited = CALC.replace("x / 2", "x / 2.0")  # edited after staging: not what is reviewed
    write(repo, {"calc.py": edited})
    fake_api.policy = _script()
    env = {**api_env, "ORCH_REVIEW_SUGGESTION_CHECK": "python3 -m py_compile {path}"}

    result = run_cli(repo, env, "--staged", "--fix", "--no-progress")

    assert result.returncode == 1, result.stderr  # the exit code still says "findings"
    fixed = (repo / "app.py").read_text()
    assert fixed == PLANTED_FILES["app.py"].replace(
        "    cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")\n"
        "    return cursor.fetchone()\n",
        SAFE_QUERY + "\n",
    )
    assert (repo / "calc.py").read_text() == edited
    # The index and the commits are as they were.
    assert git(repo, "show", ":app.py") == PLANTED_FILES["app.py"]
    assert git(repo, "show", ":calc.py") == CALC
    assert git(repo, "rev-parse", "HEAD").strip() == head
    listed = result.stderr.split("--fix: ", 1)[1]
    assert listed.startswith("applied 1 of 3 verified patches:")
    assert "  applied      app.py:6-7\n" in listed
    assert "  not applied  app.py:7: overlaps the patch of lines 6-7\n" in listed
    assert "  not applied  calc.py:2: the file changed since the review\n" in listed


def test_without_fix_nothing_is_written(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"app.py": PLANTED_FILES["app.py"]})
    fake_api.policy = _script()

    result = run_cli(repo, api_env, "--all", "--no-progress")

    assert result.returncode == 1, result.stderr
    assert (repo / "app.py").read_text() == PLANTED_FILES["app.py"]
    assert "patch (verified; `orch-review --fix` applies it):" in result.stdout
    assert "--fix:" not in result.stderr


def test_a_fix_the_verifier_rejects_is_shown_as_prose_and_never_applied(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = git_repo({"app.py": PLANTED_FILES["app.py"], "calc.py": CALC})
    injection, _, division = _script().concerns
    # The finding holds, but the fix its reporter proposed does more than fix it.
    rejected = dataclasses.replace(
        injection,
        replacement=lambda _: SAFE_QUERY + "\n    __import__('os').system('id')",
        fix=reject_fix,
    )
    fake_api.policy = ReviewScript([rejected, division])

    result = run_cli(repo, api_env, "--all", "--fix", "--verbose", "--no-progress")

    assert result.returncode == 1, result.stderr
    assert (repo / "app.py").read_text() == PLANTED_FILES["app.py"]
    assert (repo / "calc.py").read_text() == CALC.replace("/", "//")  # the approved one
    assert "--fix: applied 1 of 1 verified patch:" in result.stderr
    assert "app.py" not in result.stderr.split("--fix: ", 1)[1]
    shown = " ".join(result.stdout.split())
    assert "patch not verified: the verifier did not approve the fix: " in shown
    assert " ".join(reject_fix({}, "")[1].split()) in shown
    assert shown.count("patch (verified;") == 1
    # The verifier was shown the proposed text to judge, as data.
    tasks = {r.model_request().first_user_text for r in fake_api.requests_for("verifier")}
    fixes = {f["proposed_fix"] for task in tasks for f in findings_in_task(task)}
    assert fixes == {SAFE_QUERY + "\n    __import__('os').system('id')", "    return x // 2"}
