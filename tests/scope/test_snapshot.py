"""The snapshot agents work in: exactly the content under review, read-only, cleaned up."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from orch_review.engine.shell.bash import BashSession
from orch_review.engine.shell.sandbox import SandboxUnavailable, overlay_works, resolve_sandbox
from orch_review.scope import farm, view
from orch_review.scope import git as gitops
from orch_review.scope import snapshot as snapshot_module
from orch_review.scope.kept_tree import kept_place
from orch_review.scope.resolve import Scope, ScopeRequest, resolve_scope
from orch_review.scope.snapshot import Snapshot, snapshot
from tests.conftest import GitRepoFactory, git, run_setting
from tests.fakes.messages_api import FakeMessagesAPI
from tests.gitrepos import branch_repo, commit, head, write
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script


def _resolve(repo: Path, request: ScopeRequest) -> Scope:
    return resolve_scope(gitops.open_repo(repo), request, env=dict(os.environ))


@contextmanager
def _written(repo: Path, scope: Scope) -> Iterator[Path]:
    """The snapshot's directory, once its files are written (as without bubblewrap)."""
    with snapshot(gitops.open_repo(repo), scope, os.environ) as content:
        content.use(mounted=False)
        content.wait()
        yield content.root


def _files(root: Path) -> dict[str, str]:
    """Every file of the snapshot's work tree (``.git`` left out) with its text."""
    found = {}
    for current, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            if name == ".git" and Path(current) == root:  # the file naming its git directory
                continue
            path = Path(current, name)
            found[path.relative_to(root).as_posix()] = path.read_text(errors="replace")
    return found


def _state(repo: Path) -> tuple[str, bytes, str]:
    """What a snapshot must not change in the user's repository."""
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    index = (repo / ".git" / "index").read_bytes() if (repo / ".git" / "index").exists() else b""
    return git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all"), index, refs


@pytest.fixture
def worked_repo(git_repo: GitRepoFactory) -> Path:
    """A feature branch with a commit, a staged edit, a further unstaged edit of the same
    file, an untracked file and ignored files (one at the top, one in an ignored dir)."""
    repo = branch_repo(git_repo)
    commit(repo, {"committed.py": "committed\n"})
    write(repo, {"app.py": "staged version\n"})
    git(repo, "add", "app.py")
    write(repo, {"app.py": "working copy version\n", "new.py": "untracked\n"})
    write(repo, {".env": "SECRET=1\n", "build/out.py": "generated\n", "debug.log": "noise\n"})
    (repo / "README.md").unlink()
    return repo


def test_staged_snapshot_holds_the_index(worked_repo: Path) -> None:
    scope = _resolve(worked_repo, ScopeRequest("staged"))

    with _written(worked_repo, scope) as root:
        files = _files(root)

    assert files["app.py"] == "staged version\n"
    assert files["README.md"] == "# demo\n"  # deleted in the working tree only
    assert {"new.py", ".env", "build/out.py", "debug.log"}.isdisjoint(files)


def test_default_snapshot_holds_the_working_copy_without_ignored_files(worked_repo: Path) -> None:
    scope = _resolve(worked_repo, ScopeRequest())

    with _written(worked_repo, scope) as root:
        files = _files(root)

    assert files["app.py"] == "working copy version\n"
    assert files["new.py"] == "untracked\n"
    assert files["committed.py"] == "committed\n"
    assert {"README.md", ".env", "build/out.py", "debug.log"}.isdisjoint(files)


