"""Attacks on the reports: what a hijacked model puts in a finding's category and path must
not reach people as it was sent. Contained means: the category is ``other`` in every output
(terminal, JSON, SARIF rules, GitHub comments), the ``.git`` path is refused back to the model,
and one file has one fingerprint however it is spelled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.github_api import FakeGitHubAPI
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.hosts.github.conftest import (  # noqa: F401 (fixtures)
    NUMBER,
    PullRepo,
    actions_env,
    event_payload,
    github_api,
    open_pull,
    pull_repo,
    with_event,
)
from tests.security.shapes import (
    CODE,
    FILE,
    GIT_PATH,
    HOSTILE_CATEGORY,
    LINE,
    REPORTS,
    SHAPE_ATTACKS,
    ReportShapeModel,
)
from tests.security.verdicts import RESULTS, Verdict

pytestmark = pytest.mark.slow

HOSTILE_PARTS = ("@org/team", "@org", "<!--")


def _record(request: pytest.FixtureRequest, **contained: tuple[bool, bool, str]) -> None:
    for attack in SHAPE_ATTACKS:
        ok, reported, detail = contained[attack.key.removeprefix("attack-").replace("-", "_")]
        request.config.stash[RESULTS].append(
            Verdict(REPORTS, attack, ok, reported, "" if ok else detail)
        )


def test_hostile_categories_and_paths_are_contained_in_every_output(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    repo = git_repo({FILE: CODE, "README.md": "# demo\n"})
    model = ReportShapeModel()
    fake_api.policy = model
    report, sarif = tmp_path / "r.json", tmp_path / "r.sarif"

    result = run_cli(repo, api_env, "--all", "--json", str(report), "--sarif", str(sarif))

    data = json.loads(report.read_text())
    rules = json.loads(sarif.read_text())["runs"][0]["tool"]["driver"]["rules"]
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    findings = [f for f in data["findings"] if f["status"] == "confirmed"]
    outputs = "\n".join([result.stdout, report.read_text(), sarif.read_text()])
    category = (
        all(f["category"] == "other" for f in findings)
        and not any(part in outputs for part in HOSTILE_PARTS)
        and {r["ruleId"] for r in results} == {"orch-review/other"}
        and not any(HOSTILE_CATEGORY in json.dumps(rule) for rule in rules),
        True,  # nothing to tell the model: its category is simply not used
        "the category reached an output",
    )
    git_path = (
        not any(".git" in f["path"] for f in data["findings"])
        and "[core]" not in outputs
        and bool(model.git_path_errors),
        all("inside .git" in e for e in model.git_path_errors),
        "the .git path was accepted",
    )
    spellings = (
        [f["path"] for f in findings] == [FILE]
        and len({f["fingerprint"] for f in data["findings"]}) == 1,
        True,
        f"findings {[(f['path'], f['fingerprint']) for f in data['findings']]}",
    )
    _record(request, category=category, git_path=git_path, spellings=spellings)

    assert result.returncode == 1, result.stderr
    assert f"{FILE}:{LINE}" in result.stdout and "[other]" in result.stdout
    assert category[0], outputs
    assert git_path[0] and git_path[1], model.git_path_errors
    assert spellings[0], spellings[2]
    assert GIT_PATH in model.git_path_errors[0]


def test_hostile_category_never_reaches_github(
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,  # noqa: F811
    actions_env: dict[str, str],  # noqa: F811
    pull_repo: PullRepo,  # noqa: F811
    tmp_path: Path,
) -> None:
    pull = pull_repo.push({FILE: CODE})
    open_pull(github_api, pull)
    env = with_event(actions_env, event_payload("opened", pull), tmp_path / "event.json")
    fake_api.policy = ReportShapeModel()

    result = run_cli(pull.path, env, "github", "--filter-mode", "nofilter")

    assert result.returncode == 0, result.stderr
    comments = github_api.pulls[NUMBER].review_comments
    (summary,) = github_api.pulls[NUMBER].issue_comments
    assert [(c["path"], c["line"]) for c in comments] == [(FILE, LINE)]
    assert "· high · other**" in comments[0]["body"]
    bodies = [c["body"] for c in comments] + [summary["body"]]
    assert not any("@org" in body for body in bodies)
    # Our own markers are the only hidden comments.
    assert all(body.count("<!--") == 1 for body in bodies), bodies
