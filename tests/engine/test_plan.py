"""`orch-review plan`: what a review would cover, per scope, with no API call and no key."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.gitrepos import BASE_FILES, branch_repo, commit, head, shallow_clone, write
from tests.helpers import can_drop_read_override, run_cli, run_cli_unprivileged


def _env(**extra: str) -> dict[str, str]:
    """The session's hermetic environment: no API key, no base URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return {**env, **extra}


def plan_json(cwd: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = run_cli(cwd, env or _env(), "plan", "--json", "-", *args)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def paths(data: dict[str, Any]) -> list[str]:
    return [f["path"] for f in data["files"]]


def reasons(data: dict[str, Any]) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in data["skipped"]}


def fails_with(cwd: Path, *args: str, code: int, env: dict[str, str] | None = None) -> str:
    """Run `plan ARGS`, check the exit code and that stderr is one sentence; return it."""
    result = run_cli(cwd, env or _env(), "plan", *args)
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def feature_repo(git_repo: GitRepoFactory) -> Path:
    """main plus a feature branch with one commit, a staged file, an unstaged edit, an
    untracked file, an ignored file, a deletion and a rename."""
    repo = branch_repo(git_repo)
    commit(repo, {"feature.py": "def f():\n    return 1\n"})
    write(repo, {"staged.py": "s = 1\n"})
    git(repo, "add", "staged.py")
    write(repo, {"app.py": BASE_FILES["app.py"] + "\n\ndef bye():\n    pass\n"})  # type: ignore[operator]
    write(repo, {"untracked.py": "u = 1\n", "debug.log": "ignored\n"})
    git(repo, "rm", "-q", "README.md")
    git(repo, "mv", "lib/util.py", "lib/helpers.py")
    return repo


# --- one plan per scope -------------------------------------------------------------------------


def test_plan_json_for_the_default_scope(feature_repo: Path) -> None:
    data = plan_json(feature_repo)

    fork = git(feature_repo, "merge-base", "main", "HEAD").strip()
    assert data["scope"] == {
        "base": fork,
        "base_ref": "main",
        "description": f"working tree changes against main (feature at {head(feature_repo)[:12]})",
        "head": None,
        "kind": "change",
        "pathspecs": [],
        "source": "worktree",
    }
    assert data["files"] == [
        {
            "additions": 4,
            "deletions": 0,
            "hunks": [[1, 6]],
            "old_path": None,
            "replaced": None,
            "path": "app.py",
            "size": 66,
            "status": "modified",
        },
        {
            "additions": 2,
            "deletions": 0,
            "hunks": [[1, 2]],
            "old_path": None,
            "replaced": None,
            "path": "feature.py",
            "size": 22,
            "status": "added",
        },
        {
            "additions": 0,
            "deletions": 0,
            "hunks": [],
            "old_path": "lib/util.py",
            "replaced": None,
            "path": "lib/helpers.py",
            "size": 32,
            "status": "renamed",
        },
        {
            "additions": 1,
            "deletions": 0,
            "hunks": [[1, 1]],
            "old_path": None,
            "replaced": None,
            "path": "staged.py",
            "size": 6,
            "status": "added",
        },
        {
            "additions": 1,
            "deletions": 0,
            "hunks": [[1, 1]],
            "old_path": None,
            "replaced": None,
            "path": "untracked.py",
            "size": 6,
            "status": "added",
        },
    ]
    assert data["skipped"] == [{"path": "README.md", "reason": "deleted in this change"}]
    assert data["tokens"]["counted"] is None and data["tokens"]["estimate"] > 100
    assert list(data) == sorted(data)


def test_plan_json_for_staged(feature_repo: Path) -> None:
    data = plan_json(feature_repo, "--staged")

    assert data["scope"]["kind"] == "staged" and data["scope"]["source"] == "index"
    assert data["scope"]["base"] == head(feature_repo)
    assert paths(data) == ["lib/helpers.py", "staged.py"]  # not app.py: its edit is unstaged
    assert reasons(data) == {"README.md": "deleted in this change"}


def test_plan_json_for_a_pull_request(feature_repo: Path) -> None:
    data = plan_json(feature_repo, "--base", "main", "--head", "HEAD")

    assert data["scope"]["kind"] == "base" and data["scope"]["head"] == head(feature_repo)
    assert paths(data) == ["feature.py"]  # committed content only
    assert data["skipped"] == []


