"""The read-only tools agents get without a shell: what each shows, and everything they refuse.

Every input here is what a hijacked model could send. The repository is real; the tools
read it through the project's inert git, as a review does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orch_review.engine.shell.read_tools import (
    DEFAULT_RESULTS,
    MAX_RESULTS,
    READ_TOOLS,
    ToolHandler,
    glob_matcher,
)
from orch_review.engine.shell.snapshot_tools import SnapshotTools
from orch_review.scope.git import browse, open_repo
from tests.conftest import GitRepoFactory, git, write

TOKEN = "ghp_secret0123456789abcdef"


class Repo:
    """A reviewed change: ``base`` then ``head`` on branch main, and a commit elsewhere."""

    def __init__(self, git_repo: GitRepoFactory) -> None:
        self.path = git_repo(
            {
                "app.py": "def run(x):\n    return eval(x)\n",
                "lib/util.py": "".join(f"value_{n} = {n}\n" for n in range(1, 601)),
                "blob.bin": b"\0\1\2" * 100,
                "docs/a.md": "# a\n",
            }
        )
        os.symlink("/etc/passwd", self.path / "passwd")
        os.symlink("/etc", self.path / "etc")
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "-m", "links")
        self.base = git(self.path, "rev-parse", "HEAD").strip()
        write(self.path, {"app.py": "def run(x):\n    return eval(x)  # reviewed\n"})
        git(self.path, "commit", "-q", "-am", "the change")
        self.head = git(self.path, "rev-parse", "HEAD").strip()
        git(self.path, "checkout", "-q", "-b", "other")
        write(self.path, {"private.txt": "not reviewed\n"})
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "-m", "elsewhere")
        self.elsewhere = git(self.path, "rev-parse", "HEAD").strip()
        git(self.path, "checkout", "-q", "main")
        url = f"https://x-access-token:{TOKEN}@example.invalid/o/r.git"
        git(self.path, "remote", "add", "origin", url)

    def tools(self, **options: float) -> dict[str, ToolHandler]:
        repo = open_repo(self.path)
        return SnapshotTools(repo, self.head, self.base, **options).handlers()  # type: ignore[arg-type]


@pytest.fixture
def repo(git_repo: GitRepoFactory) -> Repo:
    return Repo(git_repo)


def ok(handler: ToolHandler, **tool_input: object) -> str:
    text, is_error = handler(tool_input)
    assert not is_error, text
    return text


def refused(handler: ToolHandler, **tool_input: object) -> str:
    text, is_error = handler(tool_input)
    assert is_error, text
    assert text.startswith("Not run: ")
    return text


def test_every_tool_is_an_ordinary_client_tool_with_a_schema() -> None:
    for tool in READ_TOOLS:
        assert set(tool) == {"name", "description", "input_schema"}
        assert tool["input_schema"]["type"] == "object"
        assert "bash" not in tool["description"]


def test_read_file_numbers_lines_and_reads_a_range(repo: Repo) -> None:
    read = repo.tools()["read_file"]
    assert (
        ok(read, path="app.py") == "     1\tdef run(x):\n     2\t    return eval(x)  # reviewed\n"
    )
    assert ok(read, path="./lib/util.py", start_line=3, end_line=4) == (
        "     3\tvalue_3 = 3\n     4\tvalue_4 = 4\n"
    )
    assert "lib/util.py" in refused(read, path="lib/util.py", start_line=700)
    assert "directory" in refused(read, path="lib")
    assert "not a file" in refused(read, path="missing.py")
    assert ok(read, path="blob.bin").endswith("is a binary file of 300 bytes; not shown.")


def test_a_long_file_is_cut_at_the_output_cap_with_where_to_read_on(repo: Repo) -> None:
    text = ok(repo.tools()["read_file"], path="lib/util.py")
    assert len(text) <= 8000
    assert text.rstrip().endswith("lines 1-348 shown of 600; read on with start_line 349]")
    assert "   348\tvalue_348 = 348\n" in text


@pytest.mark.parametrize(
    "path",
    ["../outside", "/etc/passwd", "lib/../../outside", ".git/config", "lib/../.git/config"],
)
def test_paths_outside_the_tree_or_into_git_are_refused(repo: Repo, path: str) -> None:
    tools = repo.tools()
    for name in ("read_file", "git_blame"):
        assert TOKEN not in refused(tools[name], path=path, start_line=1, end_line=1)


def test_a_symbolic_link_out_of_the_tree_is_never_followed(repo: Repo) -> None:
    tools = repo.tools()
    said = refused(tools["read_file"], path="passwd")
    assert "symbolic link to `/etc/passwd`" in said and "root:" not in said
    assert "not a file" in refused(tools["read_file"], path="etc/passwd")
    assert "No match" in ok(tools["search"], pattern="root:", path="etc")
    assert "root:" not in ok(tools["search"], pattern="root")
    assert "passwd (symbolic link)" in ok(tools["list_files"])


def test_the_users_git_config_and_other_branches_are_out_of_reach(repo: Repo) -> None:
    tools = repo.tools()
    everything = [
        ok(tools["search"], pattern="x-access-token"),
        ok(tools["list_files"]),
        ok(tools["git_log"], patch=True),
        ok(tools["git_diff"]),
    ]
    assert all(TOKEN not in text and "private.txt" not in text for text in everything)
    for revision in (repo.elsewhere, repo.elsewhere[:10], "other", "HEAD:.git/config", "@{-1}"):
        assert "not a reviewed revision" in refused(tools["git_show"], revision=revision)


@pytest.mark.parametrize(
    "tool_input",
    [
        {"name": "git_show", "revision": "--output=OUT"},
        {"name": "git_diff", "from": "--output=OUT"},
        {"name": "git_diff", "to": "--ext-diff"},
        {"name": "git_blame", "path": "--output=OUT", "start_line": 1, "end_line": 1},
        {"name": "git_log", "path": "--output=OUT"},
        {"name": "git_diff", "path": "--output=OUT"},
        {"name": "search", "pattern": "--output=OUT"},
        {"name": "search", "pattern": "x", "path": "--output=OUT"},
        {"name": "search", "pattern": "x", "glob": "--output=OUT"},
        {"name": "list_files", "path": "--output=OUT"},
    ],
)
def test_no_model_string_reaches_git_as_an_option(
    repo: Repo, tool_input: dict[str, object], tmp_path: Path
) -> None:
    target = tmp_path / "written"
    tool = repo.tools()[str(tool_input.pop("name"))]
    spelled = {
        k: str(v).replace("OUT", str(target)) if isinstance(v, str) else v
        for k, v in tool_input.items()
    }

    tool(spelled)

    assert not target.exists()
    assert not list(repo.path.glob("*written*"))


def test_search_lists_matches_and_caps_them(repo: Repo) -> None:
    search = repo.tools()["search"]
    assert ok(search, pattern=r"eval\(x\)") == "app.py:2:    return eval(x)  # reviewed"
    assert ok(search, pattern="EVAL", ignore_case=True, glob="*.py").startswith("app.py:2:")
    assert ok(search, pattern="value_1 =", fixed_string=True, path="lib") == (
        "lib/util.py:1:value_1 = 1"
    )
    capped = ok(search, pattern="value_")
    assert len(capped.splitlines()) == DEFAULT_RESULTS + 1
    assert capped.endswith(f"or raise max_results (up to {MAX_RESULTS})]")
    most = ok(search, pattern="value_", max_results=10_000)
    assert len(most.splitlines()) == MAX_RESULTS + 1 and len(most) <= 8000


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("((a{1,100}){1,100}){1,100}", "counted repetitions"),
        ("(a){999}(b){999}", "counted repetitions"),
        (r"(a*)\1", "backreferences"),
        ("x" * 1001, "at most 1000 characters"),
        ("a\nb", "one line"),
    ],
)
def test_patterns_that_could_exhaust_git_are_refused(repo: Repo, pattern: str, why: str) -> None:
    assert why in refused(repo.tools()["search"], pattern=pattern)


def test_backtracking_patterns_finish(repo: Repo, git_repo: GitRepoFactory) -> None:
    long = git_repo({"a.txt": "a" * 5000 + "\n"})
    tools = SnapshotTools(open_repo(long), git(long, "rev-parse", "HEAD").strip(), None)
    search = tools.handlers()["search"]
    for pattern in ("(a+)+b", "(a|a)*b", "(.*a){30}b", "((a+)+)+b"):
        assert ok(search, pattern=pattern) == "No match."


def test_git_grep_past_its_heap_cap_is_stopped(repo: Repo) -> None:
    """What the pattern check refuses would take gigabytes; the heap cap ends it anyway."""
    argv = browse.grep_argv(
        repo.head, "((a{1,100}){1,100}){1,100}", [], fixed=False, ignore_case=False
    )
    done = browse.run_bounded(
        open_repo(repo.path), argv, limit=1000, timeout=60, heap=browse.GREP_HEAP_BYTES
    )
    assert done.status not in (0, 1) and not done.timed_out


def test_a_command_past_its_deadline_is_killed(repo: Repo) -> None:
    done = browse.run_bounded(
        open_repo(repo.path),
        ["git", "-c", "alias.slow=!sleep 30", "slow"],
        limit=100,
        timeout=0.5,
    )
    assert done.timed_out and done.status is None


def test_output_past_the_byte_limit_is_cut_and_said(repo: Repo) -> None:
    done = browse.run_bounded(
        open_repo(repo.path),
        ["git", "cat-file", "-p", f"{repo.head}:lib/util.py"],
        limit=100,
        timeout=30,
    )
    assert done.cut and len(done.data) == 100


def test_list_files_by_directory_and_glob(repo: Repo) -> None:
    listing = repo.tools()["list_files"]
    assert ok(listing, path="lib") == "lib/util.py (9,384 bytes)"
    assert ok(listing, glob="**/*.md") == "docs/a.md (4 bytes)"
    assert ok(listing, path="docs", glob="*.md") == "docs/a.md (4 bytes)"
    assert "inside the repository" in refused(listing, glob="../*")
    assert "inside the repository" in refused(listing, glob="/etc/*")


def test_the_glob_matcher_takes_linear_time_on_hostile_globs() -> None:
    match = glob_matcher("*a" * 200 + "b")
    assert not match("a" * 4000)
    assert glob_matcher("src/**/*.py")("src/a/b/c.py")
    assert glob_matcher("**/*.py")("c.py")
    assert not glob_matcher("*.py")("a/c.py")
    assert glob_matcher("a?c")("abc") and not glob_matcher("a?c")("a/c")


def test_git_tools_show_only_the_reviewed_revisions(repo: Repo) -> None:
    tools = repo.tools()
    log = ok(tools["git_log"])
    assert f"commit {repo.head}" in log and "the change" in log and "links" not in log
    assert "-    return eval(x)\n+    return eval(x)  # reviewed" in ok(tools["git_diff"])
    assert ok(tools["git_diff"], stat=True).startswith(" app.py | 2 +-")
    assert ok(tools["git_show"], revision="base", path="app.py") == (
        "     1\tdef run(x):\n     2\t    return eval(x)\n"
    )
    assert "the change" in ok(tools["git_show"], revision=repo.head[:8])
    assert "the change" in ok(tools["git_show"], revision="HEAD")
    blame = ok(tools["git_blame"], path="app.py", start_line=2, end_line=2)
    assert blame.startswith(repo.head[:8]) and "# reviewed" in blame
    diff = ok(tools["git_diff"], **{"from": repo.base[:7], "to": "HEAD", "path": "app.py"})
    assert "+    return eval(x)  # reviewed" in diff


def test_long_git_output_is_cut_with_a_note(repo: Repo, git_repo: GitRepoFactory) -> None:
    big = git_repo({"a.txt": "x\n"})
    base = git(big, "rev-parse", "HEAD").strip()
    write(big, {"a.txt": "".join(f"line {n}\n" for n in range(3000))})
    git(big, "commit", "-q", "-am", "grow")
    tools = SnapshotTools(open_repo(big), git(big, "rev-parse", "HEAD").strip(), base)
    text = ok(tools.handlers()["git_diff"])
    assert len(text) <= 8000 and "[output cut at 8,000 characters" in text


def test_without_a_base_the_history_of_head_is_reviewed(git_repo: GitRepoFactory) -> None:
    path = git_repo({"a.txt": "one\n"})
    head = git(path, "rev-parse", "HEAD").strip()
    tools = SnapshotTools(open_repo(path), head, None).handlers()
    assert "initial commit" in ok(tools["git_log"])
    assert "no base" in refused(tools["git_diff"])
    assert "no base" in refused(tools["git_show"], revision="base")


def test_malformed_inputs_are_refused_not_crashes(repo: Repo) -> None:
    tools = repo.tools()
    assert "path" in refused(tools["read_file"])
    assert "path" in refused(tools["read_file"], path=7)
    assert "start_line" in refused(tools["read_file"], path="app.py", start_line=0)
    assert "before" in refused(tools["read_file"], path="app.py", start_line=2, end_line=1)
    assert "pattern" in refused(tools["search"])
    assert "max_results" in refused(tools["search"], pattern="x", max_results="all")
    assert "max_count" in refused(tools["git_log"], max_count=True)
    assert "revision" in refused(tools["git_show"], revision=["HEAD"])
    assert "start_line" in refused(tools["git_blame"], path="app.py")
    refused(tools["read_file"], path="app\0.py")


def test_one_huge_line_is_cut_and_reading_moves_on(git_repo: GitRepoFactory) -> None:
    path = git_repo({"min.js": "x" * 50_000 + "\nsecond\n"})
    tools = SnapshotTools(open_repo(path), git(path, "rev-parse", "HEAD").strip(), None)
    text = ok(tools.handlers()["read_file"], path="min.js")
    assert len(text) <= 8000
    assert "[line 1 cut]" in text and "read on with start_line 2]" in text


def test_pathspec_magic_in_a_path_is_taken_literally(repo: Repo) -> None:
    tools = repo.tools()
    for path in (":(top)app.py", ":(glob)**", ":(exclude)app.py", ":/app.py"):
        assert "not a file" in refused(tools["read_file"], path=path)
        assert ok(tools["list_files"], path=path).startswith("No file under")
        assert ok(tools["search"], pattern="eval", path=path) == "No match."


def test_files_the_repository_config_names_are_never_read_into_output(
    repo: Repo, tmp_path: Path
) -> None:
    """A stranger's `.git/config` can name a file for blame or the mailmap to read; its
    lines would show in git's output or errors."""
    secret = tmp_path / "secret"
    secret.write_text(f"Someone Else <x@y> {TOKEN}\n")
    git(repo.path, "config", "blame.ignoreRevsFile", str(secret))
    git(repo.path, "config", "mailmap.file", str(secret))
    git(repo.path, "config", "log.mailmap", "true")
    tools = repo.tools()
    texts = [
        ok(tools["git_blame"], path="app.py", start_line=1, end_line=2),
        ok(tools["git_log"]),
        ok(tools["git_show"], revision="HEAD"),
    ]
    assert all(TOKEN not in text and "Someone Else" not in text for text in texts)
