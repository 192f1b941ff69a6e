"""A release people can pin: every snippet names the tag of this version, the release steps
create that tag, and the changelog and security policy exist."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import orch_review
from tests.docs.reference import ROOT

# Where a snippet pins orch-review: pre-commit's `rev:`, the Action's `uses:`, the GitLab
# component, and the release the GitLab examples install.
PINS = (
    re.compile(r"^\s*rev: (\S+)", re.MULTILINE),
    re.compile(r"orch-review/orch-review@([^\s\"']+)"),
    re.compile(r"orch-review/orch-review/review@([^\s\"']+)"),
    re.compile(r"ORCH_REVIEW_VERSION: (\S+)"),
)


def _documents() -> list[Path]:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    paths += [*sorted((ROOT / "examples").glob("*.yml")), ROOT / "templates" / "review.yml"]
    return paths


def test_every_snippet_names_the_tag_of_this_version() -> None:
    tag = f"v{orch_review.__version__}"
    named: dict[str, list[str]] = {}
    for path in _documents():
        text = path.read_text(encoding="utf-8")
        for pattern in PINS:
            for ref in pattern.findall(text):
                if not ref.startswith("$"):
                    named.setdefault(ref, []).append(path.relative_to(ROOT).as_posix())
    assert tag in named, f"no snippet names {tag}"
    assert set(named) == {tag}, {ref: where for ref, where in named.items() if ref != tag}


def test_the_gitlab_component_installs_the_commit_it_was_included_at() -> None:
    # No version input to forget at release time: the component's own commit is installed.
    component = (ROOT / "templates" / "review.yml").read_text(encoding="utf-8")
    assert "OR_COMPONENT_SHA: $[[ component.sha ]]" in component
    assert not re.search(r"^    version:", component, re.M)


def test_the_version_is_written_once() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "orch_review/version.py"


def test_the_release_steps_tag_the_version() -> None:
    steps = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split("## Releasing", 1)[1]
    assert "orch_review.__version__" in steps
    assert 'git tag -a "v$version"' in steps and 'git push origin "v$version"' in steps


def test_the_changelog_has_this_version_and_the_policy_its_parts() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in changelog and "## [Unreleased]" in changelog
    assert f"## [{orch_review.__version__}]" in changelog
    policy = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    for part in ("## Reporting a vulnerability", "## The threat model", "## What the tokens"):
        assert part in policy
    for token in ("GITHUB_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN", "ANTHROPIC_API_KEY"):
        assert token in policy