def test_pull_request_snapshot_holds_the_head_commit(worked_repo: Path) -> None:
    git(worked_repo, "stash", "-q", "--include-untracked")
    git(worked_repo, "checkout", "-q", "main")  # the PR branch need not be checked out
    write(worked_repo, {"app.py": "uncommitted on main\n"})
    scope = _resolve(worked_repo, ScopeRequest("base", base="main", head="feature"))

    with _written(worked_repo, scope) as root:
        files = _files(root)
        log = subprocess.run(
            ["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True, check=True
        )

    assert files["committed.py"] == "committed\n"
    assert files["app.py"] == BASE_APP
    assert ".env" not in files
    assert log.stdout.split("\n")[0] == "c"


BASE_APP = "def greet(name):\n    return 'hello ' + name\n"


def test_all_snapshot_holds_tracked_files_as_on_disk(worked_repo: Path) -> None:
    scope = _resolve(worked_repo, ScopeRequest("all"))

    with _written(worked_repo, scope) as root:
        files = _files(root)

    assert files["app.py"] == "working copy version\n"
    assert {"new.py", ".env", "README.md"}.isdisjoint(files)


@pytest.mark.parametrize("kind", ["change", "staged"])
def test_git_diff_against_the_base_and_git_log_work_inside(worked_repo: Path, kind: str) -> None:
    scope = _resolve(worked_repo, ScopeRequest(kind))  # type: ignore[arg-type]
    assert scope.base_commit is not None

    with _written(worked_repo, scope) as root:
        diff = subprocess.run(
            ["git", "diff", "--stat", scope.base_commit, "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            env={"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]},  # as agents run it
        )
        log = subprocess.run(["git", "log", "-p", "-3"], cwd=root, capture_output=True, text=True)
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True
        )

    assert diff.returncode == 0, diff.stderr
    changed = {line.split("|")[0].strip() for line in diff.stdout.splitlines() if "|" in line}
    assert changed == {s.path for s in [*scope.files, *scope.skipped]}
    assert log.returncode == 0 and "orch-review snapshot" in log.stdout
    assert status.stdout == ""  # the snapshot is exactly its commit


def test_snapshot_is_read_only_and_removed_afterwards(worked_repo: Path) -> None:
    scope = _resolve(worked_repo, ScopeRequest())

    with _written(worked_repo, scope) as root:
        modes = {
            p.relative_to(root).as_posix(): p.stat().st_mode
            for p in [root, root / "lib", root / "app.py", root / "lib" / "util.py"]
        }

    assert all(not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) for mode in modes.values())
    assert not root.exists()


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_snapshot_is_removed_on_error_and_interrupt(
    worked_repo: Path, error: type[BaseException]
) -> None:
    scope = _resolve(worked_repo, ScopeRequest())
    seen: list[Path] = []

    with pytest.raises(error), _written(worked_repo, scope) as root:
        seen.append(root)
        raise error()

    assert seen and not seen[0].exists()


@pytest.mark.parametrize("kind", ["change", "staged", "all"])
def test_the_users_repository_is_left_as_it_was(worked_repo: Path, kind: str) -> None:
    before = _state(worked_repo)
    scope = _resolve(worked_repo, ScopeRequest(kind))  # type: ignore[arg-type]

    with snapshot(gitops.open_repo(worked_repo), scope, os.environ):
        pass

    assert _state(worked_repo) == before


def test_awkward_names_are_materialized(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    names = ["with space.py", "ünï.py", "new\nline.py", "-dash.py", "tab\tname.py"]
    commit(repo, {names[0]: "0\n", names[1]: "1\n"})
    write(repo, {names[2]: "2\n", names[3]: "3\n", names[4]: "4\n"})
    git(repo, "add", "--", names[2])
    scope = _resolve(repo, ScopeRequest())

    with _written(repo, scope) as root:
        files = _files(root)

    assert {name: files[name] for name in names} == {n: f"{i}\n" for i, n in enumerate(names)}


def test_a_large_tree_is_materialized_whole(git_repo: GitRepoFactory) -> None:
    # Past git's threshold (100 files) the checkout is parallel: every file, link and mode
    # must come out as from a plain checkout.
    files = {f"pkg{n % 7}/mod{n}.py": f"value = {n}\n" for n in range(400)}
    repo = git_repo({**files, "run.sh": "echo hi\n"})
    (repo / "run.sh").chmod(0o755)
    (repo / "link.py").symlink_to("pkg0/mod0.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "links and modes")
    scope = _resolve(repo, ScopeRequest("all"))

    with _written(repo, scope) as root:
        found = _files(root)
        assert os.readlink(root / "link.py") == "pkg0/mod0.py"
        assert os.access(root / "run.sh", os.X_OK)

    assert found == {**files, "run.sh": "echo hi\n", "link.py": "value = 0\n"}


def test_hook_environment_snapshot_uses_the_hooks_index_and_leaves_it_alone(
    git_repo: GitRepoFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"app.py": "in the hook's index\n"})
    temp_index = tmp_path / "next-index.lock"
    hook_env = {**os.environ, "GIT_INDEX_FILE": str(temp_index)}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=repo, env=hook_env, check=True)
    subprocess.run(["git", "add", "app.py"], cwd=repo, env=hook_env, check=True)
    write(repo, {"app.py": "edited after staging\n"})
    index_before = temp_index.read_bytes()
    real_index_before = (repo / ".git" / "index").read_bytes()
    monkeypatch.setenv("GIT_DIR", ".git")  # relative, as git sets it for hooks
    monkeypatch.setenv("GIT_INDEX_FILE", str(temp_index))
    monkeypatch.chdir(repo)
    opened = gitops.open_repo(repo, os.environ)

    for kind, expected in (
        ("staged", "in the hook's index\n"),
        ("change", "edited after staging\n"),
    ):
        scope = resolve_scope(opened, ScopeRequest(kind), env=dict(os.environ))  # type: ignore[arg-type]
        with snapshot(opened, scope, os.environ) as content:
            content.use(mounted=False)
            content.wait()
            assert (content.root / "app.py").read_text() == expected
            assert not (content.root / ".git" / "next-index.lock").exists()

    assert temp_index.read_bytes() == index_before
    assert (repo / ".git" / "index").read_bytes() == real_index_before
    assert head(repo) == git(repo, "rev-parse", "main").strip()


