"""The front page: short, the two commands CI runs at its top, and quick starts that use only
what the hook manifest, the Action and the GitLab component really accept."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from tests.docs.reference import ROOT

README = ROOT / "README.md"
INSTALL_AND_REVIEW = (
    "pipx install 'git+https://github.com/orch-review/orch-review@v0.1.0' && orch-review"
)
INSTALL_AND_TEST = "pip install -c constraints.txt '.[test]' && pytest"


def _text() -> str:
    return README.read_text(encoding="utf-8")


def _yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", _text(), re.DOTALL)


def _block(marker: str) -> dict[str, Any]:
    found = [block for block in _yaml_blocks() if marker in block]
    assert len(found) == 1, f"the README has {len(found)} YAML blocks with {marker!r}"
    data: dict[str, Any] = yaml.safe_load(found[0])
    return data


def test_the_front_page_is_short_and_starts_with_the_two_commands() -> None:
    text = _text()
    assert len(text.splitlines()) <= 200
    blocks = re.findall(r"```sh\n(.*?)\n```", text, re.DOTALL)
    assert blocks[:2] == [INSTALL_AND_REVIEW, INSTALL_AND_TEST]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -c constraints.txt '.[test]' && pytest" in ci


def _repository() -> str:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    url: str = project["urls"]["Repository"]
    return url.rstrip("/")


def test_every_link_and_the_picture_work_on_the_package_index_page() -> None:
    # The package index shows the README without the repository around it: a relative link
    # or picture there leads nowhere. Every one is absolute, under the repository's URL.
    repository = _repository()
    raw = repository.replace("https://github.com/", "https://raw.githubusercontent.com/")
    targets = re.findall(r"(!?)\[[^\]]*\]\(([^)#\s]+)(?:#[^)]*)?\)", _text())
    assert targets
    for picture, target in targets:
        if target.startswith(repository + "/blob/main/"):
            assert not picture, f"a picture must be a raw URL: {target}"
            assert (ROOT / target.removeprefix(repository + "/blob/main/")).exists(), target
        elif target.startswith(raw + "/main/"):
            assert picture, target
            assert (ROOT / target.removeprefix(raw + "/main/")).exists(), target
        else:
            assert "://" in target, f"a relative link breaks on the package index: {target}"
            assert not target.startswith(repository), target


def test_the_pre_commit_snippet_names_the_hook_of_the_manifest() -> None:
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    repo = _block("rev:")["repos"][0]
    assert repo["repo"] == "https://github.com/orch-review/orch-review"
    assert {hook["id"] for hook in repo["hooks"]} <= {hook["id"] for hook in manifest}


def test_the_action_snippet_passes_only_inputs_the_action_declares() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    workflow = _block("uses: orch-review/orch-review@")
    steps = workflow["jobs"]["review"]["steps"]
    ours = [step for step in steps if step.get("uses", "").startswith("orch-review/orch-review@")]
    assert len(ours) == 1
    assert set(ours[0]["with"]) <= set(action["inputs"])
    assert workflow["jobs"]["review"]["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
    }


@pytest.mark.slow
def test_the_action_snippet_is_a_valid_workflow(tmp_path: Path) -> None:
    found = [block for block in _yaml_blocks() if "uses: orch-review/orch-review@" in block]
    workflow = tmp_path / "orch-review.yml"
    workflow.write_text(found[0], encoding="utf-8")
    tool = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert tool is not None, "check-jsonschema is in the test extra"
    result = subprocess.run(
        [tool, "--builtin-schema", "vendor.github-workflows", str(workflow)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_gitlab_snippet_passes_only_inputs_the_component_declares() -> None:
    spec = next(yaml.safe_load_all((ROOT / "templates" / "review.yml").read_text("utf-8")))
    include = _block("component:")["include"][0]
    assert include["component"].startswith("$CI_SERVER_FQDN/orch-review/orch-review/review@")
    assert set(include["inputs"]) <= set(spec["spec"]["inputs"])


def test_the_install_line_installs_this_version_from_the_projects_repository() -> None:
    import tomllib

    import orch_review

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    url = project["project"]["urls"]["Homepage"]
    assert url == orch_review.REPOSITORY_URL
    assert INSTALL_AND_REVIEW.startswith(f"pipx install 'git+{url}@v{orch_review.__version__}'")
    assert orch_review.install_command("mcp") == (
        f"pip install 'orch-review[mcp] @ git+{url}@v{orch_review.__version__}'"
    )


# `pip install orch-review`, `pipx install 'orch-review[x]'`: a name on a package index.
_INSTALL = re.compile(
    r"pipx? install\s+(?:-\S+\s+)*['\"]?(orch-review(?:\[[\w,]+\])?)(?![\w-])(.*)"
)


def test_no_document_or_message_installs_from_a_package_index() -> None:
    """orch-review is not published on an index: every install names its repository."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    paths += sorted((ROOT / "orch_review").rglob("*.py"))
    for path in paths:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for match in _INSTALL.finditer(text):
            assert match.group(2).lstrip().startswith("@ git+"), (path, match.group(0)[:120])
