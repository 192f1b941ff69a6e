"""A fake GitLab REST API (v4) on 127.0.0.1, following GitLab's documentation:

- Authentication ("REST API authentication"): ``PRIVATE-TOKEN`` for access tokens; an
  unknown token is 401. ``JOB-TOKEN`` (CI_JOB_TOKEN) reaches only the endpoints "CI/CD job
  token" lists, and merge request notes and discussions are not among them: 403.
- Pagination ("REST API", "Pagination",
  https://docs.gitlab.com/api/rest/#offset-based-pagination): ``page`` and ``per_page``
  (default 20, at most 100; more is read as 100), with ``x-page``, ``x-per-page``,
  ``x-prev-page``, ``x-next-page`` (empty on the last page), ``x-total``, ``x-total-pages``
  and a ``Link`` header with ``rel`` prev/next/first/last URLs. Its links are built on
  ``link_base`` (this server unless a test says otherwise: a proxy or a hostile server can
  name any host). Rate limits ("Rate limits"): 429 with ``Retry-After``.
- Merge request versions ("Merge requests API", "Get merge request diff versions"): the
  latest first, each with ``base_commit_sha``, ``start_commit_sha``, ``head_commit_sha``;
  one version by id has ``diffs``.
- Diff threads ("Discussions API", "Create a new thread in the merge request diff"): the
  position must name the latest version's three SHAs and a file of its diff; ``new_line``
  alone for an added line, ``old_line`` and ``new_line`` for a context line; a
  ``line_range``'s ends carry line codes ``{sha1(path)}_{old}_{new}`` and a ``type``, ``new``
  for an added line and ``old`` otherwise. Anything else is 400
  ("Note {:line_code=>[\"can't be blank\"]}"), as GitLab answers a note off the diff.
- Notes ("Notes API"): only a note's author may edit it (403 otherwise); a merge request's
  notes are listed newest first unless ``sort=asc`` ("List all merge request notes": ``sort``
  defaults to ``desc``). Resolving a thread ("Discussions API", "Resolve a merge request
  thread") needs at least the Developer role (30) or to be the merge request's author: a
  Reporter who started the thread may not (gitlab-org/gitlab#358082). A reply in a diff
  thread is a resolvable ``DiffNote`` at the thread's position. A note's emoji reactions
  ("Emoji reactions API") are a paginated list.
- Projects ("Projects API", "Get a single project"): ``:id`` is the numeric id or the
  URL-encoded path (``group%2Fdemo``) in every route; the project has ``id`` and
  ``path_with_namespace``.
- Merge requests ("Merge requests API", "Get single MR"): ``title``, ``description``
  (null when empty), ``sha`` (the head), ``diff_refs``, ``references.full`` (``group/demo!3``),
  ``labels``; ("List issues that close on merge") ``/merge_requests/:iid/closes_issues``
  lists the issues it closes, paginated.
- Issues ("Issues API", "Single project issue", ``/projects/:id/issues/:issue_iid``): ``iid``,
  ``title``, ``description`` (null when empty), ``state``, ``labels`` a list of names (objects
  with ``name`` when ``with_labels_details=true``); 404 for an issue that does not exist or
  that the token may not read.
- Quick actions ("Quick actions"): a note's line that starts with `/` and a command's name is
  executed and removed from the note; as GitLab's extractor does, regular expressions skip
  what lies between a ```` ``` ```` line and the next line that is exactly ```` ``` ````,
  between two backticks (across lines), in an HTML block and in a ``>>>`` quote. Executed
  commands are recorded in ``FakeMR.quick_actions``.
- Members ("Group and project members API", ``/members/all/:user_id``): access levels
  10 Guest, 15 Planner, 20 Reporter, 30 Developer, 40 Maintainer, 50 Owner; 404 for a
  non-member.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tests.fakes.http_server import Exchange, LocalHTTPServer

BOT = {"id": 900, "username": "project_7_bot_abc", "name": "orch-review", "bot": True}
DEVELOPER = {"id": 31, "username": "dev", "name": "A Developer", "bot": False}
REPORTER = {"id": 21, "username": "rep", "name": "A Reporter", "bot": False}
BOT_TOKEN = "glpat-bot-token-0123456789"
JOB_TOKEN = "glcbt-job-token-0123456789"
DEVELOPER_TOKEN = "glpat-developer-token-0123"
TOKENS = {BOT_TOKEN: BOT, DEVELOPER_TOKEN: DEVELOPER}


def line_code(path: str, old: int, new: int) -> str:
    return f"{hashlib.sha1(path.encode()).hexdigest()}_{old}_{new}"


def diffs_from_git(repo: Path, base: str, head: str) -> list[dict[str, Any]]:
    """A version's ``diffs`` for ``base..head`` of a real repository (hunks only)."""
    out = subprocess.run(
        ["git", "diff", "--no-color", "-M", base, head],
        cwd=repo, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    diffs = []
    for section in re.split(r"^diff --git ", out, flags=re.MULTILINE)[1:]:
        header, _, rest = section.partition("\n")
        old = new = header.split(" b/", 1)[1]
        renamed = re.search(r"^rename from (.+)$", rest, re.MULTILINE)
        if renamed:
            old = renamed.group(1)
        at = rest.find("\n@@")
        diffs.append(
            {
                "old_path": old,
                "new_path": new,
                "new_file": "\nnew file mode" in "\n" + rest,
                "deleted_file": "\ndeleted file mode" in "\n" + rest,
                "renamed_file": renamed is not None,
                "diff": rest[at + 1 :] if at >= 0 else "",
            }
        )
    return diffs


def _visible(diff: str, path: str) -> dict[int, tuple[int | None, str]]:
    """new line -> (old line or None, its line code), as GitLab's diff parser counts."""
    lines: dict[int, tuple[int | None, str]] = {}
    old = new = 0
    for raw in diff.splitlines():
        m = re.match(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", raw)
        if m:
            old, new = int(m.group(1)), int(m.group(2))
            continue
        if raw.startswith("\\"):
            continue
        if raw.startswith("+"):
            lines[new] = (None, line_code(path, old, new))
            new += 1
        elif raw.startswith("-"):
            old += 1
        else:
            lines[new] = (old, line_code(path, old, new))
            old += 1
            new += 1
    return lines


@dataclass
class FakeMR:
    iid: int
    versions: list[dict[str, Any]]  # latest first, each with its diffs
    source_project_id: int
    discussions: list[dict[str, Any]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    closes: list[int] = field(default_factory=list)  # issue iids it closes when merged
    title: str = "A merge request"
    description: str | None = None
    quick_actions: list[tuple[str, str]] = field(default_factory=list)  # (command, argument)
    author_id: int | None = None  # the merge request's author, who may resolve its threads


# A few of GitLab's merge request quick actions, enough for any attack to reach one.
QUICK_ACTIONS = (
    "approve", "unapprove", "merge", "close", "reopen", "draft", "ready", "label", "unlabel",
    "relabel", "assign", "unassign", "reviewer", "assign_reviewer", "unassign_reviewer",
    "title", "lock", "unlock", "rebase", "target_branch", "milestone", "award", "shrug",
    "tableflip", "todo", "done", "subscribe", "unsubscribe", "cc", "submit_review",
)  # fmt: skip
_QUICK_ACTION = re.compile(
    r"(?P<code>^```.+?\n```$)"
    r"|(?P<inline>`\n*.+?\n*`)"
    r"|(?P<html>^<[^>]+?>\n.+?\n</[^>]+?>$)"
    r"|(?P<quote>^>>>.+?\n>>>$)"
    rf"|^/(?P<cmd>{'|'.join(QUICK_ACTIONS)})(?: (?P<arg>[^\n]*))?(?:\s*\n|$)",
    re.MULTILINE | re.DOTALL | re.IGNORECASE,
)


def quick_actions(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` without the quick actions GitLab would execute, and those actions."""
    found: list[tuple[str, str]] = []

    def take(match: re.Match[str]) -> str:
        if match.group("cmd") is None:
            return match.group(0)
        found.append((match.group("cmd").lower(), (match.group("arg") or "").strip()))
        return ""

    return _QUICK_ACTION.sub(take, text.replace("\r", "")).rstrip(), found


@dataclass
class FakeIssue:
    title: str
    description: str | None
    labels: list[str] = field(default_factory=list)
    state: str = "opened"


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int


class FakeGitLabAPI:
    """The fake server; see the module docstring. Base URL: ``api_url`` (…/api/v4)."""

    def __init__(self, project_id: int = 7, project_path: str = "group/demo") -> None:
        self.project_id = project_id
        self.path = project_path
        self.issues: dict[int, FakeIssue] = {}
        self.mrs: dict[int, FakeMR] = {}
        self.members: dict[int, int] = {BOT["id"]: 40, DEVELOPER["id"]: 30, REPORTER["id"]: 20}
        self.requests: list[Recorded] = []
        self.refused: list[tuple[str, Any]] = []  # (why, position) of every 400 on a note
        self.rate_limited: int = 0  # the next N requests get 429
        self.retry_after: str | None = "1"
        self.link_base: str | None = None  # where Link headers point; None: this server
        self._ids = itertools.count(5000)
        self._lock = threading.RLock()
        self._http = LocalHTTPServer(self._serve, name="fake-gitlab-api")

    def __enter__(self) -> FakeGitLabAPI:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    @property
    def api_url(self) -> str:
        return self._http.base_url + "/api/v4"

    # -- state -------------------------------------------------------------------------------

    def add_version(self, iid: int, repo: Path, base: str, head: str, source: int = 0) -> None:
        """A new diff version of merge request ``iid`` (created on first use): ``base..head``."""
        version = {
            "id": next(self._ids),
            "head_commit_sha": head,
            "base_commit_sha": base,
            "start_commit_sha": base,
            "state": "collected",
            "real_size": "1",
            "diffs": diffs_from_git(repo, base, head),
        }
        mr = self.mrs.setdefault(iid, FakeMR(iid, [], source or self.project_id))
        mr.versions.insert(0, version)

    def add_issue(
        self, iid: int, *labels: str, title: str = "An issue", description: str | None = None
    ) -> None:
        self.issues[iid] = FakeIssue(title, description, list(labels))

    def add_labelled_mr(self, iid: int, labels: list[str], closes: tuple[int, ...] = ()) -> None:
        """A merge request known by its labels and the issues it closes (no diff versions)."""
        self.mrs[iid] = FakeMR(iid, [], self.project_id, labels=list(labels), closes=list(closes))

    def _issue(self, iid: int, detailed: bool) -> dict[str, Any]:
        issue = self.issues[iid]
        labels: list[Any] = list(issue.labels)
        if detailed:
            labels = [{"id": n, "name": name} for n, name in enumerate(labels)]
        return {
            "iid": iid,
            "project_id": self.project_id,
            "title": issue.title,
            "description": issue.description,
            "state": issue.state,
            "labels": labels,
        }

    def add_human_discussion(self, iid: int, body: str, user: dict[str, Any] = DEVELOPER) -> str:
        discussion = self._discussion(body, user, None)
        self.mrs[iid].discussions.append(discussion)
        return str(discussion["id"])

    def add_diff_thread(
        self, iid: int, body: str, user: dict[str, Any], position: dict[str, Any]
    ) -> str:
        """A thread on the diff, started earlier by ``user`` (its position is not checked)."""
        discussion = self._discussion(body, user, position)
        self.mrs[iid].discussions.append(discussion)
        return str(discussion["id"])

    def reply_as(self, iid: int, discussion_id: str, body: str, user: dict[str, Any]) -> None:
        for d in self.mrs[iid].discussions:
            if d["id"] == discussion_id:
                d["notes"].append(self._reply(d, body, user))

    def notes_of(self, iid: int) -> list[dict[str, Any]]:
        """Notes on the merge request that are not in a diff thread (the summary's kind)."""
        return [d["notes"][0] for d in self.mrs[iid].discussions if d["individual_note"]]

    def diff_threads(self, iid: int) -> list[dict[str, Any]]:
        return [d for d in self.mrs[iid].discussions if not d["individual_note"]]

    # -- serving -----------------------------------------------------------------------------

    def _serve(self, exchange: Exchange) -> None:
        raw = exchange.read_body()
        split = urlsplit(exchange.path)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        query = parse_qs(split.query)
        headers = {k.lower(): v for k, v in exchange.headers.items()}
        with self._lock:
            status, payload, extra = self._route(exchange.command, split.path, query, body, headers)
            self.requests.append(
                Recorded(exchange.command, split.path, query, headers, body, status)
            )
        exchange.send_json(status, payload, extra)

    def _route(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        body: Any,
        headers: dict[str, str],
    ) -> tuple[int, Any, dict[str, str]]:
        if self.rate_limited > 0:
            self.rate_limited -= 1
            # Some of GitLab's limits answer 429 without Retry-After (gitlab-org/gitlab#365728,
            # !206603): ``retry_after = None`` sends none.
            wait = {} if self.retry_after is None else {"Retry-After": self.retry_after}
            return 429, {"message": "429 Too Many Requests"}, wait
        if not path.startswith("/api/v4/"):
            return 404, {"message": "404 Not Found"}, {}
        rest = path[len("/api/v4") :]
        user = TOKENS.get(headers.get("private-token", ""))
        job = headers.get("job-token") == JOB_TOKEN
        if user is None and not job:
            return 401, {"message": "401 Unauthorized"}, {}
        if job and user is None:
            # The job token reaches a short list of endpoints; notes are not among them.
            return 403, {"message": "403 Forbidden"}, {}
        assert user is not None
        if rest == "/user" and method == "GET":
            return 200, {**user, "state": "active"}, {}
        base = f"/projects/{self.project_id}"
        by_path = "/projects/" + quote(self.path, safe="")
        if rest == by_path or rest.startswith(by_path + "/"):
            rest = base + rest[len(by_path) :]
        if rest == base and method == "GET":
            return 200, {"id": self.project_id, "path_with_namespace": self.path}, {}
        if not rest.startswith(base + "/"):
            return 404, {"message": "404 Project Not Found"}, {}
        rest = rest[len(base) :]
        detailed = query.get("with_labels_details", [""])[0] == "true"
        if (i := re.fullmatch(r"/issues/(\d+)", rest)) and method == "GET":
            if int(i.group(1)) not in self.issues:
                return 404, {"message": "404 Not found"}, {}
            return 200, self._issue(int(i.group(1)), detailed), {}
        if m := re.fullmatch(r"/members/all/(\d+)", rest):
            level = self.members.get(int(m.group(1)))
            if level is None:
                return 404, {"message": "404 Not found"}, {}
            return 200, {"id": int(m.group(1)), "access_level": level}, {}
        m = re.fullmatch(r"/merge_requests/(\d+)(/.*)?", rest)
        if m is None or int(m.group(1)) not in self.mrs:
            return 404, {"message": "404 Not found"}, {}
        mr, tail = self.mrs[int(m.group(1))], m.group(2) or ""
        if tail == "" and method == "GET":
            return 200, self._merge_request(mr), {}
        if tail == "/closes_issues" and method == "GET":
            closed = [self._issue(n, detailed) for n in mr.closes if n in self.issues]
            return self._page(closed, query, path)
        if tail == "/versions" and method == "GET":
            listed = [{k: v for k, v in ver.items() if k != "diffs"} for ver in mr.versions]
            return self._page(listed, query, path)
        if (v := re.fullmatch(r"/versions/(\d+)", tail)) and method == "GET":
            for ver in mr.versions:
                if ver["id"] == int(v.group(1)):
                    return 200, ver, {}
            return 404, {"message": "404 Not found"}, {}
        if tail == "/discussions" and method == "GET":
            return self._page(mr.discussions, query, path)
        if tail == "/discussions" and method == "POST":
            return self._create_discussion(mr, body, user)
        if (d := re.fullmatch(r"/discussions/([^/]+)(/notes)?", tail)) is not None:
            return self._thread(mr, unquote(d.group(1)), bool(d.group(2)), method, body, user)
        if tail == "/notes" and method == "GET":
            notes = sorted(
                (n for d in mr.discussions for n in d["notes"]),
                key=lambda n: n["id"],
                reverse=query.get("sort", ["desc"])[0] != "asc",
            )
            return self._page(notes, query, path)
        if tail == "/notes" and method == "POST":
            if not isinstance(body, dict) or not str(body.get("body") or "").strip():
                return 400, {"message": "400 Bad request - body is missing"}, {}
            discussion = self._discussion(self._executed(mr, body["body"]), user, None)
            mr.discussions.append(discussion)
            return 201, discussion["notes"][0], {}
        if (n := re.fullmatch(r"/notes/(\d+)(/award_emoji)?", tail)) is not None:
            note_id, emoji = int(n.group(1)), bool(n.group(2))
            if emoji and method == "GET":  # "Emoji reactions API": a paginated list
                found = [x for d in mr.discussions for x in d["notes"] if x["id"] == note_id]
                if not found:
                    return 404, {"message": "404 Not found"}, {}
                return self._page(found[0].get("award_emoji", []), query, path)
            return self._note_route(mr, note_id, emoji, method, body, user)
        return 404, {"message": "404 Not found"}, {}

    def _merge_request(self, mr: FakeMR) -> dict[str, Any]:
        latest = mr.versions[0] if mr.versions else {}
        return {
            "iid": mr.iid,
            "project_id": self.project_id,
            "source_project_id": mr.source_project_id,
            "target_project_id": self.project_id,
            "title": mr.title,
            "description": mr.description,
            "sha": latest.get("head_commit_sha"),
            "diff_refs": {
                "base_sha": latest.get("base_commit_sha"),
                "head_sha": latest.get("head_commit_sha"),
                "start_sha": latest.get("start_commit_sha"),
            },
            "references": {"short": f"!{mr.iid}", "full": f"{self.path}!{mr.iid}"},
        }

    def _page(
        self, items: list[Any], query: dict[str, list[str]], path: str
    ) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int((query.get("per_page") or ["20"])[0] or 20), 100)
        page = max(int((query.get("page") or ["1"])[0] or 1), 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        last = max((len(items) + per_page - 1) // per_page, 1)
        more = page < last
        base = (self.link_base or self._http.base_url) + path

        def link(n: int, rel: str) -> str:
            kept = {k: v[0] for k, v in query.items() if k not in ("page", "per_page")}
            kept.update(page=str(n), per_page=str(per_page))
            return f'<{base}?{"&".join(f"{k}={quote(v)}" for k, v in kept.items())}>; rel="{rel}"'

        links = [link(page - 1, "prev")] if page > 1 else []
        links += [link(page + 1, "next")] if more else []
        links += [link(1, "first"), link(last, "last")]
        return (
            200,
            chunk,
            {
                "x-page": str(page),
                "x-per-page": str(per_page),
                "x-prev-page": str(page - 1) if page > 1 else "",
                "x-next-page": str(page + 1) if more else "",
                "x-total": str(len(items)),
                "x-total-pages": str(last),
                "Link": ", ".join(links),
            },
        )

    @staticmethod
    def _executed(mr: FakeMR, body: str) -> str:
        """The note's text once its quick actions ran (recorded on ``mr``)."""
        text, actions = quick_actions(body)
        mr.quick_actions.extend(actions)
        return text

    def _note(
        self, body: str, user: dict[str, Any], position: Any, kind: str | None
    ) -> dict[str, Any]:
        return {
            "id": next(self._ids),
            "type": kind,
            "body": body,
            "author": dict(user),
            "system": False,
            "resolvable": kind == "DiffNote",
            "resolved": False,
            "position": position,
        }

    def _reply(self, discussion: dict[str, Any], body: str, user: dict[str, Any]) -> dict[str, Any]:
        # A reply takes its thread's note type and position: in a diff thread it is a
        # resolvable DiffNote (Discussions API, "List all merge request discussion items").
        first = discussion["notes"][0]
        if first["type"] == "DiffNote":
            return self._note(body, user, first["position"], "DiffNote")
        return self._note(body, user, None, "DiscussionNote")

    def _discussion(self, body: str, user: dict[str, Any], position: Any) -> dict[str, Any]:
        kind = "DiffNote" if position is not None else None
        return {
            "id": hashlib.sha1(str(next(self._ids)).encode()).hexdigest(),
            "individual_note": position is None,
            "notes": [self._note(body, user, position, kind)],
        }

    def _position_problem(self, mr: FakeMR, position: Any) -> str | None:
        if not isinstance(position, dict) or position.get("position_type") != "text":
            return "position_type must be text"
        latest = mr.versions[0]
        for key, want in (("base_sha", "base_commit_sha"), ("start_sha", "start_commit_sha"),
                          ("head_sha", "head_commit_sha")):  # fmt: skip
            if position.get(key) != latest[want]:
                return f"{key} is not the latest version's"
        diff = next((d for d in latest["diffs"] if d["new_path"] == position.get("new_path")), None)
        if diff is None or diff.get("old_path") != position.get("old_path"):
            return "the file is not in the diff"
        visible = _visible(diff["diff"], diff["new_path"])
        new_line, old_line = position.get("new_line"), position.get("old_line")
        if not isinstance(new_line, int) or new_line not in visible:
            return "line_code can't be blank: new_line is not in the diff"
        if visible[new_line][0] != old_line:
            return "old_line does not match the diff's line"
        line_range = position.get("line_range")
        if line_range is not None:
            # "Parameters for multiline comments": each end's line_code and type are required,
            # type "new for lines added by this commit, otherwise old"
            # (https://docs.gitlab.com/api/discussions/#parameters-for-multiline-comments).
            kinds = {code: "new" if old is None else "old" for old, code in visible.values()}
            for end in ("start", "end"):
                if not isinstance(line_range, dict) or not isinstance(line_range.get(end), dict):
                    return f"line_range {end} is missing"
                code = line_range[end].get("line_code")
                if code not in kinds:
                    return f"line_range {end} line_code is invalid"
                if line_range[end].get("type") != kinds[code]:
                    return f"line_range {end} type must be {kinds[code]}"
            if line_range["end"]["line_code"] != visible[new_line][1]:
                return "line_range must end on the note's line"
        return None

    def _create_discussion(
        self, mr: FakeMR, body: Any, user: dict[str, Any]
    ) -> tuple[int, Any, dict[str, str]]:
        if not isinstance(body, dict) or not str(body.get("body") or "").strip():
            return 400, {"message": "400 Bad request - body is missing"}, {}
        position = body.get("position")
        if position is not None:
            problem = self._position_problem(mr, position)
            if problem is not None:
                self.refused.append((problem, position))
                return 400, {"message": f'400 Bad request - Note {{:line_code=>["{problem}"]}}'}, {}
        discussion = self._discussion(self._executed(mr, body["body"]), user, position)
        mr.discussions.append(discussion)
        return 201, discussion, {}

    def _thread(
        self,
        mr: FakeMR,
        discussion_id: str,
        notes: bool,
        method: str,
        body: Any,
        user: dict[str, Any],
    ) -> tuple[int, Any, dict[str, str]]:
        discussion = next((d for d in mr.discussions if d["id"] == discussion_id), None)
        if discussion is None:
            return 404, {"message": "404 Not found"}, {}
        if notes and method == "POST":
            if not isinstance(body, dict) or not str(body.get("body") or "").strip():
                return 400, {"message": "400 Bad request - body is missing"}, {}
            note = self._reply(discussion, self._executed(mr, body["body"]), user)
            discussion["notes"].append(note)
            return 201, note, {}
        if not notes and method == "PUT":
            first = discussion["notes"][0]
            author = mr.author_id == user["id"]
            if not author and self.members.get(user["id"], 0) < 30:
                return 403, {"message": "403 Forbidden"}, {}
            if not first["resolvable"]:
                return 400, {"message": "400 Bad request - not resolvable"}, {}
            resolved = bool((body or {}).get("resolved"))
            for note in discussion["notes"]:
                if note["resolvable"] or note is first:
                    note["resolved"] = resolved
                    note["resolved_by"] = dict(user) if resolved else None
            return 200, discussion, {}
        return 405, {"message": "405 Method Not Allowed"}, {}

    def _note_route(
        self, mr: FakeMR, note_id: int, emoji: bool, method: str, body: Any, user: dict[str, Any]
    ) -> tuple[int, Any, dict[str, str]]:
        note = next((n for d in mr.discussions for n in d["notes"] if n["id"] == note_id), None)
        if note is None:
            return 404, {"message": "404 Not found"}, {}
        if not emoji and method == "PUT":
            if note["author"]["id"] != user["id"]:
                return 403, {"message": "403 Forbidden"}, {}
            if not isinstance(body, dict) or not str(body.get("body") or "").strip():
                return 400, {"message": "400 Bad request - body is missing"}, {}
            note["body"] = body["body"]
            return 200, note, {}
        return 405, {"message": "405 Method Not Allowed"}, {}
