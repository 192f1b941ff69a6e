"""A scripted reviewer and judge for evaluation tests, and the repositories they review.

The reviewer catches SQL built with an f-string and anything mentioning ``shell=True`` (so a
comment about it is a decoy it falls for); it misses off-by-one bounds. The judge matches an
issue to a finding when they share a keyword of :data:`JUDGE_KEYWORDS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import GitRepoFactory, git, write
from tests.fakes.messages_api import ModelRequest, Reply
from tests.scripted import Concern, ReviewScript

JUDGE_KEYWORDS = ("sql", "shell", "bound", "handle")

INJECTION = Concern(
    "injection",
    "Check app.py for SQL injection.",
    "grep -Hn 'execute(f' app.py",
    severity="high",
    category="security",
    claim="SQL query built with an f-string from the caller's input.",
)
SHELL = Concern(
    "shell",
    "Check app.py for shell commands built from strings.",
    "grep -Hn 'shell=True' app.py",
    severity="medium",
    category="security",
    claim="A shell command runs with shell=True.",
)


@dataclass
class EvalPolicy:
    """Routes judge requests to a keyword judge and everything else to ``script``."""

    script: ReviewScript
    judged: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: ModelRequest) -> Reply:
        if request.has_tool("report_matches"):
            return self._judge(request)
        return self.script(request)

    def _judge(self, request: ModelRequest) -> Reply:
        text = request.first_user_text
        issues = json.loads(text.split("<known_issues>", 1)[1].split("</known_issues>", 1)[0])
        findings = json.loads(text.split("<findings>", 1)[1].split("</findings>", 1)[0])
        self.judged.append({"issues": issues, "findings": findings})
        matches = []
        for issue in issues:
            words = [k for k in JUDGE_KEYWORDS if k in issue["description"].lower()]
            hit = next(
                (f["finding"] for f in findings if any(k in f["claim"].lower() for k in words)),
                None,
            )
            matches.append({"issue": issue["issue"], "finding": hit, "reason": "keywords"})
        return Reply.tool_use("report_matches", {"matches": matches})


def review_policy() -> EvalPolicy:
    """The reviewer of the two-case repository."""
    return EvalPolicy(ReviewScript([INJECTION, SHELL]))


BASE_FILES = {
    "app.py": (
        "import sqlite3\n"
        "\n"
        "\n"
        "def find_user(db: sqlite3.Connection, name: str):\n"
        "    cursor = db.cursor()\n"
        '    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))\n'
        "    return cursor.fetchone()\n"
    ),
    "util.py": (
        "def total(items: list[int]) -> int:\n"
        "    result = 0\n"
        "    for i in range(len(items)):\n"
        "        result += items[i]\n"
        "    return result\n"
    ),
}

# Two planted bugs: app.py line 6 (SQL injection) and util.py line 3 (off-by-one).
BUGGY_FILES = {
    "app.py": BASE_FILES["app.py"].replace(
        '"SELECT * FROM users WHERE name = ?", (name,)',
        "f\"SELECT * FROM users WHERE name = '{name}'\"",
    ),
    "util.py": BASE_FILES["util.py"].replace("range(len(items))", "range(len(items) + 1)"),
}

# A clean change whose new comment mentions shell=True: the decoy.
CLEAN_FILES = {
    "app.py": BASE_FILES["app.py"]
    + "\n\n# Never call subprocess with shell=True here: names come from users.\n"
    + "def user_count(db: sqlite3.Connection) -> int:\n"
    + '    return db.execute("SELECT count(*) FROM users").fetchone()[0]\n',
}


def branch(repo: Path, name: str, files: dict[str, str]) -> None:
    """Commit ``files`` on a new branch ``name`` from main, then go back to main."""
    git(repo, "checkout", "-q", "-b", name, "main")
    write(repo, files)
    git(repo, "commit", "-q", "-am", f"change {name}")
    git(repo, "checkout", "-q", "main")


def two_case_repo(git_repo: GitRepoFactory) -> Path:
    """main, plus branch ``bugs`` (two planted bugs) and branch ``clean`` (a decoy)."""
    repo = git_repo(BASE_FILES)
    branch(repo, "bugs", BUGGY_FILES)
    branch(repo, "clean", CLEAN_FILES)
    return repo


def write_cases(path: Path, cases: list[dict[str, Any]]) -> Path:
    """A JSONL case file."""
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


def two_cases(repo: str, *, located: bool = True) -> list[dict[str, Any]]:
    """The bug change (SQL injection located; the off-by-one located or description only)
    and the clean change."""
    off_by_one: dict[str, Any] = {
        "description": "The loop bound goes one past the end of items.",
        "severity": "high",
    }
    if located:
        off_by_one |= {"path": "util.py", "line": 3}
    return [
        {
            "id": "bugs",
            "repo": repo,
            "base": "main",
            "head": "bugs",
            "expected": [
                {
                    "path": "app.py",
                    "line": 6,
                    "description": "SQL injection: the query is built from name.",
                    "severity": "high",
                },
                off_by_one,
            ],
        },
        {"id": "clean", "repo": repo, "base": "main", "head": "clean", "expected": []},
    ]


# One Python file with room for every pattern of the catalog.
MUTABLE_LIB = """\
import subprocess


def total(items):
    result = 0
    for i in range(len(items)):
        result += items[i]
    return result


def first_positive(values):
    for value in values:
        if value > 0:
            return value
    return None


def load(path):
    if path is None:
        raise ValueError("no path")
    with open(path) as handle:
        return handle.read()


def find(db, name):
    cursor = db.cursor()
    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))
    return cursor.fetchone()


def listing(folder):
    return subprocess.run(["ls", folder], capture_output=True)


def ratio(part, whole):
    return part / whole


def share(part, whole):
    return ratio(part, whole)


async def fetch(session, url):
    response = await session.get(url)
    return response


def names(users):
    out = []
    for user in users:
        out.append(user.name)
    return out


def bounded(index, limit):
    if index < limit:
        return index
    return limit
"""

#: Catches inverted conditions and leaked file handles; misses every other pattern.
MUTANT_REVIEWER = ReviewScript(
    [
        Concern(
            "inverted",
            "Check lib.py for inverted conditions.",
            "grep -Hn 'if not (' lib.py",
            claim="The condition is inverted.",
        ),
        Concern(
            "handles",
            "Check lib.py for file handles that are never closed.",
            "grep -Hn ':= open(' lib.py",
            severity="medium",
            category="resource-leak",
            claim="The file handle is never closed.",
        ),
    ]
)
