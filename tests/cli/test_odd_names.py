"""File names git allows and UTF-8 does not (or that hold control characters), end to end:
reviewed in every scope, a finding on them reported in every format, shown escaped."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.scripted import Concern, ReviewScript

#: b"bad\xff.py" as Python names it (os.fsdecode).
BAD = "bad\udcff.py"
#: A name with an ANSI escape, a tab and a newline in it.
ANSI = "ansi\x1b[31m\tx\n.py"
BUGGY = "import os\nos.system(input())\n"

SCRIPT = ReviewScript(
    [
        # grep prints the name as its bytes: the model sees them escaped (bad\377.py) and
        # cites the file that way.
        Concern(
            "shellbad",
            'Check "bad\\377.py" for shell injection (shellbad).',
            "grep -Hn os.system -- bad*.py",
            claim="input passed to os.system: shell injection.",
        ),
        # The model cites the other file in git's quoted form, as orch-review lists it.
        Concern(
            "shellansi",
            'Check "ansi\\033[31m\\tx\\n.py" for shell injection (shellansi).',
            "grep -n os.system -- ansi*",
            path='"ansi\\033[31m\\tx\\n.py"',
            claim="input from the user runs as a shell command.",
        ),
    ]
)


def _repo(git_repo: GitRepoFactory) -> Path:
    return git_repo({"README.md": "# demo\n"})


def _add(repo: Path) -> None:
    write(repo, {BAD: BUGGY, ANSI: BUGGY})


def _check_terminal(result: subprocess.CompletedProcess[str]) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output and "this is a bug" not in output
    assert "\x1b" not in output  # the name's escape is never printed raw
    assert '"bad\\377.py":2' in result.stdout
    assert '"ansi\\033[31m\\tx\\n.py":2' in result.stdout
    assert "shell injection" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("scope", ["default", "staged", "all"])
def test_odd_names_are_reviewed_in_every_scope(
    scope: str,
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
) -> None:
    repo = _repo(git_repo)
    _add(repo)
    args: list[str] = []
    if scope == "staged":
        git(repo, "add", "-A")
        args = ["--staged"]
    elif scope == "all":
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "odd names")
        args = ["--all"]
    fake_api.policy = SCRIPT
    out = tmp_path / "out.json"

    result = run_cli(repo, api_env, *args, "--json", str(out))

    _check_terminal(result)
    report = json.loads(out.read_text(encoding="utf-8"))
    # The real name: its bytes that are not UTF-8 as surrogate escapes (and in base64);
    # UTF-8: the name itself (JSON escapes its control characters).
    assert {f["path"] for f in report["findings"]} == {os.fsdecode(b"bad\xff.py"), ANSI}
    bad = next(f for f in report["findings"] if "bad" in f["path"])
    assert base64.b64decode(bad["path_bytes_b64"]) == b"bad\xff.py"
    ansi = next(f for f in report["findings"] if "ansi" in f["path"])
    assert "path_bytes_b64" not in ansi  # a UTF-8 name is its own JSON string
    assert "uncovered" not in result.stdout.lower()


@pytest.mark.slow
def test_odd_names_in_json_and_sarif(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    import jsonschema

    from orch_review.reporters.json_report import schema

    repo = _repo(git_repo)
    _add(repo)
    fake_api.policy = SCRIPT
    sarif_path, json_path = tmp_path / "out.sarif", tmp_path / "out.json"

    result = run_cli(repo, api_env, "--sarif", str(sarif_path), "--json", str(json_path))

    _check_terminal(result)
    report = json.loads(json_path.read_text(encoding="utf-8"))
    jsonschema.validate(report, schema())
    covered = {f["path"] for f in report["coverage"]["files"]} if "coverage" in report else set()
    assert not covered or os.fsdecode(b"bad\xff.py") in covered
    sarif = json.loads(sarif_path.read_text(encoding="utf-8"))
    sarif_schema = json.loads(
        (Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text()
    )
    jsonschema.validate(sarif, sarif_schema)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    }
    assert uris == {"bad%FF.py", "ansi%1B%5B31m%09x%0A.py"}


@pytest.mark.slow
def test_the_hook_given_a_name_that_is_not_utf8(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    """``orch-review hook NAME...`` as pre-commit runs it, the staged names as arguments."""
    repo = _repo(git_repo)
    _add(repo)
    git(repo, "add", "-A")
    fake_api.policy = SCRIPT

    result = run_cli(repo, api_env, "hook", BAD, ANSI)

    _check_terminal(result)
    assert "bad" in fake_api.requests[0].model_request().first_user_text


def test_the_crash_log_takes_an_error_about_any_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orch_review.cli.exits import write_crash_log

    monkeypatch.setenv("ORCH_REVIEW_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("sys.argv", ["orch-review", "hook", BAD])
    try:
        BAD.encode("utf-8")
    except UnicodeEncodeError as exc:
        log = write_crash_log(exc)
    text = log.read_text(encoding="utf-8")
    assert "hook bad\\udcff.py" in text and "UnicodeEncodeError" in text


def _paths(value: object) -> set[str]:
    """Every string under a "path" key (or "uri"-free location) of a JSON document."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "path" and isinstance(item, str):
                found.add(item)
            found |= _paths(item)
    elif isinstance(value, list):
        for item in value:
            found |= _paths(item)
    return found


@pytest.mark.slow
def test_every_json_format_carries_the_real_name(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    """One rule: the name's bytes, UTF-8 where they are, surrogate escapes where not."""
    repo = _repo(git_repo)
    _add(repo)
    fake_api.policy = SCRIPT
    out, plan = tmp_path / "out.json", tmp_path / "plan.json"

    gitlab = run_cli(repo, api_env, "--json", str(out), "--format", "gitlab")
    rdjson = run_cli(repo, api_env, "--format", "rdjson")
    planned = run_cli(repo, api_env, "plan", "--json", str(plan))

    assert planned.returncode == 0, planned.stderr
    documents = {
        "json": out.read_text(encoding="utf-8"),
        "gitlab": gitlab.stdout,
        "rdjson": rdjson.stdout,
        "plan": plan.read_text(encoding="utf-8"),
    }
    for name, text in documents.items():
        text.encode("utf-8")  # valid UTF-8 text
        paths = _paths(json.loads(text))
        assert BAD in paths, (name, paths)
        assert os.fsencode(BAD) == b"bad\xff.py"
        assert not any("\\377" in p for p in paths), name
