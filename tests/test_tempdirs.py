"""Temporary directories: registered, removed read-only parts and all, swept after a kill."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from orch_review import tempdirs
from orch_review.engine.shell import confinement


def test_a_directory_is_named_with_its_owner_and_removed_however_the_block_ends(
    tmp_path: Path,
) -> None:
    try:
        with tempdirs.directory("home", str(tmp_path)) as made:
            assert tempdirs.owner_pid(made.name) == os.getpid()
            (made / "sub").mkdir()
            (made / "sub" / "f").write_text("x")
            (made / "sub").chmod(0o555)
            made.chmod(0o555)
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert list(tmp_path.iterdir()) == []


def test_remove_all_removes_what_is_still_registered(tmp_path: Path) -> None:
    kept = tempdirs.make("git-config", str(tmp_path))
    removed_early = tempdirs.make("agent-home", str(tmp_path))
    tempdirs.remove(removed_early)

    tempdirs.remove_all()

    assert not kept.exists() and not removed_early.exists()


@pytest.mark.slow
def test_sweep_removes_only_dead_owners_directories(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead_pid = int(dead.stdout)
    stale = tmp_path / f"orch-review-snapshot.pid{dead_pid}.abc123"
    (stale / "ro").mkdir(parents=True)
    (stale / "ro").chmod(0o555)
    alive = tmp_path / f"orch-review-home.pid{os.getppid()}.def456"
    alive.mkdir()
    unrelated = tmp_path / "orch-review-notes"
    unrelated.mkdir()
    legacy = tmp_path / "orch-review-snapshot-x1y2z3"
    legacy.mkdir()

    swept = tempdirs.sweep_stale(str(tmp_path))

    assert swept == [stale] and not stale.exists()
    assert alive.exists() and unrelated.exists() and legacy.exists()


@pytest.mark.slow
def test_root_sweeps_a_dead_runs_agent_homes_it_handed_to_throwaway_uids(tmp_path: Path) -> None:
    # Without bubblewrap, root hands each shell's home to a throwaway uid; a run killed with
    # SIGKILL leaves those homes behind, and only the next run can remove them.
    if os.geteuid() != 0:
        pytest.skip("only root hands homes to other uids")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    throwaway = confinement.unused_uid()
    home = tmp_path / f"orch-review-agent-home.pid{int(dead.stdout)}.abc123"
    home.mkdir()
    os.chown(home, throwaway, throwaway)
    someone_elses = tmp_path / f"orch-review-agent-home.pid{int(dead.stdout)}.def456"
    someone_elses.mkdir()
    os.chown(someone_elses, 65534, 65534)

    swept = tempdirs.sweep_stale(str(tmp_path), also_ours=confinement.is_throwaway_uid)

    assert swept == [home] and not home.exists()
    assert someone_elses.exists()
