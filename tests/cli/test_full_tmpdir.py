"""TMPDIR on a full filesystem: the snapshot cannot be written. Exit 2 saying so, before any
request to the API, and nothing left behind."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli
from tests.scripted import ReviewScript


@pytest.fixture
def tiny_tmpdir(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs: too small for the snapshot of the repository below."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=1777", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


@pytest.mark.slow
def test_a_full_tmpdir_is_exit_2_before_any_request(
    fake_api: FakeMessagesAPI,
    api_env: dict[str, str],
    git_repo: GitRepoFactory,
    tiny_tmpdir: Path,
) -> None:
    files = {f"mod{i}.py": f"# module {i}\n" + "x = 1\n" * 5000 for i in range(60)}  # 1.8 MB
    repo = git_repo(files)
    (repo / "mod0.py").write_text("changed = True\n")
    fake_api.policy = ReviewScript([])
    env = {**api_env, "TMPDIR": str(tiny_tmpdir)}

    result = run_cli(repo, env, "--sandbox", "off", "--no-progress")

    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output and "this is a bug" not in output
    assert "No space left on device" in result.stderr, result.stderr
    assert str(tiny_tmpdir) in result.stderr and "TMPDIR" in result.stderr
    assert fake_api.requests == []
    assert os.listdir(tiny_tmpdir) == []
