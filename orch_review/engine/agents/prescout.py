"""The pre-scout: a compact summary of the scope the main agent starts from.

Computed before the first model call, so the main agent does not spend turns rediscovering
which files changed. Large changes are capped: totals, then the biggest files, then how to
page through the rest with git.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable

from orch_review.config.guidance import guidance_block
from orch_review.quoting import quote_path
from orch_review.scope.deleted import deleted_block
from orch_review.scope.resolve import ReviewFile, Scope

LISTED_FILES_CAP = 200
LISTED_SKIPPED_CAP = 50
HUNKS_SHOWN = 6

LANGUAGES = {
    ".py": "Python",
    ".js": "JavaScript",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".jsx": "JavaScript",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".kt": "Kotlin",
    ".c": "C",
    ".h": "C",
    ".cc": "C++",
    ".cpp": "C++",
    ".hpp": "C++",
    ".cs": "C#",
    ".rb": "Ruby",
    ".php": "PHP",
    ".swift": "Swift",
    ".scala": "Scala",
    ".sh": "Shell",
    ".sql": "SQL",
    ".html": "HTML",
    ".css": "CSS",
    ".yml": "YAML",
    ".yaml": "YAML",
    ".toml": "TOML",
    ".json": "JSON",
    ".md": "Markdown",
    ".tf": "Terraform",
}


def _extension(path: str) -> str:
    """``os.path.splitext(path)[1]``, lower-cased, without its per-call overhead: it runs
    once per reviewable file, 100,000 times for ``--all`` in a big repository."""
    name = path[path.rfind("/") + 1 :].lstrip(".")  # a leading dot starts no extension
    dot = name.rfind(".")
    return name[dot:].lower() if dot != -1 else ""


def languages(paths: Iterable[str]) -> Counter[str]:
    """How many of ``paths`` are in each language (by extension; "other" for the rest)."""
    counts: Counter[str] = Counter()
    for extension, n in Counter(map(_extension, paths)).items():
        counts[LANGUAGES.get(extension, "other")] += n
    return counts


def _hunks(file: ReviewFile) -> str:
    change = file.change
    if change is None or not change.hunks:
        return ""
    shown = ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in change.hunks[:HUNKS_SHOWN])
    more = f" (+{len(change.hunks) - HUNKS_SHOWN} more)" if len(change.hunks) > HUNKS_SHOWN else ""
    return f" lines {shown}{more}"


def _file_line(file: ReviewFile) -> str:
    change = file.change
    path = quote_path(file.path)
    if change is None:
        return f"{path}\t{file.size:,} bytes"
    status = change.status
    if change.old_path:
        status = f"renamed from {quote_path(change.old_path)}"
    return f"{path}\t{status} +{change.additions} -{change.deletions}{_hunks(file)}"


def summary(scope: Scope) -> str:
    """The scope summary, as tagged data for the main agent."""
    files = scope.files
    shown = heapq.nsmallest(
        LISTED_FILES_CAP,
        files,
        key=lambda f: (-(f.change.additions if f.change else f.size), f.path),
    )
    counts = languages(f.path for f in files)
    lines = ["<scope>", f"kind: {scope.kind}", f"what: {scope.describe()}"]
    if scope.base_commit:
        against = scope.base_ref or "HEAD"
        if scope.kind in ("change", "base"):
            against = f"merge-base with {against}"
        lines.append(f"base: {scope.base_commit} ({against})")
        lines.append(
            f"diff under review: `git diff {scope.base_commit[:12]} HEAD` in your working directory"
        )
    added = sum(f.change.additions for f in scope.files if f.change)
    removed = sum(f.change.deletions for f in scope.files if f.change)
    lines.append(
        f"reviewable files: {len(files)}"
        + (
            f" (+{added} -{removed} lines)"
            if scope.kind != "all"
            else f" ({sum(f.size for f in files):,} bytes)"
        )
    )
    lines.append("languages: " + ", ".join(f"{lang} {n}" for lang, n in counts.most_common(8)))
    lines.append("</scope>")
    lines += ["", "<files>", *(_file_line(f) for f in shown), "</files>"]
    if len(files) > len(shown):
        page = (
            f"git diff --stat {scope.base_commit[:12]} HEAD"
            if scope.base_commit
            else "git ls-files"
        )
        hidden = len(files) - len(shown)
        lines.append(f"({hidden} smaller files not listed; run `{page}` to page through them.)")
    if scope.skipped:
        lines += ["", "<skipped_files>"]
        lines += [
            f"{quote_path(s.path)}\t{quote_path(s.reason)}"
            for s in scope.skipped[:LISTED_SKIPPED_CAP]
        ]
        lines.append("</skipped_files>")
        if len(scope.skipped) > LISTED_SKIPPED_CAP:
            lines.append(f"({len(scope.skipped) - LISTED_SKIPPED_CAP} more skipped files.)")
    return "\n".join(lines)


def task_text(scope: Scope, guidance: str = "", *, shell: bool = True) -> str:
    """The main agent's first user turn: instructions, the scope summary as data, then the
    repository's review guidance; worded for a main agent with bash or (not ``shell``) the
    read-only tools."""
    intro = (
        "Review the change described below. Find real defects in the listed files and report "
        "them through the Workflow tool. Skipped files are out of scope: do not send subtasks "
        "about them."
        if scope.kind != "all"
        else "Audit the repository content described below. Find real defects in the listed "
        "files and report them through the Workflow tool."
    )
    where = (
        "Your working directory is a read-only copy of exactly the content under review. Scout "
        "with bash"
        if shell
        else "Your read-only tools show exactly the content under review. Scout with them"
    )
    return (
        f"{intro}\n\n{summary(scope)}\n\n{where}, then call Workflow with one subtask per "
        f"concern.{deleted_block(scope.deleted)}{guidance_block(guidance)}"
    )
