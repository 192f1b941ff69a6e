"""action.yml: its structure, its scripts run for real, and the linters on it and on the
example workflow the docs show (examples/github-workflow.yml, docs/github-actions.md).

actionlint lints workflows, not action metadata, and its PyPI wrapper is a source package that
downloads the binary when it is built; so the workflow is linted with zizmor (a wheel) and both
files are validated against the SchemaStore schemas vendored in check-jsonschema (offline).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from orch_review.hosts.github.outputs import OUTPUT_NAMES
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import cli_launcher
from tests.hosts.github.conftest import (
    NUMBER,
    PullRepo,
    read_outputs,
)

ROOT = Path(__file__).resolve().parents[3]
ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / "examples" / "github-workflow.yml"
SHARDED = ROOT / "examples" / "github-workflow-sharded.yml"
COMMENTS = ROOT / "examples" / "github-workflow-comments.yml"
GITHUB_PAGE = ROOT / "docs" / "github-actions.md"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return data


def steps() -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = action()["runs"]["steps"]
    return result


def test_metadata_has_the_required_keys() -> None:
    data = action()
    assert {"name", "description", "inputs", "outputs", "runs", "branding"} <= set(data)
    assert data["runs"]["using"] == "composite"
    assert set(data["branding"]) == {"icon", "color"}
    for name, spec in data["inputs"].items():
        assert spec.get("description"), name
        assert "default" in spec or spec.get("required"), name


def test_every_input_is_used() -> None:
    runs = yaml.safe_dump(action()["runs"])
    used = {m for expr in EXPRESSION.findall(runs) for m in re.findall(r"inputs\.([\w-]+)", expr)}
    assert used == set(action()["inputs"])


def test_every_output_is_set_by_the_review_step() -> None:
    ids = {step.get("id") for step in steps()}
    outputs = action()["outputs"]
    assert set(outputs) == set(OUTPUT_NAMES)
    for name, spec in outputs.items():
        assert spec.get("description"), name
        assert spec["value"] == f"${{{{ steps.review.outputs.{name} }}}}"
    assert "review" in ids


def test_scripts_take_inputs_through_env_only() -> None:
    scripts = [step for step in steps() if "run" in step]
    assert scripts
    for step in scripts:
        assert step["shell"] == "bash", step["name"]
        assert "${{" not in step["run"], f"an expression inside the script of {step['name']!r}"


def test_the_journal_is_cached_per_pull_request() -> None:
    restore = next(s for s in steps() if s.get("uses", "").startswith("actions/cache/restore@"))
    save = next(s for s in steps() if s.get("uses", "").startswith("actions/cache/save@"))
    # issue_comment events have no pull_request: the number is the pull request's.
    number = "github.event.pull_request.number || github.event.issue.number"
    key = f"orch-review-${{{{ github.repository }}}}-pr-${{{{ {number} }}}}-${{{{ github.sha }}}}"
    assert restore["with"]["key"] == save["with"]["key"] == key
    assert restore["with"]["path"] == save["with"]["path"] == ".git/orch-review"
    assert save["if"].startswith("always()")
    # A comment's run writes no journal: neither restored nor saved.
    assert "!github.event.comment" in restore["if"] and "!github.event.comment" in save["if"]


def test_the_review_run_uploads_its_conversation_for_comments() -> None:
    from orch_review.hosts.github.artifacts import MEMBER, artifact_name

    review = next(step for step in steps() if step.get("id") == "review")
    upload = next(s for s in steps() if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["uses"].startswith("actions/upload-artifact@")
    name = artifact_name(NUMBER).replace(str(NUMBER), "${{ github.event.pull_request.number }}")
    assert upload["with"]["name"] == name
    folder = upload["with"]["path"].replace("${{ runner.temp }}", "$RUNNER_TEMP").rstrip("/")
    assert f'--conversation-file "$OUT_DIR/conversation/{MEMBER}"' in review["run"]
    assert (
        review["env"]["OUT_DIR"].replace("${{ runner.temp }}", "$RUNNER_TEMP") + ("/conversation")
        == folder
    )
    assert upload["with"]["if-no-files-found"] == "ignore"
    assert upload["if"].startswith("always()") and "!github.event.comment" in upload["if"]


def _resolve(value: str, inputs: dict[str, str], context: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        expr = match.group(1)
        if expr.startswith("inputs."):
            return inputs[expr.removeprefix("inputs.")]
        return context[expr]

    return EXPRESSION.sub(one, value)


def run_step(
    step: dict[str, Any], inputs: dict[str, str], env: dict[str, str], timeout: float = 120
) -> Any:
    """Run one `run:` step as the Actions runner does (bash -eo pipefail, env from `env:`)."""
    context = {
        "runner.temp": env["RUNNER_TEMP"],
        "github.action_path": str(ROOT),
        "github.token": WRITE_TOKEN,
    }
    defaults = {k: str(v.get("default", "")) for k, v in action()["inputs"].items()}
    values = {k: _resolve(v, {}, context) for k, v in {**defaults, **inputs}.items()}
    step_env = {k: _resolve(str(v), values, context) for k, v in step.get("env", {}).items()}
    script = Path(env["RUNNER_TEMP"]) / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        env={**env, **step_env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_review_step_runs_orch_review_with_the_inputs(
    opened_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in opened_env.items() if not k.startswith(("ANTHROPIC_", "ORCH_REVIEW_"))}
    env.pop("GITHUB_TOKEN")
    env["PWD"] = str(pull_repo.path)
    review = next(step for step in steps() if step.get("id") == "review")
    # The venv the Install step would create: this one, which has orch-review installed.
    env["RUNNER_TEMP"] = str(tmp_path / "runner")
    cli_launcher(Path(env["RUNNER_TEMP"]) / "orch-review-venv" / "bin", env)

    result = run_step_in(
        pull_repo.path,
        review,
        {
            "anthropic-api-key": "test-key",
            "anthropic-base-url": fake_api.base_url,
            "fail-on": "medium",
            "exclude": "docs/**, *.md\nvendor/**",
            "extra-args": "--filter-mode nofilter --no-progress",
            "sandbox": "auto",
            "max-cost-usd": "10",
        },
        env,
    )

    assert result.returncode == 1, result.stderr  # medium findings, fail-on medium
    outputs = read_outputs(env)
    assert set(outputs) == set(OUTPUT_NAMES)
    assert outputs["findings-count"] == "4"
    assert outputs["sarif-file"] == f"{env['RUNNER_TEMP']}/orch-review/orch-review.sarif"
    assert Path(outputs["sarif-file"]).is_file() and Path(outputs["json-file"]).is_file()
    assert len(github_api.pulls[NUMBER].review_comments) == 2
    main_request = fake_api.requests_for("main")[0]
    assert main_request.headers["authorization"] == "Bearer test-key"


def run_step_in(
    cwd: Path,
    step: dict[str, Any],
    inputs: dict[str, str],
    env: dict[str, str],
    timeout: float = 120,
) -> Any:
    """:func:`run_step` with the working directory the runner would use."""
    script = f"cd {shlex.quote(str(cwd))}\n" + step["run"]
    return run_step({**step, "run": script}, inputs, env, timeout)


@pytest.mark.slow
def test_inputs_reach_orch_review_as_literal_arguments(tmp_path: Path) -> None:
    runner = tmp_path / "runner"
    (runner / "orch-review-venv" / "bin").mkdir(parents=True)
    stub = runner / "orch-review-venv" / "bin" / "orch-review"
    stub.write_text('#!/bin/bash\nprintf "%s\\n" "$@"\nenv | grep ^ORCH_REVIEW_MODEL=\n')
    stub.chmod(0o755)
    (tmp_path / "a.md").write_text("a glob must not expand to me")
    review = next(step for step in steps() if step.get("id") == "review")
    env = {"PATH": "/usr/bin:/bin", "RUNNER_TEMP": str(runner), "HOME": str(tmp_path)}

    result = run_step_in(
        tmp_path,
        review,
        {
            "exclude": "*.md, docs/**\n  vendor/** ",
            "paths": "src  lib",
            "extra-args": "--filter-mode nofilter\n--no-fetch",
            "model": "$(touch pwned) `touch pwned`",
        },
        env,
    )

    assert result.returncode == 0, result.stderr
    out = f"{runner}/orch-review"
    assert result.stdout.splitlines() == [
        "github",
        "--comment-mode",
        "review",
        "--fail-on",
        "never",
        "--json",
        f"{out}/report.json",
        "--sarif",
        f"{out}/orch-review.sarif",
        "--conversation-file",
        f"{out}/conversation/orch-review-conversation.json",
        "--exclude",
        "*.md",
        "--exclude",
        "docs/**",
        "--exclude",
        "vendor/**",
        "--filter-mode",
        "nofilter",
        "--no-fetch",
        "--",
        "src",
        "lib",
        "ORCH_REVIEW_MODEL=$(touch pwned) `touch pwned`",
    ]
    assert not (tmp_path / "pwned").exists()


# -- linters ---------------------------------------------------------------------------------


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (it is in the `test` extra)")
    return found


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "schema"),
    [
        (ACTION, "vendor.github-actions"),
        (WORKFLOW, "vendor.github-workflows"),
        (SHARDED, "vendor.github-workflows"),
        (COMMENTS, "vendor.github-workflows"),
    ],
    ids=["action", "workflow", "sharded-workflow", "comments-workflow"],
)
def test_files_match_their_schemastore_schema(path: Path, schema: str) -> None:
    result = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_zizmor_finds_nothing() -> None:
    result = subprocess.run(
        [
            _tool("zizmor"),
            "--offline",
            "--persona",
            "pedantic",
            "--config",
            str(Path(__file__).with_name("zizmor.yml")),
            str(ACTION),
            str(WORKFLOW),
            str(SHARDED),
            str(COMMENTS),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# A tag can be moved to other code; a commit cannot. The tag stays in a comment for people and
# for Dependabot. orch-review's own Action is the exception: the examples name the release
# they document, whose commit exists only once it is tagged.
_PINNED = re.compile(r"uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # (v\d+(?:\.\d+)*)$")
_OWN = re.compile(r"uses: orch-review/orch-review@v(\S+)$")


@pytest.mark.parametrize(
    "path",
    [ACTION, *sorted((ROOT / "examples").glob("*.yml"))],
    ids=lambda path: path.name,
)
def test_every_uses_is_pinned_to_a_commit_with_its_tag(path: Path) -> None:
    from orch_review import __version__

    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    uses = [line.removeprefix("- ") for line in lines if re.match(r"(- )?uses:", line)]
    unpinned = [
        line
        for line in uses
        if not _PINNED.match(line)
        and not ((own := _OWN.match(line)) and own.group(1) == __version__)
    ]
    assert not unpinned, f"{path.name}: pin these to a full commit SHA, tag in a comment"


def test_the_example_uploads_only_a_complete_review() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps_ = workflow["jobs"]["review"]["steps"]
    upload = next(s for s in steps_ if "upload-sarif" in s.get("uses", ""))
    condition = EXPRESSION.fullmatch(upload["if"])
    assert condition is not None
    assert "steps.review.outputs.incomplete == 'false'" in condition.group(1)
    assert "always()" in condition.group(1)  # findings that fail the step are still uploaded


def test_the_docs_show_the_example_workflow() -> None:
    text = GITHUB_PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    examples = [block for block in blocks if "uses: orch-review/orch-review@" in block]
    assert examples, "docs/github-actions.md shows no GitHub workflow using the action"
    assert examples[0] == WORKFLOW.read_text(encoding="utf-8")
    comments = [block for block in examples if "issue_comment:" in block]
    assert comments == [COMMENTS.read_text(encoding="utf-8")]


# -- installing: pinned versions, cached downloads, a sandbox without sudo -----------------------

CONSTRAINTS = ROOT / "constraints.txt"
CONSTRAINTS_HEADER = """\
# The versions of orch-review's runtime dependencies (and theirs) that CI tested; the Action
# installs with `pip install --constraint constraints.txt`. Regenerate from the test
# environment with: UPDATE_CONSTRAINTS=1 pytest tests/hosts/github/test_action.py -k constraints
"""


def _tested_runtime_versions() -> str:
    """``name==version`` of every runtime dependency, recursively, as installed here."""
    import tomllib
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    todo = [Requirement(spec) for spec in project["dependencies"]]
    # The Action installs it with the constraints: the extra pins what it adds.
    todo += [Requirement(spec) for spec in project["optional-dependencies"]["foundry"]]
    pinned: dict[str, str] = {}
    while todo:
        requirement = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in pinned:
            continue
        dist = metadata.distribution(requirement.name)
        pinned[name] = dist.version
        todo += [Requirement(spec) for spec in dist.requires or ()]
    return "".join(f"{name}=={version}\n" for name, version in sorted(pinned.items()))


def test_constraints_pin_the_runtime_dependencies_ci_tested() -> None:
    expected = CONSTRAINTS_HEADER + _tested_runtime_versions()
    if os.environ.get("UPDATE_CONSTRAINTS"):
        CONSTRAINTS.write_text(expected, encoding="utf-8")
    assert CONSTRAINTS.read_text(encoding="utf-8") == expected, (
        "constraints.txt is not what this environment tested: regenerate it (see its header)"
    )


def _step(name: str) -> dict[str, Any]:
    return next(step for step in steps() if step["name"] == name)


def test_install_uses_the_constraints_and_caches_pip_downloads() -> None:
    install = _step("Install orch-review")
    assert '--constraint "$ACTION_PATH/constraints.txt"' in install["run"]
    cache = _step("Restore pip's download cache")
    assert cache["uses"].startswith("actions/cache@")
    assert cache["with"]["path"] == install["env"]["PIP_CACHE_DIR"]
    assert "steps.pins.outputs.hash" in cache["with"]["key"]


@pytest.mark.slow
def test_the_cache_key_changes_with_the_pinned_versions(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs"
    env = {**os.environ, "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(outputs)}

    result = run_step(_step("Find the pinned versions"), {}, env)

    assert result.returncode == 0, result.stderr
    digest = hashlib.sha256(CONSTRAINTS.read_bytes()).hexdigest()
    assert outputs.read_text() == f"hash={digest}\n"


def _path_without(tmp_path: Path, *missing: str) -> str:
    """A PATH with bash and cat, but not ``missing`` (sudo, bwrap)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "cat"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    for tool in missing:
        assert not (bin_dir / tool).exists()
    return str(bin_dir)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sandbox", "code", "says"),
    [
        ("auto", 0, "::notice title=orch-review::"),
        ("on", 0, "::notice title=orch-review::"),  # orch-review decides: Landlock, or exit 2
        ("bubblewrap", 2, "::error title=orch-review::"),
    ],
)
def test_preparing_the_sandbox_needs_no_sudo_but_for_bubblewrap(
    sandbox: str, code: int, says: str, tmp_path: Path
) -> None:
    env = {"RUNNER_TEMP": str(tmp_path), "PATH": _path_without(tmp_path, "sudo", "bwrap")}

    result = run_step(_step("Prepare the sandbox (bubblewrap)"), {"sandbox": sandbox}, env)

    assert result.returncode == code, result.stdout + result.stderr
    assert says in result.stdout and "no sudo" in result.stdout
    assert "command not found" not in result.stderr