def test_plan_json_for_all(feature_repo: Path) -> None:
    data = plan_json(feature_repo, "--all")

    assert data["scope"]["kind"] == "all" and data["scope"]["base"] is None
    assert paths(data) == [".gitignore", "app.py", "feature.py", "lib/helpers.py", "staged.py"]
    assert all(f["status"] is None and f["hunks"] is None for f in data["files"])
    assert data["files"][1]["size"] == len((feature_repo / "app.py").read_bytes())


def test_plan_is_printed_for_people(feature_repo: Path) -> None:
    write(feature_repo, {"new\nline.py": "x\n", "[red]markup[/red].py": "y\n", "pic.png": b"\0\1"})

    result = run_cli(feature_repo, _env(), "plan")

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("scope: working tree changes against main (feature at ")
    assert "7 files to review" in out
    assert '"new\\nline.py"' in out  # one line per file, even with a newline in the name
    assert "[red]markup[/red].py" in out
    assert "renamed from lib/util.py" in out
    assert "README.md" in out and "deleted in this change" in out
    assert "pic.png" in out and "binary" in out
    assert "input tokens (local estimate)" in out


def test_piped_plan_keeps_full_paths_one_line_each(feature_repo: Path) -> None:
    deep = "/".join(f"directory-{n:02d}-with-a-long-name" for n in range(6)) + "/module.py"
    write(feature_repo, {deep: "x = 1\n", "::error::spoofed.py": "y\n"})

    result = run_cli(feature_repo, _env(), "plan")  # stdout is a pipe, not a terminal

    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if deep in line}
    assert rows == {"added": rows["added"]}  # the whole path, on the line of its file
    assert rows["added"].split()[1:] == ["1", "0", "6", deep, "1"]
    # Every line starts with orch-review's own words, never with a name from the repository.
    assert not [line for line in result.stdout.splitlines() if line.lstrip().startswith("::")]
    assert ": :error::spoofed.py" in result.stdout  # shown, defused


def test_plan_for_people_lists_at_most_limit_rows(feature_repo: Path) -> None:
    write(feature_repo, {"a.lock": "l\n", "b.lock": "l\n", "c.lock": "l\n"})

    capped = run_cli(feature_repo, _env(), "plan", "--limit", "2").stdout
    full = run_cli(feature_repo, _env(), "plan", "--limit", "0").stdout

    assert "5 files to review" in capped and "4 skipped" in capped
    assert "... and 3 more (--limit 0 lists them all; so does --json)" in capped
    assert "... and 2 more (--limit 0 lists them all; so does --json)" in capped
    assert "staged.py" not in capped and "staged.py" in full
    assert "more (--limit 0" not in full


# --- pathspecs, from wherever the command runs ----------------------------------------------


def test_pathspecs_are_relative_to_the_current_directory(feature_repo: Path) -> None:
    lib = feature_repo / "lib"
    write(feature_repo, {"lib/new.py": "n\n"})

    assert paths(plan_json(lib, "new.py")) == ["lib/new.py"]
    assert paths(plan_json(lib, ".", "--all")) == ["lib/helpers.py"]  # new.py is untracked
    assert paths(plan_json(lib, "../staged.py", "--staged")) == ["staged.py"]
    assert plan_json(lib, "new.py")["scope"]["pathspecs"] == ["lib/new.py"]


# Where typed, and what: every case selects some files and leaves others out.
TYPED_PATHSPECS = [
    ("lib", ("*.py",)),
    ("lib", (":!tests",)),
    ("lib", (":(exclude)tests", ".")),
    ("lib", (":/a.py", "x.py")),
    ("lib", (":(glob)*.py",)),
    ("lib", (":(icase)upper.py",)),
    ("lib", ("../:colon.py",)),
    (".", ("./:colon.py",)),
    (".", (":!lib",)),
    ("lib/tests", (":^../x.py", "..")),
]


@pytest.mark.parametrize(("where", "specs"), TYPED_PATHSPECS)
def test_pathspecs_mean_what_git_makes_of_them_where_they_are_typed(
    git_repo: GitRepoFactory, where: str, specs: tuple[str, ...]
) -> None:
    files = ["a.py", ":colon.py", "lib/x.py", "lib/Upper.PY", "lib/tests/t.py", "docs/d.md"]
    repo = git_repo({name: f"{n}\n" for n, name in enumerate(files)})
    # As `git diff` reads them (exclusions alone leave the whole tree, not the current
    # directory, as `git ls-files` would): every tracked file, against the empty tree.
    empty = git(repo, "hash-object", "-t", "tree", "/dev/null").strip()
    listed = git(repo / where, "diff", "--cached", "--name-only", "-z", empty, "--", *specs)
    expected = {p for p in listed.split("\0") if p}

    data = plan_json(repo / where, "--all", *specs)

    assert set(paths(data)) | set(reasons(data)) == expected
    assert 0 < len(expected) < len(files)


