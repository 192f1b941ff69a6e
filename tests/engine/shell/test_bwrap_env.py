"""bubblewrap, asked what it supports and then run, gets no secret from orch-review's
environment: a library caller's os.environ still holds them."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from orch_review.engine.shell.sandbox import SandboxUnavailable, resolve_sandbox


@pytest.mark.slow
def test_bwrap_is_started_without_the_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "bwrap-environments.log"
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        f'printf "=== %s\\n" "$1" >> "{log}"; env >> "{log}"\n'
        'if [ "$1" = --help ]; then echo "usage: bwrap --unshare-user"; exit 0; fi\n'
        'echo "bwrap: not really" >&2; exit 1\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-canary-for-bwrap")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-canary-for-bwrap")

    # This bwrap fails to start a shell: another sandbox may be chosen, or none.
    with contextlib.suppress(SandboxUnavailable):
        resolve_sandbox("on", tmp_path, search_path=os.environ["PATH"], bwrap_path=fake)

    recorded = log.read_text(encoding="utf-8")
    assert "=== --help" in recorded and "PATH=" in recorded
    assert "sk-ant-canary-for-bwrap" not in recorded
    assert "aws-canary-for-bwrap" not in recorded
