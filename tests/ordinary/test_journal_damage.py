"""A damaged journal is set aside and the review goes on; a journal that cannot be written
(no room for one byte) leaves no empty file behind."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import GitRepoFactory
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import SOURCE_ROOT, make_planted_repo, run_cli
from tests.scripted import planted_script


def test_a_damaged_journal_is_set_aside_and_the_review_pays_in_full(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    path = repo / ".git" / "orch-review" / "journal.sqlite3"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xa5" * 16384)  # the header too: no later run could open it
    fake_api.policy = planted_script()

    first = run_cli(repo, api_env, "--all", "--no-progress")

    said = " ".join(first.stderr.split())
    assert first.returncode == 1, said
    assert "app.py:6" in first.stdout
    (aside,) = path.parent.glob("journal.sqlite3.damaged-*")
    assert aside.read_bytes() == b"\xa5" * 16384  # kept as it was, for a look
    assert f"set aside as {aside.name}" in said and "pays in full" in said
    paid = len(fake_api.message_requests)

    again = run_cli(repo, api_env, "--all", "--no-progress")

    assert again.returncode == 1, again.stderr
    assert "damaged" not in again.stderr
    assert len(fake_api.message_requests) == paid  # the new journal serves the rerun


@pytest.mark.slow
def test_a_journal_with_no_room_leaves_no_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "orch-review" / "journal.sqlite3"
    # A file size limit of 0 bytes: the kernel refuses every write (EFBIG), as a full disk
    # refuses them (ENOSPC), while the file itself can be created.
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from pathlib import Path
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        from orch_review.engine.memory.journal import Journal, JournalError
        try:
            Journal(Path({str(path)!r}), signer=None)
        except JournalError as exc:
            print("refused:", exc)
            sys.exit(0)
        sys.exit("opened a journal that cannot be written")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=SOURCE_ROOT, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert "refused:" in result.stdout
    assert not path.exists()
