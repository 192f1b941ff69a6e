"""`pr N` and `mr N` in a clone whose `.git/config` a stranger wrote: every key of it that
names a program for a fetch to run (uploadpack, receivepack, ssh command, git proxy, askpass,
credential helper), rewrites where the fetch goes (insteadOf) or lets a transport run
commands (protocol.*.allow) writes a canary file when git runs it. Contained means: no
canary, over a local remote, the git protocol (a real `git daemon` on 127.0.0.1), ssh and
HTTP; the review goes on where the remote can be reached, and stops with exit 2 where it
cannot; the user's own global credential helper is still asked."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orch_review.errors import ExitCode
from tests.conftest import git
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.gitlab_api import BOT_TOKEN, FakeGitLabAPI
from tests.fakes.http_server import Exchange, LocalHTTPServer
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.hosts.github.conftest import NUMBER, PullRepo, open_pull, pull_script

pytestmark = pytest.mark.slow
PROGRAM_KEYS = (
    "remote.origin.uploadpack",
    "remote.origin.receivepack",
    "core.sshCommand",
    "core.gitProxy",
    "core.askPass",
    "credential.helper",
)


def _canary_script(where: Path, name: str) -> str:
    """A program that leaves ``where/name`` behind when run (and then fails)."""
    script = where / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch '{where / 'canaries' / name}'\nexit 1\n")
    script.chmod(0o755)
    return str(script)


def _plant(work: Path, tmp_path: Path, url: str) -> Path:
    """Write the stranger's configuration into ``work``; the directory canaries land in."""
    (tmp_path / "canaries").mkdir()
    git(work, "remote", "set-url", "origin", url)
    for key in PROGRAM_KEYS:
        git(work, "config", key, _canary_script(tmp_path, key))
    ext = f"ext::sh -c touch% {tmp_path / 'canaries' / 'ext'}"
    git(work, "config", f"url.{ext}.insteadOf", url)
    git(work, "config", "protocol.ext.allow", "always")
    git(work, "config", "protocol.allow", "always")
    return tmp_path / "canaries"