def test_a_pull_request_scope_takes_globs_and_exclusions(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    commit(repo, {"lib/tests/t.py": "t\n", "lib/new.py": "n\n", "huge.py": "x" * 1_100_000})

    data = plan_json(repo, "--base", "main", "--head", "HEAD", "*.py", ":!lib/tests")

    assert [(f["path"], f["size"]) for f in data["files"]] == [("lib/new.py", 2)]
    assert reasons(data) == {"huge.py": "larger than 1,000,000 bytes (1,100,000)"}


def test_unclosed_pathspec_magic_is_a_usage_error(feature_repo: Path) -> None:
    message = fails_with(feature_repo, ":(exclude", code=2)

    assert "`:(exclude` has no `)`" in message


def test_running_from_a_subdirectory_reviews_the_whole_change(feature_repo: Path) -> None:
    assert paths(plan_json(feature_repo / "lib")) == paths(plan_json(feature_repo))


def test_a_path_outside_the_repository_is_a_usage_error(feature_repo: Path) -> None:
    message = fails_with(feature_repo, "../elsewhere", code=2)

    assert "outside the repository" in message


def test_a_pathspec_naming_a_symlink_is_the_link_not_its_target(feature_repo: Path) -> None:
    (feature_repo / "link.py").symlink_to("feature.py")

    assert paths(plan_json(feature_repo, "link.py")) == ["link.py"]


def test_awkward_names_and_a_leading_dash_pathspec(feature_repo: Path) -> None:
    names = ["-dash.py", "with space.py", "ünïcødé.py", "new\nline.py"]
    write(feature_repo, {name: "x\n" for name in names})

    assert set(names) <= set(paths(plan_json(feature_repo)))
    assert paths(plan_json(feature_repo, "--", "-dash.py")) == ["-dash.py"]


# --- configuration and exclusions ------------------------------------------------------------


def test_exclusions_come_from_config_flags_and_the_ignore_file(feature_repo: Path) -> None:
    write(feature_repo, {".orch-review.toml": 'exclude = ["staged.py"]\n'})
    write(feature_repo, {".orch-reviewignore": "untracked.py\n"})

    data = plan_json(feature_repo, "--exclude", "feature.py")

    assert reasons(data) == {
        "README.md": "deleted in this change",
        "feature.py": "excluded by the `exclude` setting",
        "staged.py": "excluded by the `exclude` setting",
        "untracked.py": "excluded by .orch-reviewignore",
    }


def test_with_base_the_configuration_is_read_from_the_base(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a\n", ".orch-review.toml": 'exclude = ["generated/"]\n'})
    git(repo, "checkout", "-q", "-b", "pr")
    # The change tries to exclude its own risky file from review.
    commit(repo, {".orch-review.toml": 'exclude = ["risky.py"]\n', "risky.py": "r\n"})
    commit(repo, {"generated/out.py": "g\n"})

    data = plan_json(repo, "--base", "main", "--head", "HEAD")

    assert "risky.py" in paths(data)
    assert reasons(data) == {"generated/out.py": "excluded by the `exclude` setting"}


def test_orch_reviewignore_files_work_in_any_directory(git_repo: GitRepoFactory) -> None:
    repo = git_repo(
        {
            ".orch-reviewignore": "*.gen.py\n",
            "lib/.orch-reviewignore": "fixtures/\n!keep.gen.py\n",
            "lib/a.py": "a\n",
            "lib/keep.gen.py": "k\n",
            "lib/fixtures/f.py": "f\n",
            "top.gen.py": "t\n",
            "fixtures/f.py": "f\n",  # only lib/'s fixtures are excluded
        }
    )
    # Untracked files are the change; an untracked .orch-reviewignore counts too.
    write(repo, {"docs/.orch-reviewignore": "*\n", "docs/guide.py": "g\n", "new.py": "n\n"})

    everything = plan_json(repo, "--all")
    change = plan_json(repo)

    assert paths(everything) == [
        ".orch-reviewignore",
        "fixtures/f.py",
        "lib/.orch-reviewignore",
        "lib/a.py",
        "lib/keep.gen.py",
    ]
    assert reasons(everything) == {
        "lib/fixtures/f.py": "excluded by .orch-reviewignore",
        "top.gen.py": "excluded by .orch-reviewignore",
    }
    assert paths(change) == ["new.py"]
    assert reasons(change) == {
        "docs/.orch-reviewignore": "excluded by .orch-reviewignore",
        "docs/guide.py": "excluded by .orch-reviewignore",
    }


def test_with_base_orch_reviewignore_files_are_read_from_the_base(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo({"a.py": "a\n", "gen/.orch-reviewignore": "*.out.py\n"})
    git(repo, "checkout", "-q", "-b", "pr")
    # The change tries to exclude its own risky file, and to lift the base's exclusion.
    commit(
        repo,
        {
            "lib/.orch-reviewignore": "risky.py\n",
            "lib/risky.py": "r\n",
            "gen/.orch-reviewignore": "",
            "gen/x.out.py": "x\n",
        },
    )

    data = plan_json(repo, "--base", "main", "--head", "HEAD")

    assert "lib/risky.py" in paths(data)
    assert reasons(data) == {"gen/x.out.py": "excluded by .orch-reviewignore"}


def test_invalid_configuration_at_the_base_is_a_configuration_error(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo({"a.py": "a\n", ".orch-review.toml": "max-concurrent = 'ten'\n"})

    message = fails_with(repo, "--base", "main", code=2)

    assert "max-concurrent" in message and ".orch-review.toml" in message


# --- bad input: one sentence, the right exit code ----------------------------------------------


@pytest.mark.slow
def test_not_a_git_repository(tmp_path: Path) -> None:
    assert "is not inside a git repository" in fails_with(tmp_path, code=2)


@pytest.mark.slow
def test_bare_repository(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "bare.git")

    assert "bare repository" in fails_with(tmp_path / "bare.git", code=2)


def test_empty_repository(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a\n"}, commit=False)

    message = fails_with(repo, code=0)

    # Only untracked files: --all (tracked files) would find nothing either.
    assert "no commits yet" in message and "`git add`" in message and "--all" not in message
    assert "`git add`" in fails_with(repo, "--all", code=0)
    git(repo, "add", "a.py")
    assert "--staged" in fails_with(repo, code=0)
    assert paths(plan_json(repo, "--staged")) == ["a.py"]
    assert paths(plan_json(repo, "--all")) == ["a.py"]


def test_nothing_to_review_on_the_default_branch(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.py": "a\n"})

    message = fails_with(repo, code=0)

    assert message.startswith("orch-review: nothing to review") and "--all" in message
    assert fails_with(repo, "--json", code=0) == message


def test_detached_head(feature_repo: Path) -> None:
    git(feature_repo, "stash", "-q", "--include-untracked")
    git(feature_repo, "checkout", "-q", "--detach")

    data = plan_json(feature_repo)

    assert paths(data) == ["feature.py"]
    assert "detached at" in data["scope"]["description"]


def test_unknown_base(feature_repo: Path) -> None:
    message = fails_with(feature_repo, "--base", "no-such-branch", code=2)

    assert "unknown ref `no-such-branch`" in message


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--staged", "--all"), "cannot be combined"),
        (("--head", "HEAD"), "--head needs --base"),
        (("--base", "main", "--staged"), "cannot be combined"),
    ],
)
def test_conflicting_scope_flags(feature_repo: Path, args: tuple[str, ...], expected: str) -> None:
    result = run_cli(feature_repo, _env(), "plan", *args)

    assert result.returncode == 2
    assert expected in result.stderr and "Traceback" not in result.stderr


def test_shallow_clone_missing_the_merge_base(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    upstream = branch_repo(git_repo)
    commit(upstream, {"f1.py": "1\n"})
    git(upstream, "checkout", "-q", "main")
    commit(upstream, {"m1.py": "1\n"})
    clone = shallow_clone(upstream, tmp_path / "shallow")

    message = fails_with(clone, "--base", "origin/main", "--head", "HEAD", code=2)

    assert "git fetch --deepen" in message and "fetch-depth: 0" in message
    git(clone, "fetch", "-q", "--unshallow")
    assert paths(plan_json(clone, "--base", "origin/main", "--head", "HEAD")) == ["f1.py"]


# --- inside git hooks -----------------------------------------------------------------------


@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "relative"])
def test_staged_plan_in_a_hook_with_a_temporary_index(feature_repo: Path, relative: bool) -> None:
    # `git commit -- hooked.py` gives hooks a temporary index: HEAD plus that path only.
    temp_index = feature_repo / ".git" / "next-index-1.lock"
    named = ".git/next-index-1.lock" if relative else str(temp_index)
    hook = _env(GIT_INDEX_FILE=named)
    write(feature_repo, {"hooked.py": "staged in the hook's index\n"})
    subprocess.run(["git", "read-tree", "HEAD"], cwd=feature_repo, env=hook, check=True)
    subprocess.run(["git", "add", "hooked.py"], cwd=feature_repo, env=hook, check=True)
    write(feature_repo, {"hooked.py": "changed after staging, not committed\n"})
    hook["GIT_DIR"] = ".git"
    before = temp_index.read_bytes()

    data = plan_json(feature_repo, "--staged", env=hook)

    assert paths(data) == ["hooked.py"]  # not staged.py, which is in the regular index only
    assert data["files"][0]["size"] == len("staged in the hook's index\n")
    assert temp_index.read_bytes() == before


def test_staged_plan_in_a_linked_worktree_hook(feature_repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(feature_repo, "worktree", "add", "-q", "-b", "wt-branch", str(worktree), "main")
    write(worktree, {"wt.py": "w\n"})
    git(worktree, "add", "wt.py")
    git_dir = git(worktree, "rev-parse", "--absolute-git-dir").strip()
    hook = _env(GIT_DIR=git_dir, GIT_INDEX_FILE=str(Path(git_dir, "index")))

    data = plan_json(worktree, "--staged", env=hook)

    assert paths(data) == ["wt.py"]


def test_count_tokens_asks_the_api_once_and_nothing_else(
    feature_repo: Path, fake_api: FakeMessagesAPI, api_env: dict[str, str]
) -> None:
    result = run_cli(feature_repo, api_env, "plan", "--json", "--count-tokens")

    assert result.returncode == 0, result.stderr
    tokens = json.loads(result.stdout)["tokens"]
    assert tokens["method"] == "count_tokens API" and tokens["counted"] > 0
    assert [r.path for r in fake_api.requests] == ["/v1/messages/count_tokens"]
    body = fake_api.requests[0].body
    assert "staged.py\tadded +1 -0 lines 1" in body["messages"][0]["content"]


def test_size_limit_and_generated_list_come_from_config(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"README.md": "# x\n"})
    (repo / "big.py").write_text("x = 1\n" * 10)
    (repo / "poetry.lock").write_text("[lock]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}

    default = json.loads(run_cli(repo, env, "plan", "--json").stdout)
    assert {s["path"] for s in default["skipped"]} == {"poetry.lock"}

    (repo / ".orch-review.toml").write_text("max-file-size = 10\ngenerated = []\n")
    configured = json.loads(run_cli(repo, env, "plan", "--json").stdout)
    reasons = {s["path"]: s["reason"] for s in configured["skipped"]}
    assert reasons["big.py"].startswith("larger than 10 bytes")
    assert "poetry.lock" in {f["path"] for f in configured["files"]}


def test_a_counted_prompt_size_is_shown_as_exact(
    feature_repo: Path, fake_api: FakeMessagesAPI, api_env: dict[str, str]
) -> None:
    counted = run_cli(feature_repo, api_env, "plan", "--count-tokens")
    estimated = run_cli(feature_repo, api_env, "plan")

    assert counted.returncode == 0, counted.stderr
    line = next(ln for ln in counted.stdout.splitlines() if ln.startswith("pre-scout prompt:"))
    assert "~" not in line and "count_tokens API" in line
    assert "pre-scout prompt: ~" in estimated.stdout


def test_a_path_that_matches_nothing_is_a_usage_error(feature_repo: Path) -> None:
    message = fails_with(feature_repo, "src/tyop.py", code=2)

    assert "`src/tyop.py` matches no file" in message
    assert "matches no file" in fails_with(feature_repo, "--all", "nope/", code=2)


def test_count_tokens_with_a_rejected_key_is_a_clean_error(
    feature_repo: Path, fake_api: FakeMessagesAPI, api_env: dict[str, str]
) -> None:
    fake_api.expected_key = "the-real-key"

    result = run_cli(feature_repo, api_env, "plan", "--count-tokens")

    assert result.returncode == 2
    assert "rejected the credentials" in result.stderr
    assert "Traceback" not in result.stderr and "bug" not in result.stderr


def test_count_tokens_against_a_server_that_is_down_is_a_clean_error(
    feature_repo: Path, api_env: dict[str, str]
) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = {**api_env, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}

    result = run_cli(
        feature_repo, {**env, "ORCH_REVIEW_MAX_RETRIES": "0"}, "plan", "--count-tokens"
    )

    # No request can reach a closed port: exit 2 at once, naming the endpoint.
    assert result.returncode == 2
    assert f"127.0.0.1:{port}" in result.stderr and "ANTHROPIC_BASE_URL" in result.stderr
    assert "Traceback" not in result.stderr and "bug" not in result.stderr


# --- files this user may not read ---------------------------------------------------------------


@pytest.fixture
def unreadable_repo(feature_repo: Path, tmp_path: Path) -> Path:
    """feature_repo plus a staged file and an untracked one, both mode 000, as seen by a
    process without root's permission override."""
    if not can_drop_read_override(tmp_path):
        pytest.skip("needs root and setpriv to run without root's permission to read anything")
    write(feature_repo, {"locked_staged.py": "x = 1\n", "locked_new.py": "y = 2\n"})
    git(feature_repo, "add", "locked_staged.py")
    (feature_repo / "locked_staged.py").chmod(0)
    (feature_repo / "locked_new.py").chmod(0)
    return feature_repo


@pytest.mark.parametrize(
    ("scope", "unreadable"),
    [
        ((), {"locked_new.py", "locked_staged.py"}),
        (("--staged",), {"locked_staged.py"}),
        (("--all",), {"locked_staged.py"}),
    ],
)
def test_unreadable_files_are_skipped_as_unreadable(
    unreadable_repo: Path, scope: tuple[str, ...], unreadable: set[str]
) -> None:
    result = run_cli_unprivileged(unreadable_repo, _env(), "plan", "--json", *scope)

    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert {p for p, why in reasons(data).items() if why == "unreadable"} == unreadable
    assert not unreadable & set(paths(data))
    assert "staged.py" in paths(data)  # the readable rest is reviewed as before
    text = run_cli_unprivileged(unreadable_repo, _env(), "plan", *scope)
    assert text.returncode == 0, text.stderr
    assert "skipped: locked_staged.py (unreadable)" in text.stdout.splitlines()


def test_a_scope_of_only_unreadable_files_is_not_a_clean_result(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    if not can_drop_read_override(tmp_path):
        pytest.skip("needs root and setpriv to run without root's permission to read anything")
    repo = git_repo({"README.md": "# x\n"})
    write(repo, {"locked.py": "x = 1\n"})
    git(repo, "add", "locked.py")
    (repo / "locked.py").chmod(0)

    result = run_cli_unprivileged(repo, _env(), "plan", "--staged")

    assert result.returncode == 3
    assert "cannot be read (locked.py)" in result.stderr


# --- names that are not UTF-8 -------------------------------------------------------------------

LATIN1_NAME = b"caf\xe9.py"
GIT_QUOTED = '"caf\\351.py"'  # what `git ls-files` prints for it (core.quotePath)


@pytest.fixture
def latin1_repo(git_repo: GitRepoFactory) -> Path:
    repo = git_repo({"README.md": "# x\n"})
    with open(os.path.join(os.fsencode(repo), LATIN1_NAME), "wb") as stream:
        stream.write(b"x = 1\n")
    return repo


def test_a_name_that_is_not_utf8_is_shown_as_git_quotes_it(
    latin1_repo: Path, fake_api: FakeMessagesAPI, api_env: dict[str, str]
) -> None:
    assert git(latin1_repo, "ls-files", "--others").strip() == GIT_QUOTED

    as_text = run_cli(latin1_repo, _env(PYTHONIOENCODING="utf-8"), "plan")
    counted = run_cli(latin1_repo, api_env, "plan", "--count-tokens")

    data = json.loads(subprocess_bytes(latin1_repo, "plan", "--json").decode("utf-8"))
    # JSON carries the real name (a surrogate escape for the byte that is not UTF-8).
    assert [os.fsencode(p) for p in paths(data)] == [LATIN1_NAME]
    assert as_text.returncode == 0, as_text.stderr
    assert GIT_QUOTED in as_text.stdout
    assert counted.returncode == 0, counted.stderr
    prompt = fake_api.requests[0].body["messages"][0]["content"]
    assert GIT_QUOTED in prompt and "\\udce9" not in prompt


def subprocess_bytes(cwd: Path, *args: str) -> bytes:
    """stdout of ``orch-review ARGS`` as raw bytes (to check they are valid UTF-8)."""
    result = subprocess.run(
        [sys.executable, "-m", "orch_review", *args], cwd=cwd, env=_env(), capture_output=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout
