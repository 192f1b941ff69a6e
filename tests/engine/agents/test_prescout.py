"""The pre-scout summary the main agent starts from: complete when small, capped when huge."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from orch_review.engine.agents.prescout import (
    LANGUAGES,
    LISTED_FILES_CAP,
    LISTED_SKIPPED_CAP,
    languages,
    summary,
    task_text,
)
from orch_review.scope import git as gitops
from orch_review.scope.resolve import Scope, ScopeRequest, resolve_scope
from tests.conftest import GitRepoFactory, git
from tests.gitrepos import branch_repo, commit, head, write


def _resolve(repo: Path, kind: str = "change", **kwargs: object) -> Scope:
    request = ScopeRequest(kind, **kwargs)  # type: ignore[arg-type]
    return resolve_scope(gitops.open_repo(repo), request, env=dict(os.environ))


def _section(text: str, tag: str) -> list[str]:
    return text.split(f"<{tag}>\n", 1)[1].split(f"\n</{tag}>", 1)[0].split("\n")


def test_summary_lists_scope_files_hunks_and_skipped(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    fork = head(repo)
    body = "".join(f"line {i}\n" for i in range(1, 41))
    commit(repo, {"big.py": body})
    write(repo, {"big.py": body.replace("line 5\n", "five\n").replace("line 30\n", "thirty\n")})
    write(repo, {"tab\tname.py": "t\n", "yarn.lock": "x\n"})
    git(repo, "mv", "lib/util.py", "lib/helpers.py")

    text = task_text(_resolve(repo))

    assert f"base: {fork} (merge-base with main)" in text
    assert f"`git diff {fork[:12]} HEAD`" in text
    assert "reviewable files: 3 (+41 -0 lines)" in text
    assert "languages: Python 3" in text
    assert _section(text, "files") == [
        "big.py\tadded +40 -0 lines 1-40",
        '"tab\\tname.py"\tadded +1 -0 lines 1',
        "lib/helpers.py\trenamed from lib/util.py +0 -0",
    ]
    assert _section(text, "skipped_files") == ["yarn.lock\tlock file or generated/vendored code"]


def test_staged_summary_names_head_as_the_base(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    write(repo, {"s.py": "s\n"})
    git(repo, "add", "s.py")

    text = summary(_resolve(repo, "staged"))

    assert f"base: {head(repo)} (HEAD)" in text
    assert "kind: staged" in text


def test_a_five_thousand_file_change_is_capped(git_repo: GitRepoFactory) -> None:
    repo = branch_repo(git_repo)
    files: dict[str, str | bytes] = {f"pkg{i % 50}/mod{i}.py": "x = 1\n" for i in range(4_940)}
    files.update({f"big{i}.py": "".join(f"v{j} = {j}\n" for j in range(100 + i)) for i in range(5)})
    files.update({f"data/blob{i}.bin": b"\0" * 10 for i in range(60)})
    commit(repo, files)

    scope = _resolve(repo, "base", base="main", head="HEAD")
    text = task_text(scope)

    assert len(scope.files) == 4_945 and len(scope.skipped) == 60
    assert len(text) < 20_000  # about 5,000 tokens, whatever the size of the change
    listed = _section(text, "files")
    assert len(listed) == LISTED_FILES_CAP
    assert [line.split("\t")[0] for line in listed[:5]] == [f"big{i}.py" for i in range(4, -1, -1)]
    assert "reviewable files: 4945 (+5450 -0 lines)" in text
    assert re.search(r"\(4745 smaller files not listed; run `git diff --stat \w{12} HEAD`", text)
    assert len(_section(text, "skipped_files")) == LISTED_SKIPPED_CAP
    assert "(10 more skipped files.)" in text


def test_all_scope_summary_pages_with_ls_files(git_repo: GitRepoFactory) -> None:
    repo = git_repo({f"m{i}.py": "x\n" * (i + 1) for i in range(LISTED_FILES_CAP + 3)})

    text = summary(_resolve(repo, "all"))

    assert "base:" not in text
    assert "(3 smaller files not listed; run `git ls-files`" in text
    biggest = LISTED_FILES_CAP + 2
    assert _section(text, "files")[0] == f"m{biggest}.py\t{2 * (biggest + 1)} bytes"


def test_languages_are_counted_by_extension_as_splitext_reads_it() -> None:
    paths = [
        "a.py",
        "pkg/B.PY",
        ".hidden.py",
        "dir/.bashrc",
        "..py",
        "dir.go/Makefile",
        "x.tar.JSON",
        "trailing.",
        "notes",
        "web/app.tsx",
    ]

    counts = languages(paths)

    assert counts == {"Python": 3, "other": 5, "JSON": 1, "TypeScript": 1}
    by_splitext = Counter(LANGUAGES.get(os.path.splitext(p)[1].lower(), "other") for p in paths)
    assert counts == by_splitext