def _github_clone(pull: PullRepo, tmp_path: Path) -> tuple[Path, Path]:
    """A clone whose origin (…/octo/demo.git) keeps the pull request's head; the bare."""
    bare = tmp_path / "remote" / "octo" / "demo.git"
    bare.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(pull.path), str(bare))
    git(bare, "update-ref", f"refs/pull/{NUMBER}/head", pull.head)
    git(bare, "update-ref", "refs/heads/feature", pull.base)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", "--branch", "main", str(bare), str(work))
    return work, bare


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _git_daemon(base: Path) -> Iterator[int]:
    """A real `git daemon` serving ``base`` on 127.0.0.1; its port once it accepts."""
    port = _free_port()
    daemon = subprocess.Popen(
        [
            *("git", "daemon", "--reuseaddr", "--export-all", f"--base-path={base}"),
            *("--listen=127.0.0.1", f"--port={port}", str(base)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(500):  # bounded: the daemon listens within moments
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            if daemon.poll() is not None:
                pytest.fail("git daemon did not start")
            time.sleep(0.02)
        yield port
    finally:
        daemon.terminate()
        daemon.wait(10)


def _asks_for_a_password(exchange: Exchange) -> None:
    """A Git server over HTTP that wants credentials for everything (and accepts none)."""
    headers = {"www-authenticate": 'Basic realm="git"', "content-length": "0"}
    exchange.begin(401, "text/plain", headers)


def _env(api_env: dict[str, str], github_api: FakeGitHubAPI) -> dict[str, str]:
    return {**api_env, "GITHUB_API_URL": github_api.base_url, "GITHUB_TOKEN": WRITE_TOKEN}


def test_pr_over_a_local_remote_runs_none_of_the_strangers_programs(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    tmp_path: Path,
) -> None:
    work, bare = _github_clone(pull_repo, tmp_path)
    canaries = _plant(work, tmp_path, str(bare))
    open_pull(github_api, pull_repo)
    fake_api.policy = pull_script()

    result = run_cli(work, _env(api_env, github_api), "pr", str(NUMBER), "--no-progress")

    assert sorted(p.name for p in canaries.iterdir()) == []
    assert result.returncode == ExitCode.FINDINGS, result.stderr
    fetched = git(work, "rev-parse", f"refs/orch-review/pull/{NUMBER}/head").strip()
    assert fetched == pull_repo.head
    assert "SQL query built with an f-string" in result.stdout
    # The stranger's configuration is still there, untouched: orch-review works around it.
    assert git(work, "config", "core.sshCommand").strip().endswith("core.sshCommand.sh")


def test_pr_over_the_git_protocol_runs_no_git_proxy(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    github_api: FakeGitHubAPI,
    pull_repo: PullRepo,
    tmp_path: Path,
) -> None:
    work, _ = _github_clone(pull_repo, tmp_path)
    open_pull(github_api, pull_repo)
    fake_api.policy = pull_script()
    with _git_daemon(tmp_path / "remote") as port:
        canaries = _plant(work, tmp_path, f"git://127.0.0.1:{port}/octo/demo.git")

        result = run_cli(work, _env(api_env, github_api), "pr", str(NUMBER), "--no-progress")

    assert sorted(p.name for p in canaries.iterdir()) == []
    assert result.returncode == ExitCode.FINDINGS, result.stderr
    fetched = git(work, "rev-parse", f"refs/orch-review/pull/{NUMBER}/head").strip()
    assert fetched == pull_repo.head


def test_pr_over_ssh_runs_no_ssh_command_of_the_repository(
    api_env: dict[str, str], github_api: FakeGitHubAPI, pull_repo: PullRepo, tmp_path: Path
) -> None:
    if shutil.which("ssh") is None:
        pytest.skip("no ssh client here: the ssh transport cannot be tried")
    work, _ = _github_clone(pull_repo, tmp_path)
    open_pull(github_api, pull_repo)
    port = _free_port()  # nothing listens there: the real ssh is refused at once
    canaries = _plant(work, tmp_path, f"ssh://git@127.0.0.1:{port}/octo/demo.git")

    result = run_cli(work, _env(api_env, github_api), "pr", str(NUMBER), "--no-progress")

    assert sorted(p.name for p in canaries.iterdir()) == []
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "cannot fetch" in result.stderr and "Traceback" not in result.stderr


def test_mr_over_http_asks_only_the_users_own_credential_helper(
    api_env: dict[str, str], tmp_path: Path, pull_repo: PullRepo
) -> None:
    work, _ = _github_clone(pull_repo, tmp_path)
    server = LocalHTTPServer(_asks_for_a_password, "git-over-http")
    server.start()
    try:
        canaries = _plant(work, tmp_path, f"{server.base_url}/group/demo.git")
        # The user's own helper, in their global configuration: trusted, and asked.
        trusted = _canary_script(tmp_path, "users-own-helper")
        Path(api_env["HOME"], ".gitconfig").write_text(f"[credential]\n\thelper = {trusted}\n")
        with FakeGitLabAPI() as gitlab:
            gitlab.add_version(3, pull_repo.path, pull_repo.base, pull_repo.head)
            env = {**api_env, "CI_API_V4_URL": gitlab.api_url, "GITLAB_TOKEN": BOT_TOKEN}

            result = run_cli(work, env, "mr", "3", "--no-progress")
    finally:
        server.stop()

    assert sorted(p.name for p in canaries.iterdir()) == ["users-own-helper"]
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "cannot fetch" in result.stderr and "Traceback" not in result.stderr


def test_mr_over_a_local_remote_runs_none_of_the_strangers_programs(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], pull_repo: PullRepo, tmp_path: Path
) -> None:
    bare = tmp_path / "remote" / "group" / "demo.git"
    bare.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(pull_repo.path), str(bare))
    git(bare, "update-ref", "refs/merge-requests/3/head", pull_repo.head)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", "--branch", "main", str(bare), str(work))
    canaries = _plant(work, tmp_path, str(bare))
    fake_api.policy = pull_script()
    with FakeGitLabAPI() as gitlab:
        gitlab.add_version(3, pull_repo.path, pull_repo.base, pull_repo.head)
        env = {**api_env, "CI_API_V4_URL": gitlab.api_url, "GITLAB_TOKEN": BOT_TOKEN}

        result = run_cli(work, env, "mr", "3", "--no-progress")

    assert sorted(p.name for p in canaries.iterdir()) == []
    assert result.returncode in (ExitCode.CLEAN, ExitCode.FINDINGS), result.stderr
    fetched = git(work, "rev-parse", "refs/orch-review/merge-requests/3/head").strip()
    assert fetched == pull_repo.head
