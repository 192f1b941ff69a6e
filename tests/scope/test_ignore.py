"""Ignore rules: untracked files as git lists them, and orch-review's own exclusions (read
with pathspec) checked against `git check-ignore` on the same patterns."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from orch_review.scope import git as gitops
from orch_review.scope.ignore import NestedPatterns, PatternList
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import run_git, write


@dataclass(frozen=True)
class Case:
    """Ignore files (path -> text) and the files to create next to them."""

    ignore_files: dict[str, str]
    paths: tuple[str, ...]
    info_exclude: str = ""
    global_excludes: str = ""
    extra: dict[str, str] = field(default_factory=dict)


CASES = {
    "negation": Case(
        {".gitignore": "*.log\n!keep.log\n"},
        ("a.log", "keep.log", "sub/keep.log", "sub/b.log", "c.txt"),
    ),
    "negation-then-ignore-again": Case(
        {".gitignore": "*.log\n!*.log\nagain.log\n"},
        ("a.log", "again.log", "sub/again.log"),
    ),
    "directory-only": Case(
        {".gitignore": "cache/\n"},
        ("cache/x", "sub/cache/y", "other/cache", "cache2/z"),
    ),
    "directory-only-with-slash-inside": Case(
        {".gitignore": "a/cache/\n"},
        ("a/cache/x", "b/a/cache/y", "a/cachefile"),
    ),
    "anchored": Case(
        {".gitignore": "/root.txt\nsub/anchored.txt\n"},
        ("root.txt", "sub/root.txt", "sub/anchored.txt", "x/sub/anchored.txt"),
    ),
    "double-star": Case(
        {".gitignore": "**/logs\na/**/b\nfoo/**\n**/deep/*.tmp\n"},
        (
            "logs/x",
            "deep/logs/y",
            "a/b",
            "a/x/y/b",
            "a/bc",
            "foo/bar",
            "foo/sub/baz",
            "food/x",
            "deep/q.tmp",
            "p/deep/r.tmp",
            "p/deep/s/t.tmp",
        ),
    ),
    "trailing-double-star-does-not-match-the-directory-itself": Case(
        {".gitignore": "foo/**\n!foo/keep\n!foo/sub/keep\n"},
        ("foo/keep", "foo/drop", "foo/sub/keep"),
    ),
    "trailing-double-star-slash-matches-directories-below-only": Case(
        {".gitignore": "b/**/\n**/a*/**\n"},
        ("b/file", "b/sub/file", "ab/ab/c", "ab/f", "x/ab/y"),
    ),
    "everything-with-double-star-or-star-slash": Case(
        {".gitignore": "**\n!keep/\n!keep/x\n", "a/.gitignore": "!*/\n"},
        ("top", "keep/x", "keep/y", "a/b/c"),
    ),
    "star-slash-ignores-every-directory": Case(
        {".gitignore": "*/\n!d1/\n"},
        ("root.txt", "d1/a", "d2/b", "d1/d3/c"),
    ),
    "negated-directory-does-not-reinclude-what-its-files-match": Case(
        {".gitignore": "*.txt\n!build/\n"},
        ("a.txt", "build/a.txt", "build/b.md"),
    ),
    "patterns-matching-nothing": Case(
        {".gitignore": "!\n/\n*.tmp\n"},
        ("a.tmp", "a"),
    ),
    "nested-gitignore-files": Case(
        {
            ".gitignore": "*.tmp\n/only-here\n",
            "sub/.gitignore": "!*.tmp\n/only-here\n",
            "sub/deeper/.gitignore": "*.tmp\n",
        },
        (
            "a.tmp",
            "only-here",
            "sub/a.tmp",
            "sub/only-here",
            "sub/deeper/a.tmp",
            "sub/deeper/only-here",
            "other/only-here",
        ),
    ),
    "reinclude-inside-ignored-directory": Case(
        {".gitignore": "build/\n!build/keep.txt\nout/*\n!out/keep.txt\ndist\n!dist/x\n"},
        ("build/keep.txt", "build/other.txt", "out/keep.txt", "out/other.txt", "dist/x"),
    ),
    "reinclude-from-nested-file-inside-ignored-directory": Case(
        {".gitignore": "vendor/\n", "vendor/.gitignore": "!*\n"},
        ("vendor/lib.py", "vendor/sub/mod.py"),
    ),
    "ignore-everything-except": Case(
        {".gitignore": "/*\n!/src/\n!/.gitignore\nsrc/*\n!src/keep.py\n"},
        ("top.txt", "src/keep.py", "src/drop.py", "docs/a.md"),
    ),
    "wildcards-classes-and-escapes": Case(
        {".gitignore": "[abc].txt\n*.py[co]\n?.c\n\\#hash\n\\!bang\n# a comment\n"},
        ("a.txt", "d.txt", "m.pyc", "m.pyo", "m.py", "x.c", "xy.c", "#hash", "!bang"),
    ),
    "trailing-spaces": Case(
        {".gitignore": "trail.txt   \nesc\\ \n"},
        ("trail.txt", "esc ", "esc"),
    ),
    "single-star-does-not-cross-directories": Case(
        {".gitignore": "doc/*.txt\ndoc/**/*.md\n"},
        ("doc/a.txt", "doc/sub/b.txt", "doc/c.md", "doc/sub/d.md"),
    ),
    "directory-patterns-with-wildcards": Case(
        {".gitignore": "*.egg-info/\n__pycache__/\n"},
        ("pkg.egg-info/PKG-INFO", "x/__pycache__/m.pyc", "file.egg-info"),
    ),
    "info-exclude-and-global-excludes": Case(
        {".gitignore": "*.x\n"},
        ("a.g", "keep.g", "a.x", "b.x", "c.i"),
        info_exclude="!keep.g\n!a.x\n*.i\n",
        global_excludes="*.g\n",
    ),
    "nested-files-in-directories-with-glob-characters": Case(
        {
            "[x]/.gitignore": "*.tmp\n/top.txt\n",
            "!bang/.gitignore": "*.log\n",
            "#hash/.gitignore": "/a\n",
            "st*r/.gitignore": "a?\n!ab\n",
        },
        (
            "[x]/a.tmp",
            "[x]/top.txt",
            "[x]/s/top.txt",
            "x/a.tmp",
            "!bang/a.log",
            "bang/b.log",
            "#hash/a",
            "st*r/ab",
            "st*r/ac",
            "star/ac",
            "st*r/s/ac",
        ),
    ),
    "nested-gitignore-overrides-global": Case(
        {"sub/.gitignore": "!*.g\n"},
        ("a.g", "sub/a.g"),
        global_excludes="*.g\n",
    ),
}


def _ancestors(paths: tuple[str, ...]) -> set[str]:
    dirs = set()
    for path in paths:
        parts = path.split("/")
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return dirs


def _git_ignored(repo: Path, candidates: list[str], env: dict[str, str]) -> set[str]:
    result = run_git(repo, "check-ignore", "-z", "--stdin", env=env, input="\0".join(candidates))
    assert result.returncode in (0, 1), result.stderr
    return {p for p in result.stdout.split("\0") if p}


def _build(tmp_path: Path, git_repo: GitRepoFactory, case: Case) -> tuple[Path, dict[str, str]]:
    repo = git_repo({}, commit=False)
    write(repo, case.ignore_files)
    write(repo, {path: "x\n" for path in case.paths})
    if case.info_exclude:
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "exclude").write_text(case.info_exclude)
    env = {**os.environ}
    if case.global_excludes:
        # The default location (XDG), so the fallback is exercised, not core.excludesFile.
        config_home = tmp_path / "xdg"
        (config_home / "git").mkdir(parents=True)
        (config_home / "git" / "ignore").write_text(case.global_excludes)
        env["XDG_CONFIG_HOME"] = str(config_home)
    return repo, env


@pytest.mark.parametrize("name", sorted(CASES))
def test_untracked_files_match_git_ls_files_exclude_standard(
    name: str, tmp_path: Path, git_repo: GitRepoFactory
) -> None:
    case = CASES[name]
    repo, env = _build(tmp_path, git_repo, case)
    listed = run_git(repo, "ls-files", "-z", "--others", "--exclude-standard", env=env)
    expected = sorted(p for p in listed.stdout.split("\0") if p)

    assert gitops.untracked_files(gitops.open_repo(repo), env) == expected


def test_core_excludes_file_is_used_when_set(tmp_path: Path, git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.secret": "x", "b.txt": "y"}, commit=False)
    excludes = tmp_path / "my-excludes"
    excludes.write_text("*.secret\n")
    git(repo, "config", "core.excludesFile", str(excludes))

    assert gitops.untracked_files(gitops.open_repo(repo), dict(os.environ)) == ["b.txt"]


def test_relative_core_excludes_file_is_relative_to_the_top(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"a.secret": "x", "b.txt": "y", "sub/c.secret": "z"}, commit=False)
    (repo / ".git" / "my-excludes").write_text("*.secret\n")
    git(repo, "config", "core.excludesFile", ".git/my-excludes")
    expected = run_git(repo, "ls-files", "--others", "--exclude-standard").stdout.split()

    assert gitops.untracked_files(gitops.open_repo(repo), dict(os.environ)) == expected == ["b.txt"]


def test_untracked_files_are_narrowed_by_pathspecs(git_repo: GitRepoFactory) -> None:
    repo = git_repo({"src/a.py": "x", "src/b.log": "x", "docs/c.md": "x", ".gitignore": "*.log\n"})
    write(repo, {"src/new.py": "x", "src/new.log": "x", "docs/new.md": "x", "newdir/n.py": "x"})

    found = gitops.untracked_files(gitops.open_repo(repo), dict(os.environ), ("src",))

    assert found == ["src/new.py"]


def test_git_decides_patterns_pathspec_cannot_read(git_repo: GitRepoFactory) -> None:
    # git reads "[z-a]" as matching "z" only; pathspec rejects the range.
    repo = git_repo({".gitignore": "[z-a]\n*.tmp\n"})
    write(repo, {"z": "x", "a.tmp": "x", "b.py": "x"})

    found = gitops.untracked_files(gitops.open_repo(repo), dict(os.environ))

    assert found == ["b.py"]


def test_a_pattern_pathspec_cannot_compile_is_skipped_not_fatal() -> None:
    # In orch-review's own files, dropping the one pattern keeps the rest of the file working
    # instead of crashing the review.
    patterns = NestedPatterns({"": "[z-a]\n*.tmp\n", "sub": "[z-a]\n*.py\n"})

    assert [p for p in ("a.tmp", "b.py", "sub/c.py", "sub/d.md") if patterns.ignores(p)] == [
        "a.tmp",
        "sub/c.py",
    ]
    assert PatternList(["[z-a]", "*.tmp"]).ignores("x/a.tmp")


def test_symlinks_and_nested_repositories_are_listed_like_git_does(
    git_repo: GitRepoFactory,
) -> None:
    repo = git_repo({"lib/a.py": "x", ".gitignore": "link/\n"})
    (repo / "link").symlink_to("lib", target_is_directory=True)  # "link/" matches dirs only
    (repo / "newdir").mkdir()
    (repo / "newdir" / "link2").symlink_to("../lib", target_is_directory=True)
    for nested in ("nested", "newdir/inner"):
        (repo / nested).mkdir(parents=True)
        git(repo / nested, "init", "-q")
        (repo / nested / "file.py").write_text("x")
    listed = run_git(repo, "ls-files", "-z", "--others", "--exclude-standard")
    expected = sorted(p.rstrip("/") for p in listed.stdout.split("\0") if p)

    found = gitops.untracked_files(gitops.open_repo(repo), dict(os.environ))

    assert found == expected == ["link", "nested", "newdir/inner", "newdir/link2"]


SEGMENTS = ("a", "b", "ab", "x.txt", "y.log")
PATTERN_PARTS = ("a", "b", "*", "**", "?", "x.txt", "*.txt", "*.log", "[ab]", "a*")


def _random_pattern(rng: random.Random) -> str:
    pattern = "/".join(rng.choice(PATTERN_PARTS) for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.2:
        pattern = "/" + pattern
    if rng.random() < 0.25:
        pattern += "/"
    return ("!" if rng.random() < 0.3 else "") + pattern


def _random_case(rng: random.Random) -> Case:
    files = {"/".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 4))) for _ in range(12)}
    # A path cannot be both a file and a directory.
    files = {f for f in files if not any(other.startswith(f + "/") for other in files)}
    ignore_files = {".gitignore": "".join(_random_pattern(rng) + "\n" for _ in range(4))}
    for directory in sorted(_ancestors(tuple(files)))[:2]:
        patterns = "".join(_random_pattern(rng) + "\n" for _ in range(2))
        ignore_files[f"{directory}/.gitignore"] = patterns
    return Case(ignore_files, tuple(sorted(files)))


# The matchers behind orch-review's own exclusions, each on the cases it can express: one list
# of patterns (`exclude`, the generated-file list), and .orch-reviewignore files in any
# directory, read as git reads .gitignore files.
ONE_LIST, FILES = "one list", "files in any directory"
CASES_FOR = {
    ONE_LIST: sorted(
        name
        for name, case in CASES.items()
        if set(case.ignore_files) == {".gitignore"}
        if not case.info_exclude and not case.global_excludes
    ),
    FILES: sorted(
        name for name, case in CASES.items() if not case.info_exclude and not case.global_excludes
    ),
}


def _exclusions_agree(tmp_path: Path, git_repo: GitRepoFactory, case: Case, kind: str) -> None:
    repo, env = _build(tmp_path, git_repo, case)
    git_says = _git_ignored(repo, list(case.paths), env)
    patterns: PatternList | NestedPatterns
    if kind == ONE_LIST:
        patterns = PatternList(case.ignore_files[".gitignore"].splitlines())
    else:  # the same texts, as .orch-reviewignore files in the same directories
        patterns = NestedPatterns(
            {path.rpartition("/")[0]: text for path, text in case.ignore_files.items()}
        )

    assert {p for p in case.paths if patterns.ignores(p)} == git_says, case.ignore_files


@pytest.mark.parametrize(
    ("kind", "name"), [(kind, name) for kind, names in CASES_FOR.items() for name in names]
)
def test_review_exclusions_agree_with_git_check_ignore(
    kind: str, name: str, tmp_path: Path, git_repo: GitRepoFactory
) -> None:
    _exclusions_agree(tmp_path, git_repo, CASES[name], kind)


@pytest.mark.parametrize("kind", sorted(CASES_FOR))
@pytest.mark.parametrize("seed", range(6))
def test_review_exclusions_agree_with_git_on_generated_patterns(
    kind: str, seed: int, tmp_path: Path, git_repo: GitRepoFactory
) -> None:
    rng = random.Random(1000 + seed)
    for _ in range(5):
        case = _random_case(rng)
        if kind == ONE_LIST:
            case = Case({".gitignore": case.ignore_files[".gitignore"]}, case.paths)
        _exclusions_agree(tmp_path, git_repo, case, kind)
