"""What orch-review leaves on a merge request, against the fake GitLab: positions GitLab
accepts (a context line names both lines), findings off the diff only in the summary, and
which earlier threads it resolves or leaves alone."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from orch_review.findings.coverage import LedgerFile, build_coverage
from orch_review.findings.records import Finding
from orch_review.hosts.gitlab.api import GitLabClient
from orch_review.hosts.gitlab.positions import files_from_version, refs_of
from orch_review.hosts.gitlab.publish import LEFT_REPLY, Published, body, own_threads, publish
from tests.conftest import GitRepoFactory, git, write
from tests.fakes.gitlab_api import BOT, BOT_TOKEN, DEVELOPER, FakeGitLabAPI
from tests.hosts.github.test_comments import finding
from tests.reporters.sample import clean_report

OLD = "".join(f"line_{n} = {n}\n" for n in range(1, 41))
NEW = OLD.replace("line_20 = 20\n", "line_20 = 20\nadded = True\n")  # new line 21


def _merge_request(gitlab: FakeGitLabAPI, git_repo: GitRepoFactory) -> Path:
    repo = git_repo({"a.py": OLD})
    base = git(repo, "rev-parse", "HEAD").strip()
    write(repo, {"a.py": NEW})
    git(repo, "commit", "-qam", "Add a line")
    gitlab.add_version(1, repo, base, git(repo, "rev-parse", "HEAD").strip())
    return repo


def _publish(gitlab: FakeGitLabAPI, findings: tuple[Finding, ...]) -> Published:
    report = replace(
        clean_report(),
        findings=findings,
        coverage=build_coverage([LedgerFile("a.py", 1, ((21, 21),))], covered_by={"a.py": [1]}),
    )
    with GitLabClient(gitlab.api_url, 7, BOT_TOKEN) as client:
        versions = client.versions(1)
        refs = refs_of(versions)
        assert refs is not None
        files = files_from_version(client.version(1, versions[0]["id"]))
        threads = own_threads(client.discussions(1), BOT["id"])
        return publish(client, 1, report, refs, files, me=BOT["id"], threads=threads)


def test_a_context_line_names_both_lines_and_a_line_off_the_diff_goes_to_the_summary(
    git_repo: GitRepoFactory,
) -> None:
    with FakeGitLabAPI() as gitlab:
        _merge_request(gitlab, git_repo)
        context, added = finding("a.py", 22, fp="ctx"), finding("a.py", 21, fp="add")
        far = finding("a.py", 40, fp="far")  # unchanged, and no hunk shows it

        _publish(gitlab, (context, added, far))

    assert gitlab.refused == []  # GitLab accepted every position
    placed = [t["notes"][0]["position"] for t in gitlab.diff_threads(1)]
    positions = {p["new_line"]: p for p in placed}
    assert sorted(positions) == [21, 22]
    assert positions[22]["old_line"] == 21  # a context line: both numbers
    assert "old_line" not in positions[21]  # an added line: new_line alone
    (summary,) = gitlab.notes_of(1)
    assert "| `a.py:40` | A claim. | lines outside the diff |" in summary["body"]


def test_it_resolves_its_threads_whose_file_left_and_never_touches_a_persons(
    git_repo: GitRepoFactory,
) -> None:
    with FakeGitLabAPI() as gitlab:
        _merge_request(gitlab, git_repo)
        where = {"position_type": "text", "old_line": None}
        gone_file = finding("gone.py", 3, fp="left")
        left = gitlab.add_diff_thread(
            1, body(gone_file, 3, 3), BOT,
            {**where, "new_path": "gone.py", "old_path": "gone.py", "new_line": 3},
        )  # fmt: skip
        # A person who copies orch-review's marker into a thread of their own.
        copied = finding("a.py", 21, fp="copied")
        person = gitlab.add_diff_thread(
            1, body(copied, 21, 21), DEVELOPER,
            {**where, "new_path": "a.py", "old_path": "a.py", "new_line": 21},
        )  # fmt: skip

        done = _publish(gitlab, ())

    threads = {t["id"]: t for t in gitlab.diff_threads(1)}
    assert threads[left]["notes"][0]["resolved"] is True
    assert [n["body"] for n in threads[left]["notes"][1:]] == [LEFT_REPLY]
    assert threads[person]["notes"][0]["resolved"] is False
    assert len(threads[person]["notes"]) == 1  # no reply either
    assert done.resolved == 1


def test_a_range_over_context_and_added_lines_types_each_end_as_gitlab_says(
    git_repo: GitRepoFactory,
) -> None:
    with FakeGitLabAPI() as gitlab:
        _merge_request(gitlab, git_repo)

        _publish(gitlab, (finding("a.py", 20, 22, fp="span"),))

    assert gitlab.refused == []
    (thread,) = gitlab.diff_threads(1)
    line_range = thread["notes"][0]["position"]["line_range"]
    # "new for lines added by this commit, otherwise old": line 20 and 22 are context lines.
    assert [line_range[end]["type"] for end in ("start", "end")] == ["old", "old"]


def _own_threads(gitlab: FakeGitLabAPI, count: int) -> list[str]:
    where = {"position_type": "text", "new_path": "a.py", "old_path": "a.py", "new_line": 21}
    return [
        gitlab.add_diff_thread(1, body(finding("a.py", 21, fp=f"f{n}"), 21, 21), BOT, where)
        for n in range(count)
    ]


def test_dismissals_and_questions_count_from_developers_up_and_five_answers_a_run(
    git_repo: GitRepoFactory,
) -> None:
    from orch_review.hosts.gitlab import dismissals, questions
    from tests.fakes.gitlab_api import REPORTER

    with FakeGitLabAPI() as gitlab:
        _merge_request(gitlab, git_repo)
        ids = _own_threads(gitlab, 8)
        gitlab.reply_as(1, ids[0], "@orch-review ignore the input is a constant", DEVELOPER)
        gitlab.reply_as(1, ids[1], "@orch-review ignore it is fine", REPORTER)
        first_note = gitlab.mrs[1].discussions[1]["notes"][0]
        first_note["award_emoji"] = [{"name": "thumbsdown", "user": dict(REPORTER)}]
        gitlab.reply_as(1, ids[2], "@orch-review deep is this reachable?", DEVELOPER)
        for thread in ids[3:]:
            gitlab.reply_as(1, thread, "@orch-review why?", DEVELOPER)
        gitlab.reply_as(1, ids[1], "@orch-review why?", REPORTER)
        with GitLabClient(gitlab.api_url, 7, BOT_TOKEN) as client:
            found = client.discussions(1)
            threads = own_threads(found, BOT["id"])
            developer = dismissals.Developers(client, BOT["id"])
            dismissed = dismissals.collect(client, 1, found, threads, BOT["id"], developer)
            asked = questions.pending(found, threads, BOT["id"], developer)

    (only,) = dismissed.values()  # the Reporter's reply and thumbs-down are not dismissals
    assert (only.fingerprint, only.reason, only.who) == ("f0", "the input is a constant", "dev")
    assert len(asked) == questions.MAX_ANSWERS == 5  # six Developers asked; none from a Reporter
    assert [q.discussion_id for q in asked] == ids[2:7]
    assert asked[0].mention.kind == "deep" and asked[1].mention.kind != "deep"


def test_a_token_below_developer_cannot_resolve_and_the_summary_is_still_kept(
    git_repo: GitRepoFactory,
) -> None:
    # "Resolve a merge request thread": at least the Developer role, or the MR's author.
    with FakeGitLabAPI() as gitlab:
        _merge_request(gitlab, git_repo)
        gitlab.members[BOT["id"]] = 20  # a project access token made with the Reporter role
        (gone,) = _own_threads(gitlab, 1)

        done = _publish(gitlab, ())

    thread = next(t for t in gitlab.diff_threads(1) if t["id"] == gone)
    assert thread["notes"][0]["resolved"] is False
    assert (done.resolved, done.not_resolved) == (0, 1)
    (summary,) = gitlab.notes_of(1)
    assert summary["author"]["id"] == BOT["id"]


def test_a_fix_longer_than_a_gitlab_suggestion_may_be_stays_prose() -> None:
    from orch_review.findings.records import PatchCheck, Verdict
    from orch_review.hosts.gitlab.publish import SUGGESTION_LINES_ABOVE, suggestion

    def fixed(lines: int) -> Finding:
        return replace(
            finding("a.py", 10, 10 + lines - 1),
            replacement="\n".join(f"fixed_{n} = {n}" for n in range(lines)),
            patch_check=PatchCheck(True, "applies and compiles"),
            verdict=Verdict(True, "holds", fix_ok=True),
        )

    # At most 100 lines above the commented line (the last): 101 lines in all.
    most = SUGGESTION_LINES_ABOVE + 1
    assert suggestion(fixed(most), 10, 10 + most - 1) is not None
    assert "suggestion:-100+0" in (suggestion(fixed(most), 10, 10 + most - 1) or "")
    assert suggestion(fixed(most + 1), 10, 10 + most) is None