def test_the_comments_workflow_has_least_privileges_and_filters_early() -> None:
    workflow = yaml.safe_load(COMMENTS.read_text(encoding="utf-8"))
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers == {
        "issue_comment": {"types": ["created"]},
        "pull_request_review_comment": {"types": ["created"]},
    }
    assert workflow["permissions"] == {}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "actions": "read",
    }
    # Skipped before any runner starts: no mention, a bot's comment, an issue's comment.
    condition = " ".join(job["if"].split())
    assert "contains(github.event.comment.body, '@orch-review')" in condition
    assert "github.event.comment.user.type == 'User'" in condition
    assert "github.event.issue.pull_request" in condition
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    # The default ref: the pull request's code is never checked out with the secrets.
    assert checkout["with"] == {"persist-credentials": False}


@pytest.mark.slow
@pytest.mark.parametrize(("value", "prove"), [("", None), ("all", "all"), ("off", "off")])
def test_the_prove_input_reaches_the_reviews_configuration(
    value: str, prove: str | None, tmp_path: Path
) -> None:
    from orch_review.config.settings import load_config

    runner = tmp_path / "runner"
    (runner / "orch-review-venv" / "bin").mkdir(parents=True)
    stub = runner / "orch-review-venv" / "bin" / "orch-review"
    stub.write_text('#!/bin/bash\nenv | grep ^ORCH_REVIEW_PROVE= || echo "unset"\n')
    stub.chmod(0o755)
    review = next(step for step in steps() if step.get("id") == "review")
    env = {"PATH": "/usr/bin:/bin", "RUNNER_TEMP": str(runner), "HOME": str(tmp_path)}

    result = run_step_in(tmp_path, review, {"prove": value} if value else {}, env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"ORCH_REVIEW_PROVE={value}"]
    seen = dict(line.split("=", 1) for line in result.stdout.splitlines())
    # An empty input is no setting: the configuration's value, else the default, applies.
    assert load_config(tmp_path, seen, {}).prove == prove
