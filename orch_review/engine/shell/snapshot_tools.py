"""Read-only tools over the snapshot, for agents that get no shell (``--sandbox tools``).

They run inside orch-review, so everything a model sends them is hostile input: a path is
confined to the tree and looked up in the reviewed commit's own listing (git objects, not
the file system: ``..``, an absolute path, ``.git`` and a symbolic link lead nowhere); a
revision is one of the reviewed commits, named by id or as ``HEAD``/``base``, never passed to
git as the model wrote it; a search pattern is a bounded dialect run by ``git grep`` under a
deadline and a heap cap. Output is cut like the bash tool's, with a note saying so.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from orch_review.engine.shell.read_tools import (
    DEFAULT_RESULTS,
    MAX_FILE_BYTES,
    MAX_LINE_CHARS,
    MAX_LIST,
    MAX_LISTING_BYTES,
    MAX_LOG,
    MAX_PATTERN_CHARS,
    MAX_RESULTS,
    MAX_REVIEWED_COMMITS,
    Refused,
    ToolHandler,
    check_pattern,
    glob_matcher,
)
from orch_review.findings.provenance import confined_path
from orch_review.quoting import quote_path, text_for_json
from orch_review.scope.git import browse
from orch_review.scope.git.browse import Entry, Output

_FETCH_FACTOR = 64  # bytes read from git per character kept, at most
_HEX = re.compile(r"[0-9a-f]{4,64}")

if TYPE_CHECKING:
    import git


class SnapshotTools:
    """The read-only tools over one reviewed commit ``head`` (compared with ``base``) in
    ``repo``; ``canonical`` maps a name as prompts show it to the path."""

    def __init__(
        self,
        repo: git.Repo,
        head: str,
        base: str | None,
        *,
        canonical: Callable[[str], str] = str,
        output_cap: int = 8000,
        timeout: float = 60.0,
    ) -> None:
        self._repo, self._head, self._base = repo, head, base
        self._canonical = canonical
        self._cap = output_cap
        self._timeout = timeout
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] | None = None
        self._commits: tuple[str, ...] | None = None

    def handlers(self) -> dict[str, ToolHandler]:
        """Tool name -> handler, for :class:`~.agent.AgentLoop`."""
        run = {
            "read_file": self._read_file,
            "search": self._search,
            "list_files": self._list_files,
            "git_log": self._git_log,
            "git_show": self._git_show,
            "git_blame": self._git_blame,
            "git_diff": self._git_diff,
        }
        return {name: self._guarded(handler) for name, handler in run.items()}

    def _guarded(self, handler: Callable[[Mapping[str, Any]], str]) -> ToolHandler:
        def call(tool_input: Mapping[str, Any]) -> tuple[str, bool]:
            try:
                return handler(tool_input), False
            except Refused as exc:
                return f"Not run: {exc}.", True

        return call

    # What the content is: its listing and its commits, read once.

    def _listing(self) -> dict[str, Entry]:
        with self._lock:
            if self._entries is None:
                entries = browse.tree_listing(
                    self._repo, self._head, limit=MAX_LISTING_BYTES, timeout=self._timeout
                )
                self._entries = {entry.path: entry for entry in entries}
            return self._entries

    def _reviewed_commits(self) -> tuple[str, ...]:
        with self._lock:
            if self._commits is None:
                self._commits = browse.commits_in(
                    self._repo,
                    self._head,
                    self._base,
                    count=MAX_REVIEWED_COMMITS,
                    timeout=self._timeout,
                )
            return self._commits

    def _path(self, raw: object, what: str = "path") -> str:
        if not isinstance(raw, str) or not raw.strip():
            raise Refused(f"`{what}` must be a non-empty repository-relative path")
        try:
            path = confined_path(self._canonical(raw.strip()))
        except ValueError as exc:
            raise Refused(str(exc)) from None
        return path

    def _optional_path(self, tool_input: Mapping[str, Any]) -> str | None:
        raw = tool_input.get("path")
        if raw is None or raw == "" or raw in {".", "./", "/"}:
            return None
        return self._path(raw)

    def _glob(self, tool_input: Mapping[str, Any]) -> str | None:
        raw = tool_input.get("glob")
        if raw is None or raw == "":
            return None
        if not isinstance(raw, str) or "\0" in raw or len(raw) > MAX_PATTERN_CHARS:
            raise Refused("`glob` must be a short string")
        pattern = raw.strip().removeprefix("./")
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise Refused("`glob` matches paths inside the repository: no `/` or `..` in front")
        return pattern

    def _revision(self, raw: object, default: str | None) -> str:
        """The commit id a revision names: HEAD, base or a reviewed commit's (prefix of) id."""
        if raw is None or raw == "":
            if default is None:
                raise Refused("there is no base revision here: the review has no base")
            return default
        if not isinstance(raw, str):
            raise Refused("a revision must be a string")
        given = raw.strip()
        if given.upper() == "HEAD":
            return self._head
        if given.lower() == "base":
            if self._base is None:
                raise Refused("there is no base revision here: the review has no base")
            return self._base
        if _HEX.fullmatch(given.lower()):
            known = {self._head, *self._reviewed_commits()}
            if self._base is not None:
                known.add(self._base)
            matches = [oid for oid in known if oid.startswith(given.lower())]
            if len(matches) == 1:
                return matches[0]
        raise Refused(
            f"`{given[:80]}` is not a reviewed revision: give HEAD, base, or the id of a commit "
            "git_log lists"
        )

    def _lines(self, tool_input: Mapping[str, Any], *, required: bool) -> tuple[int, int | None]:
        bounds: list[int | None] = []
        for key in ("start_line", "end_line"):
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip().isdigit():
                value = int(value)
            if value is None and not required:
                bounds.append(None)
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise Refused(f"`{key}` must be a positive line number")
            bounds.append(value)
        start, end = bounds[0] or 1, bounds[1]
        if end is not None and end < start:
            raise Refused("`end_line` comes before `start_line`")
        return start, end

    def _git(self, argv: list[str], *, heap: int | None = None) -> str:
        """The output of a git command, cut to the output cap with a note."""
        done = browse.run_bounded(
            self._repo, argv, limit=self._cap * _FETCH_FACTOR, timeout=self._timeout, heap=heap
        )
        if done.timed_out:
            raise Refused(f"it ran for more than {self._timeout:g} s and was stopped; narrow it")
        if done.status not in (0, None):
            said = done.stderr.splitlines()[0] if done.stderr else f"exit status {done.status}"
            raise Refused(f"git said: {text_for_json(said)}")
        return self._capped(_decode(done), more=done.cut)

    def _capped(self, text: str, *, more: bool = False, hint: str = "") -> str:
        """``text`` within the output cap: its head, then a note that it was cut."""
        if len(text) <= self._cap and not more:
            return text or "(no output)"
        note = (
            f"\n[output cut at {self._cap:,} characters{'' if more else f' of {len(text):,}'}; "
            f"{hint or 'narrow the request (a path, a line range, fewer results)'}]"
        )
        return text[: max(self._cap - len(note), 0)] + note

    # The tools.

    def _read_file(self, tool_input: Mapping[str, Any]) -> str:
        path = self._path(tool_input.get("path"))
        start, end = self._lines(tool_input, required=False)
        entry = self._file(path)
        done = browse.blob_bytes(self._repo, entry.oid, limit=MAX_FILE_BYTES, timeout=self._timeout)
        if done.timed_out:
            raise Refused(f"reading `{quote_path(path)}` took more than {self._timeout:g} s")
        if b"\0" in done.data[:8000]:
            return f"`{quote_path(path)}` is a binary file of {entry.size:,} bytes; not shown."
        lines = _decode(done).splitlines()
        if done.cut:
            lines = lines[:-1]  # the last line read may be cut
        total = len(lines)
        if start > max(total, 1):
            raise Refused(f"`{quote_path(path)}` has {total} lines")
        last = min(end or total, total)
        shown: list[str] = []
        used = 0
        room = self._cap - 200  # for the note
        for number in range(start, last + 1):
            row = f"{number:6}\t{lines[number - 1]}\n"
            if not shown and len(row) > room:  # one huge line (minified code): its head
                shown.append(row[: room - 40] + f" [line {number} cut]\n")
                used = room
                continue
            if used + len(row) > room:
                shown.append(
                    f"[output cut at {self._cap:,} characters: lines {start}-{number - 1} "
                    f"shown of {total}; read on with start_line {number}]\n"
                )
                break
            shown.append(row)
            used += len(row)
        if done.cut and (end is None or end >= total):
            shown.append(
                f"[only the first {MAX_FILE_BYTES:,} bytes of this {entry.size:,}-byte file "
                "can be read; search it instead]\n"
            )
        return "".join(shown) or "(empty file)"

    def _tree(self, under: str | None, commit: str | None = None) -> dict[str, Entry]:
        """The entries of the reviewed tree (or ``commit``'s), all or those at or under the
        path ``under`` (listed by git for that path alone: a big tree is not read whole)."""
        if under is None and commit is None:
            return self._listing()
        entries = browse.tree_listing(
            self._repo,
            commit or self._head,
            limit=MAX_LISTING_BYTES,
            timeout=self._timeout,
            path=under,
        )
        return {entry.path: entry for entry in entries}

    def _file(self, path: str) -> Entry:
        listing = self._tree(path)
        entry = listing.get(path)
        shown = quote_path(path)
        if entry is None:
            if any(p.startswith(path + "/") for p in listing):
                raise Refused(f"`{shown}` is a directory; list it with list_files")
            raise Refused(f"`{shown}` is not a file of the content under review")
        if entry.is_link:
            target = browse.blob_bytes(self._repo, entry.oid, limit=4096, timeout=self._timeout)
            raise Refused(
                f"`{shown}` is a symbolic link to `{_decode(target)}`, which is not followed; "
                "read its target if that is a file of the repository"
            )
        if entry.is_submodule:
            raise Refused(f"`{shown}` is a submodule, whose content is not under review")
        return entry

    def _search(self, tool_input: Mapping[str, Any]) -> str:
        pattern = tool_input.get("pattern")
        if not isinstance(pattern, str):
            raise Refused("`pattern` must be a string")
        fixed = tool_input.get("fixed_string") is True
        if not fixed:
            check_pattern(pattern)
        elif not pattern or len(pattern) > MAX_PATTERN_CHARS or "\n" in pattern:
            raise Refused(f"`pattern` must be one line of 1 to {MAX_PATTERN_CHARS} characters")
        wanted = tool_input.get("max_results", DEFAULT_RESULTS)
        if not isinstance(wanted, int) or isinstance(wanted, bool) or wanted < 1:
            raise Refused("`max_results` must be a positive number")
        wanted = min(wanted, MAX_RESULTS)
        pathspecs = self._pathspecs(tool_input)
        argv = browse.grep_argv(
            self._head,
            pattern,
            pathspecs,
            fixed=fixed,
            ignore_case=tool_input.get("ignore_case") is True,
        )
        done = browse.run_bounded(
            self._repo,
            argv,
            limit=MAX_RESULTS * (MAX_LINE_CHARS + 512),
            timeout=self._timeout,
            heap=browse.GREP_HEAP_BYTES,
        )
        if done.timed_out:
            raise Refused(
                f"the search ran for more than {self._timeout:g} s and was stopped; use a "
                "simpler pattern or a narrower path"
            )
        if done.status not in (0, 1, None):
            said = done.stderr.splitlines()[0] if done.stderr else f"exit status {done.status}"
            raise Refused(f"the pattern could not be used: {text_for_json(said)}")
        rows: list[str] = []
        prefix = self._head + ":"
        records = _decode(done).split("\n")
        more = done.cut or len([r for r in records if r]) > wanted
        for record in records:
            if len(rows) == wanted:
                break
            fields = record.removeprefix(prefix).split("\0", 2)
            if len(fields) != 3:
                continue
            path, number, text = fields
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + " [line cut]"
            rows.append(f"{quote_path(path)}:{number}:{text}")
        if not rows:
            return "No match."
        if more:
            rows.append(
                f"[{len(rows)} results shown; more lines match: narrow the pattern or the path, "
                f"or raise max_results (up to {MAX_RESULTS})]"
            )
        return self._capped("\n".join(rows))

    def _pathspecs(self, tool_input: Mapping[str, Any]) -> list[str]:
        path, pattern = self._optional_path(tool_input), self._glob(tool_input)
        if path is not None and pattern is not None:
            return [browse.glob(f"{_glob_escape(path)}/{pattern}")]
        if pattern is not None:
            return [browse.glob(pattern)]
        return [browse.literal(path)] if path is not None else []

    def _list_files(self, tool_input: Mapping[str, Any]) -> str:
        under, pattern = self._optional_path(tool_input), self._glob(tool_input)
        matcher = glob_matcher(pattern) if pattern is not None else None
        rows: list[str] = []
        matched = 0
        for path, entry in sorted(self._tree(under).items()):
            if under is not None and path != under and not path.startswith(under + "/"):
                continue
            relative = path if under is None else path[len(under) + 1 :]
            if matcher is not None and not (matcher(path) or matcher(relative)):
                continue
            matched += 1
            if len(rows) < MAX_LIST:
                rows.append(_describe(entry))
        if not rows:
            return "No file matches." if under is None else f"No file under `{quote_path(under)}`."
        if matched > len(rows):
            rows.append(f"[{len(rows)} of {matched} files listed: narrow with path or glob]")
        return self._capped("\n".join(rows), hint="narrow with path or glob")

    def _git_log(self, tool_input: Mapping[str, Any]) -> str:
        count = tool_input.get("max_count", 20)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise Refused("`max_count` must be a positive number")
        path = self._optional_path(tool_input)
        revisions = [self._head, f"^{self._base}"] if self._base else [self._head]
        argv = browse.log_argv(
            revisions,
            [browse.literal(path)] if path else [],
            min(count, MAX_LOG),
            tool_input.get("patch") is True,
        )
        return self._git(argv)

    def _git_show(self, tool_input: Mapping[str, Any]) -> str:
        commit = self._revision(tool_input.get("revision"), self._head)
        path = self._optional_path(tool_input)
        if path is None:
            return self._git(browse.show_argv(commit, []))
        entry = self._tree(path, commit).get(path)
        if entry is None or entry.is_submodule:
            return self._git(browse.show_argv(commit, [browse.literal(path)]))
        done = browse.blob_bytes(self._repo, entry.oid, limit=MAX_FILE_BYTES, timeout=self._timeout)
        if entry.is_link:
            return f"`{quote_path(path)}` is a symbolic link to `{_decode(done)}` there."
        numbered = "".join(
            f"{n:6}\t{line}\n" for n, line in enumerate(_decode(done).splitlines(), 1)
        )
        return self._capped(numbered, more=done.cut, hint="read a range with git_blame or search")

    def _git_blame(self, tool_input: Mapping[str, Any]) -> str:
        path = self._path(tool_input.get("path"))
        start, end = self._lines(tool_input, required=True)
        commit = self._revision(tool_input.get("revision"), self._head)
        assert end is not None
        return self._git(browse.blame_argv(commit, path, start, end))

    def _git_diff(self, tool_input: Mapping[str, Any]) -> str:
        old = self._revision(tool_input.get("from"), self._base)
        new = self._revision(tool_input.get("to"), self._head)
        path = self._optional_path(tool_input)
        argv = browse.diff_argv(
            old, new, [browse.literal(path)] if path else [], tool_input.get("stat") is True
        )
        return self._git(argv)


def _decode(done: Output) -> str:
    return text_for_json(done.data.decode("utf-8", "surrogateescape"))


def _describe(entry: Entry) -> str:
    shown = quote_path(entry.path)
    if entry.is_link:
        return f"{shown} (symbolic link)"
    if entry.is_submodule:
        return f"{shown} (submodule)"
    return f"{shown} ({entry.size:,} bytes)"


def _glob_escape(path: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", path)