@pytest.mark.slow
def test_sha256_repository_is_materialized(tmp_path: Path) -> None:
    repo = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "-b", "main", "--object-format=sha256", str(repo))
    commit(repo, {"a.py": "a\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {"a.py": "b\n"})
    scope = _resolve(repo, ScopeRequest())

    with _written(repo, scope) as root:
        diff = subprocess.run(
            ["git", "diff", "--stat", head(repo), "HEAD"], cwd=root, capture_output=True, text=True
        )
        assert (root / "a.py").read_text() == "b\n"

    assert diff.returncode == 0 and " a.py | 2 +-" in diff.stdout, diff.stderr


# The view: the working tree read-only under bubblewrap, the differences mounted over it


# A bubblewrap of 0.11 or later, to test views laid as an overlay where the one on PATH is
# older (Debian 12 has 0.8; the option came with 0.11).
OVERLAY_BWRAP_VARIABLE = "ORCH_REVIEW_TEST_BWRAP"


def _overlay_bwrap(repo: Path) -> Path | None:
    """The bwrap to show views of ``repo`` as an overlay with; skips the test if none can."""
    named = run_setting(OVERLAY_BWRAP_VARIABLE)
    bwrap = Path(named) if named else None
    if not overlay_works("on", repo, search_path=os.environ["PATH"], bwrap_path=bwrap):
        pytest.skip(f"no bubblewrap that mounts overlays here (set {OVERLAY_BWRAP_VARIABLE})")
    return bwrap


@pytest.fixture(params=["mounts", "overlay", "overlay-without-whiteouts"])
def shown_as(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How the view lays the private copies over the working tree: one mount each, or as
    overlays (bubblewrap 0.11 and later), as it would for a change of any size in a
    repository of 100,000 files: hiding entries with whiteouts, or, where none can be made,
    with the mounts that hide them without an overlay."""
    if request.param != "mounts":
        _as_if_huge(monkeypatch)
    if request.param == "overlay-without-whiteouts":
        _without_whiteouts(monkeypatch)
    return "overlay" if request.param == "overlay" else str(request.param)


def _without_whiteouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """As where the kernel (before 5.8), the filesystem or a seccomp policy refuses to make
    a whiteout."""
    monkeypatch.setattr(snapshot_module, "whiteouts_work", lambda directory: False)


def _as_if_huge(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the snapshot choose as in a repository of 100,000 files: a tree of links costs
    more than overlays, and even a small change is worth laying as overlays."""
    monkeypatch.setattr(farm, "LINK_SECONDS", 1.0)
    monkeypatch.setattr(farm, "WORTH_LISTING", 0.0)


@contextmanager
def _viewed(
    repo: Path, scope: Scope, shown_as: str = "mounts"
) -> Iterator[tuple[Snapshot, BashSession]]:
    """The snapshot shown through its view, and an agent's shell in it."""
    bwrap = _overlay_bwrap(repo) if shown_as != "mounts" else None
    overlay = (lambda: True) if shown_as != "mounts" else None
    with snapshot(gitops.open_repo(repo), scope, os.environ, overlay=overlay) as content:
        assert content.view is not None
        try:
            sandbox = resolve_sandbox(
                "on",
                content.root,
                search_path=os.environ["PATH"],
                view=content.view,
                bwrap_path=bwrap,
            )
        except SandboxUnavailable as exc:
            pytest.skip(f"bubblewrap cannot run here: {exc}")
        content.use(mounted=True)
        content.wait()
        env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
        with BashSession(content.root, env=env, timeout=30, sandbox=sandbox) as bash:
            yield content, bash
        # Nothing was written out but the file naming the snapshot's git directory.
        assert [p.name for p in content.root.iterdir()] == [".git"]


def _seen(bash: BashSession) -> dict[str, str]:
    """Every file an agent finds (``.git`` left out), with its text."""
    listing = bash.run("find . -path ./.git -prune -o -type f -print0 | sort -z").output
    names = [n.removeprefix("./") for n in listing.split("\0") if n]
    return {name: bash.run(f"cat -- '{name}'").output for name in names}


def test_view_of_the_working_tree_hides_what_the_snapshot_leaves_out(
    worked_repo: Path, shown_as: str
) -> None:
    scope = _resolve(worked_repo, ScopeRequest())

    with _viewed(worked_repo, scope, shown_as) as (_, bash):
        files = _seen(bash)
        status = bash.run("git status --porcelain --untracked-files=all").output
        diff = bash.run(f"git diff --stat {scope.base_commit} HEAD").output

    assert files["app.py"] == "working copy version\n"
    assert files["new.py"] == "untracked\n"
    assert files["committed.py"] == "committed\n"
    assert "README.md" not in files
    assert {".env", "build/out.py", "debug.log"}.isdisjoint(files)
    assert status == ""
    assert "app.py" in diff and "new.py" in diff


def test_view_hides_deep_ignored_entries_and_past_its_budget_keeps_only_their_names(
    worked_repo: Path, monkeypatch: pytest.MonkeyPatch, shown_as: str
) -> None:
    write(worked_repo, {"lib/__pycache__/util.pyc": "compiled\n", "lib/.env": "SECRET=2\n"})
    write(worked_repo, {".gitignore": "*.log\nbuild/\n.env\n__pycache__/\n"})
    commit(worked_repo)  # (also commits the staged app.py: nothing else matters here)
    scope = _resolve(worked_repo, ScopeRequest("all"))

    with _viewed(worked_repo, scope, shown_as) as (_, bash):
        rebuilt = _seen(bash)
        listing = bash.run("ls -a lib").output.split()
    monkeypatch.setattr(view, "REBUILD_BUDGET", 0)
    with _viewed(worked_repo, scope, shown_as) as (_, bash):
        masked = _seen(bash)
        names = bash.run("ls -a lib lib/__pycache__").output.split()

    assert {"lib/.env", "lib/__pycache__/util.pyc", ".env"}.isdisjoint(rebuilt)
    assert {".env", "__pycache__"}.isdisjoint(listing) and "util.py" in listing
    if shown_as == "overlay":  # whiteouts: absent whatever the budget
        assert {"lib/.env", "lib/__pycache__/util.pyc"}.isdisjoint(masked)
        assert {".env", "__pycache__"}.isdisjoint(names)
    else:
        assert masked["lib/.env"] == "" and "lib/__pycache__/util.pyc" not in masked
        assert "__pycache__" in names and "util.pyc" not in names
    assert masked["lib/util.py"] == rebuilt["lib/util.py"] == "def add(a, b):\n    return a + b\n"


def test_view_of_the_index_shows_staged_content_and_staged_only_files(
    worked_repo: Path, shown_as: str
) -> None:
    scope = _resolve(worked_repo, ScopeRequest("staged"))

    with _viewed(worked_repo, scope, shown_as) as (_, bash):
        files = _seen(bash)
        log = bash.run("git log -p -1 --format=%s").output

    assert files["app.py"] == "staged version\n"
    assert files["README.md"] == "# demo\n"  # deleted in the working tree only
    assert {"new.py", ".env", "build/out.py", "debug.log"}.isdisjoint(files)
    assert log.startswith("orch-review snapshot") and "+staged version" in log


def test_view_of_a_commit_that_is_not_checked_out(worked_repo: Path, shown_as: str) -> None:
    git(worked_repo, "stash", "-q", "--include-untracked")
    git(worked_repo, "checkout", "-q", "main")
    write(worked_repo, {"app.py": "uncommitted on main\n", "lib/extra.py": "only on disk\n"})
    scope = _resolve(worked_repo, ScopeRequest("base", base="main", head="feature"))

    with _viewed(worked_repo, scope, shown_as) as (_, bash):
        files = _seen(bash)
        log = bash.run("git log --format=%s -1").output

    assert files["committed.py"] == "committed\n"  # not on disk at all
    assert files["app.py"] == BASE_APP
    assert files["lib/util.py"] == "def add(a, b):\n    return a + b\n"
    assert {"lib/extra.py", ".env"}.isdisjoint(files)
    assert log == "c\n"


def test_view_is_read_only_and_files_under_review_do_not_change(
    worked_repo: Path, shown_as: str
) -> None:
    scope = _resolve(worked_repo, ScopeRequest())

    with _viewed(worked_repo, scope, shown_as) as (content, bash):
        write(worked_repo, {"app.py": "edited during the review\n"})
        seen = bash.run("cat app.py").output
        tried = bash.run("echo x >> lib/util.py; touch new-file; rm app.py; ls new-file")
        read = content.read("app.py")  # what orch-review itself reads: git's blob

    assert seen == "working copy version\n"
    assert "Read-only file system" in tried.output and tried.exit_code != 0
    assert (worked_repo / "lib" / "util.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert read == b"working copy version\n"


def test_view_of_a_linked_worktree(worked_repo: Path, tmp_path: Path, shown_as: str) -> None:
    linked = tmp_path / "linked"
    git(worked_repo, "worktree", "add", "-q", "-b", "other", str(linked), "main")
    write(linked, {"app.py": "edited in the linked worktree\n"})
    scope = _resolve(linked, ScopeRequest())

    with _viewed(linked, scope, shown_as) as (_, bash):
        files = _seen(bash)
        log = bash.run("git log --format=%s -2").output

    assert files["app.py"] == "edited in the linked worktree\n"
    assert "committed.py" not in files  # on the feature branch only
    main_subject = git(worked_repo, "log", "-1", "--format=%s", "main")
    assert log == f"orch-review snapshot\n{main_subject}"


def test_without_a_view_the_content_is_written_out_and_bubblewrap_shows_that(
    worked_repo: Path,
) -> None:
    git(worked_repo, "stash", "-q", "--include-untracked")
    git(worked_repo, "checkout", "-q", "main")
    (worked_repo / "lib" / "util.py").unlink()
    (worked_repo / "lib" / "util.py").symlink_to("../app.py")  # a mount would follow it
    scope = _resolve(worked_repo, ScopeRequest("base", base="main", head="feature"))

    with snapshot(gitops.open_repo(worked_repo), scope, os.environ) as content:
        assert content.view is None
        try:
            sandbox = resolve_sandbox("on", content.root, search_path=os.environ["PATH"])
        except SandboxUnavailable as exc:
            pytest.skip(f"bubblewrap cannot run here: {exc}")
        content.use(mounted=True)
        env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
        with BashSession(
            content.root, env=env, timeout=30, sandbox=sandbox, before_start=content.wait
        ) as bash:
            files = _seen(bash)
            log = bash.run("git log --format=%s -1").output

    assert files["lib/util.py"] == "def add(a, b):\n    return a + b\n"
    assert files["committed.py"] == "committed\n"
    assert log == "c\n"


@pytest.mark.slow
def test_a_repository_kept_outside_its_work_tree_is_written_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, kept = tmp_path / "work", tmp_path / "kept.git"
    work.mkdir()
    monkeypatch.setenv("GIT_DIR", str(kept))
    monkeypatch.setenv("GIT_WORK_TREE", str(work))
    git(work, "init", "-q", "-b", "main")
    commit(work, {"a.py": "a\n"})
    write(work, {"a.py": "b\n"})
    opened = gitops.open_repo(work, os.environ)
    scope = resolve_scope(opened, ScopeRequest("all"), env=dict(os.environ))

    with snapshot(opened, scope, os.environ) as content:
        content.use(mounted=True)
        content.wait()
        written = (content.root / "a.py").read_text()

    assert content.view is None and written == "b\n"


def test_journal_keys_come_from_git_blobs_and_follow_the_content(worked_repo: Path) -> None:
    def keys() -> tuple[str, dict[str, str]]:
        scope = _resolve(worked_repo, ScopeRequest())
        with snapshot(gitops.open_repo(worked_repo), scope, os.environ) as content:
            return content.content_id, content.blob_ids(["app.py", "new.py", "missing.py"])

    first, ids = keys()
    again, same_ids = keys()
    write(worked_repo, {"new.py": "changed\n"})
    changed, changed_ids = keys()

    assert again == first and same_ids == ids
    assert ids["app.py"] == git(worked_repo, "hash-object", "app.py").strip()
    assert "missing.py" not in ids
    assert changed != first
    assert changed_ids["app.py"] == ids["app.py"] and changed_ids["new.py"] != ids["new.py"]


def _loose_objects(repo: Path) -> list[str]:
    objects = repo / ".git" / "objects"
    return sorted(str(p) for p in objects.glob("??/*"))


@pytest.mark.parametrize("kind", ["change", "staged", "all"])
def test_no_object_is_written_into_the_users_repository(worked_repo: Path, kind: str) -> None:
    before = _loose_objects(worked_repo)
    scope = _resolve(worked_repo, ScopeRequest(kind))  # type: ignore[arg-type]

    with snapshot(gitops.open_repo(worked_repo), scope, os.environ) as content:
        content.use(mounted=False)
        content.wait()
        content_files = gitops.files_at(content.repo, content.commit)
        in_users_repo = subprocess.run(
            ["git", "cat-file", "-e", content.commit], cwd=worked_repo, capture_output=True
        )

    assert "app.py" in content_files
    assert in_users_repo.returncode != 0
    assert _loose_objects(worked_repo) == before


def _planted_with_a_change(git_repo: GitRepoFactory) -> Path:
    """The planted-bug repository with an uncommitted edit: the review must make a tree."""
    repo = make_planted_repo(git_repo)
    with (repo / "app.py").open("a") as stream:
        stream.write("# edited\n")
    return repo


def test_a_review_adds_no_object_to_the_repository(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = _planted_with_a_change(git_repo)
    before = _loose_objects(repo)
    fake_api.policy = planted_script()

    result = run_cli(repo, api_env, "--all")

    assert result.returncode == 1 and "app.py:6" in result.stdout, result.stderr
    assert _loose_objects(repo) == before


def test_a_review_works_with_a_read_only_git_directory(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = _planted_with_a_change(git_repo)
    dot_git = repo / ".git"
    # Root ignores file permissions: a read-only bind mount in a mount namespace of its own.
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount --bind -o ro '{dot_git}' '{dot_git}' && "
         f"! touch '{dot_git}/probe' 2>/dev/null"],
        capture_output=True,
    )  # fmt: skip
    if os.geteuid() != 0 or probe.returncode != 0:
        pytest.skip(f"no read-only bind mount here: {probe.stderr.decode().strip()}")
    fake_api.policy = planted_script()
    journal = tmp_path / "journal.sqlite3"  # the default one lives in .git

    mount = f"mount --bind -o ro '{dot_git}' '{dot_git}' && exec \"$0\" \"$@\""
    command = [sys.executable, "-m", "orch_review", "--all", "--journal", str(journal)]
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", mount, *command],
        cwd=repo,
        env=api_env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )

    assert result.returncode == 1 and "app.py:6" in result.stdout, result.stderr
    assert journal.exists()


def _overlaid(content: Snapshot) -> bool:
    """Whether the view lays the private copies over the working tree as an overlay."""
    return content.view is not None and any(s[0] == "overlay" for s in content.view.steps)


def _large_change(git_repo: GitRepoFactory, ignored_in: str = "") -> Path:
    """A repository of 600 files with 550 of them and an executable script edited, an
    untracked file, and ignored ones in ``ignored_in``."""
    files: dict[str, str | bytes] = {f"src/m{n}.py": f"v = {n}\n" for n in range(600)}
    files |= {"run.sh": "echo old\n", ".gitignore": ".env\nbuild/\n", "README.md": "r\n"}
    repo = git_repo(files)
    (repo / "run.sh").chmod(0o755)
    commit(repo)
    write(repo, {f"src/m{n}.py": f"v = {n} + 1\n" for n in range(550)})
    write(repo, {"run.sh": "echo new\n", "notes.py": "untracked\n"})
    write(repo, {f"{ignored_in}.env": "SECRET=1\n", f"{ignored_in}build/out.py": "SECRET\n"})
    return repo


@pytest.mark.parametrize("whiteouts", [True, False], ids=["whiteouts", "without-whiteouts"])
@pytest.mark.parametrize("ignored_in", ["", "src/"])
def test_an_overlay_shows_a_change_too_large_to_mount_file_by_file(
    git_repo: GitRepoFactory, monkeypatch: pytest.MonkeyPatch, ignored_in: str, whiteouts: bool
) -> None:
    # Without whiteouts: ignored at the top, the root is rebuilt (and src/ overlaid); deeper,
    # the root is overlaid.
    repo = _large_change(git_repo, ignored_in)
    scope = _resolve(repo, ScopeRequest())
    _as_if_huge(monkeypatch)
    if not whiteouts:
        _without_whiteouts(monkeypatch)

    with _viewed(repo, scope, "overlay") as (content, bash):
        write(repo, {"src/m0.py": "edited during the review\n"})
        edited = bash.run("grep -l '+ 1' src/*.py | wc -l").output.strip()
        seen = bash.run("cat src/m0.py src/m599.py notes.py run.sh; ls -A").output
        secret = bash.run("grep -rl SECRET . --exclude-dir=.git").output
        executable = bash.run("test -x run.sh && ./run.sh").output
        tried = bash.run("touch src/new.py; rm src/m1.py; ls src/new.py")
        overlaid = _overlaid(content)

    assert overlaid and not (repo / ".git" / "orch-review-tree").exists()
    assert edited == "550"
    assert seen.splitlines()[:4] == ["v = 0 + 1", "v = 599", "untracked", "echo new"]
    assert "README.md" in seen.split() and secret == ""
    assert executable == "new\n"
    assert "Read-only file system" in tried.output and tried.exit_code != 0
    assert (repo / "src" / "m1.py").read_text() == "v = 1 + 1\n"


def _commit_with_links_and_a_submodule(git_repo: GitRepoFactory) -> tuple[Path, Scope]:
    """A repository checked out at ``base`` (a submodule's gitlink, its checkout on disk, an
    untracked directory, an ignored file) and a commit that deletes a file, adds a symbolic
    link and a new directory, and edits a file: the repository, and the scope of that commit
    against ``base``."""
    repo = git_repo({"keep.py": "k\n", "gone.py": "g\n", ".gitignore": "*.log\n"})
    module = commit(repo, {"other.py": "o\n"})
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{module},vendored")
    git(repo, "commit", "-q", "-m", "a submodule")  # not `add -A`: no checkout of it yet
    base = head(repo)
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "rm", "-q", "gone.py")
    os.symlink("keep.py", repo / "link.py")
    write(repo, {"new/deep/file.py": "new\n", "keep.py": "k2\n"})
    git(repo, "add", "link.py", "new", "keep.py")
    git(repo, "commit", "-q", "-m", "the change")
    head_commit = head(repo)
    git(repo, "checkout", "-q", base)
    write(repo, {"vendored/checkout.py": "checked out\n", "junk/x.py": "junk\n", "a.log": "l\n"})
    return repo, _resolve(repo, ScopeRequest("base", base=base, head=head_commit))


def test_one_layer_shows_links_submodules_and_deletions_of_a_commit_not_checked_out(
    git_repo: GitRepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, scope = _commit_with_links_and_a_submodule(git_repo)
    _as_if_huge(monkeypatch)

    with _viewed(repo, scope, "overlay") as (content, bash):
        seen = _seen(bash)
        link = bash.run("readlink link.py; cat link.py").output
        vendored = bash.run("ls -A vendored").output
        log = bash.run("git log --format=%s -1").output

    assert content.view is not None and content.view.steps[0][0] == "overlay"
    assert sum(step[0] != "overlay" for step in content.view.steps) == 2  # .git, vendored
    assert seen == {  # (symbolic links are not files to `find -type f`)
        "keep.py": "k2\n",
        "new/deep/file.py": "new\n",
        "other.py": "o\n",
        ".gitignore": "*.log\n",
    }
    assert link == "keep.py\nk2\n" and vendored == ""
    assert log == "the change\n"


def test_one_layer_holds_copies_links_and_whiteouts_the_kernel_reads(
    git_repo: GitRepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, scope = _commit_with_links_and_a_submodule(git_repo)
    _as_if_huge(monkeypatch)

    with snapshot(gitops.open_repo(repo), scope, os.environ, overlay=lambda: True) as content:
        assert content.view is not None
        steps = content.view.steps
        if steps[0][0] != "overlay":
            pytest.skip("no whiteout can be made here (Linux before 5.8, or a policy)")
        layer = Path(steps[0][2])
        found = {
            path.relative_to(layer).as_posix(): os.lstat(path)
            for path in layer.rglob("*")
            if not path.is_dir() or path.is_symlink()
        }
        link = os.readlink(layer / "link.py")
        kept = (layer / "keep.py").read_text()

    # overlayfs: lower layers first; a character device 0/0 is a whiteout (absent).
    assert steps[0][1] == str(repo) and steps[0][3] == str(content.root)
    assert [step[0] for step in steps[1:]] == ["bind", "bind"]  # .git, the submodule
    assert steps[2][2] == str(content.root / "vendored")
    whiteouts = {p for p, st in found.items() if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0}
    assert whiteouts == {"gone.py", "junk", "a.log"}
    assert stat.S_IMODE(found["keep.py"].st_mode) == 0o444 and kept == "k2\n"
    assert link == "keep.py" and "new/deep/file.py" in found
    assert set(found) == whiteouts | {"keep.py", "link.py", "new/deep/file.py"}


def test_a_change_shown_as_an_overlay_removes_the_kept_tree_of_links(
    git_repo: GitRepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _large_change(git_repo)
    scope = _resolve(repo, ScopeRequest())
    _as_if_huge(monkeypatch)
    kept = kept_place(repo / ".git") / "tree"

    with snapshot(gitops.open_repo(repo), scope, os.environ) as content:  # no overlay
        assert content.view is not None and not _overlaid(content)
    links, made = os.stat(repo / "README.md").st_nlink, (kept / "README.md").exists()
    with snapshot(gitops.open_repo(repo), scope, os.environ, overlay=lambda: True) as content:
        overlaid = _overlaid(content)

    assert links == 2 and made
    assert overlaid and not kept.exists()
    assert os.stat(repo / "README.md").st_nlink == 1  # the working tree's files are its own


def test_a_change_of_thousands_of_files_is_prepared_without_waiting_forever(
    git_repo: GitRepoFactory,
) -> None:
    # More ids than a pipe holds (64 KiB: about 1,600) go to one `git cat-file --batch`,
    # whose answers (1 KiB each) fill the pipe back long before it has read them all.
    repo = git_repo({f"f{n}.py": f"old {n}\n" for n in range(2500)})
    write(repo, {f"f{n}.py": f"new {n}\n" + "#" * 1024 + "\n" for n in range(2500)})
    scope = _resolve(repo, ScopeRequest())
    seen: list[str] = []

    def prepare() -> None:
        with snapshot(gitops.open_repo(repo), scope, os.environ) as content:
            assert content.view is not None  # the tree of links, its copies written by git
            shown = Path(content.view.steps[0][1])
            seen.extend((shown / f"f{n}.py").read_text()[:9] for n in (0, 1999, 2499))

    thread = threading.Thread(target=prepare, daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "preparing the snapshot did not end"
    assert seen == ["new 0\n###", "new 1999\n", "new 2499\n"]
