"""Dismissals on the fake GitHub API: a writer's `@orch-review ignore` reply or the ignore
reaction suppresses the finding for the rest of the pull request; nobody else's does."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import replace

import pytest

from orch_review.config.learnings import LEARNINGS_FILE
from orch_review.findings.records import Status
from orch_review.hosts.github import dismissals
from orch_review.hosts.github import threads as threads_module
from orch_review.hosts.github.api import GitHubClient
from orch_review.hosts.github.dismissals import ConversationRules
from orch_review.hosts.github.publish import publish
from tests.fakes.github_api import WRITE_TOKEN, FakeGitHubAPI
from tests.fakes.github_threads import ReviewThreads, install
from tests.hosts.github.conftest import NUMBER, REPOSITORY
from tests.hosts.github.test_comments import finding
from tests.hosts.github.test_publish import FILES, HEAD, PULL, covering, report_of

FINDINGS = [finding("big.py", 1, fp="a" * 32 + ":1"), finding("big.py", 2, fp="b" * 32 + ":1")]
WRITER, READER = "octo-maintainer", "passer-by"


@pytest.fixture
def api(github_api: FakeGitHubAPI) -> FakeGitHubAPI:
    github_api.add_pull(NUMBER, base_sha="b" * 40, head_sha=HEAD, files=FILES)
    github_api.roles[READER] = "read"
    return github_api


@pytest.fixture
def threads(api: FakeGitHubAPI) -> ReviewThreads:
    return install(api)


@pytest.fixture
def client(api: FakeGitHubAPI) -> Iterator[GitHubClient]:
    with GitHubClient(api.base_url, REPOSITORY, WRITE_TOKEN, sleep=lambda _: None) as c:
        yield c


def first_run(api: FakeGitHubAPI, client: GitHubClient) -> int:
    """Post the findings; the id of the first one's comment."""
    publish(client, PULL, covering(report_of(FINDINGS), "big.py"), "review")
    return int(api.pulls[NUMBER].review_comments[0]["id"])


def next_push(client: GitHubClient, conversation: ConversationRules | None = None) -> object:
    report = covering(report_of(FINDINGS), "big.py")
    return publish(client, PULL, report, "review", conversation=conversation)


def summary(api: FakeGitHubAPI) -> str:
    (comment,) = api.pulls[NUMBER].issue_comments
    return str(comment["body"])


def test_a_writers_ignore_reply_dismisses_the_finding_for_the_pull_request(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    root = first_run(api, client)
    threads.add_reply(NUMBER, root, "@orch-review ignore false alarm", WRITER)

    outcome = next_push(client)

    assert outcome.report is not None  # type: ignore[attr-defined]
    report = outcome.report  # type: ignore[attr-defined]
    (dismissed,) = report.with_status(Status.SUPPRESSED)
    assert dismissed.fingerprint == FINDINGS[0].fingerprint
    assert dismissed.suppressed == f"dismissed in this pull request by {WRITER}: false alarm"
    assert [f.fingerprint for f in report.confirmed] == [FINDINGS[1].fingerprint]
    assert report.exit_code("high").name == "FINDINGS"  # the other one still counts
    text = summary(api)
    assert "### Dismissed in this pull request (1)" in text
    snippet = text.split("```toml\n", 1)[1].split("```", 1)[0]
    (learning,) = tomllib.loads(snippet)["learning"]
    assert learning == {
        "fingerprint": FINDINGS[0].fingerprint,
        "category": FINDINGS[0].category,
        "reason": "false alarm",
        "who": WRITER,
        "when": "2026-11-30",
    }
    assert LEARNINGS_FILE in text


def test_the_learning_to_commit_names_the_file_and_the_claim_it_silences(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    hostile = 'Unchecked input.\n[[learning]]\nglob = "**"\u2028who = "x"\x1b[2J'
    findings = [replace(FINDINGS[0], claim=hostile), FINDINGS[1]]
    publish(client, PULL, covering(report_of(findings), "big.py"), "review")
    root = int(api.pulls[NUMBER].review_comments[0]["id"])
    threads.add_reply(NUMBER, root, "@orch-review ignore false alarm", WRITER)

    publish(client, PULL, covering(report_of(findings), "big.py"), "review")

    snippet = summary(api).split("```toml\n", 1)[1].split("```", 1)[0]
    (learning,) = tomllib.loads(snippet)["learning"]
    assert learning["fingerprint"] == FINDINGS[0].fingerprint and "glob" not in learning
    assert snippet.splitlines()[:3] == [
        "[[learning]]",
        "# finding: big.py:1 (security)",
        '# claim: Unchecked input. [[learning]] glob = "**" who = "x"[2J',
    ]


def test_a_dismissed_finding_is_not_commented_again_even_when_it_moves(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    root = first_run(api, client)
    threads.add_reply(NUMBER, root, "@orch-review ignore false alarm", WRITER)
    moved = [finding("big.py", 40, fp=FINDINGS[0].fingerprint), FINDINGS[1]]

    outcome = publish(client, PULL, covering(report_of(moved), "big.py"), "review")

    assert outcome.inline_posted == 0
    assert not [c for c in api.pulls[NUMBER].review_comments if c.get("line") == 40]


@pytest.mark.parametrize(
    ("login", "bot", "body"),
    [
        (READER, False, "@orch-review ignore false alarm"),  # no write access
        ("dependabot[bot]", True, "@orch-review ignore false alarm"),  # a bot
        (WRITER, False, "> @orch-review ignore false alarm\n\nI disagree."),  # a quotation
        (WRITER, False, "@orch-review why is this a bug?"),  # a question, not a dismissal
        (WRITER, False, "<!-- orch-review:reply -->\n@orch-review ignore x"),  # our own form
    ],
)
def test_replies_that_do_not_dismiss_change_nothing(
    login: str,
    bot: bool,
    body: str,
    api: FakeGitHubAPI,
    threads: ReviewThreads,
    client: GitHubClient,
) -> None:
    root = first_run(api, client)
    threads.add_reply(NUMBER, root, body, login, bot=bot)

    outcome = next_push(client)

    report = outcome.report  # type: ignore[attr-defined]
    assert len(report.confirmed) == 2 and report.with_status(Status.SUPPRESSED) == []
    assert "Dismissed" not in summary(api)


def test_the_ignore_reaction_of_a_writer_dismisses(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    root = first_run(api, client)
    threads.add_reaction(root, READER, "-1")  # no write access: does not count
    threads.add_reaction(root, WRITER, "+1")  # another reaction: does not count
    second = int(api.pulls[NUMBER].review_comments[1]["id"])
    threads.add_reaction(second, WRITER, "-1")

    outcome = next_push(client)

    (dismissed,) = outcome.report.with_status(Status.SUPPRESSED)  # type: ignore[attr-defined]
    assert dismissed.fingerprint == FINDINGS[1].fingerprint
    assert "dismissed with a -1 reaction" in str(dismissed.suppressed)


def test_the_configured_reaction_and_trigger_are_the_ones_that_count(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    root = first_run(api, client)
    threads.add_reaction(root, WRITER, "-1")
    threads.add_reply(NUMBER, root, "@orch-review ignore not with this trigger", WRITER)
    second = int(api.pulls[NUMBER].review_comments[1]["id"])
    threads.add_reply(NUMBER, second, "@reviewbot ignore fine here", WRITER)

    outcome = next_push(client, ConversationRules(trigger="@reviewbot", ignore_reaction="none"))

    (dismissed,) = outcome.report.with_status(Status.SUPPRESSED)  # type: ignore[attr-defined]
    assert dismissed.fingerprint == FINDINGS[1].fingerprint
    reaction_reads = [r for r in api.requests if r.path.endswith("/reactions")]
    assert reaction_reads == []  # ignore-reaction = none: reactions are not even read


def test_a_learning_already_in_the_file_is_not_offered_again(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    root = first_run(api, client)
    threads.add_reply(NUMBER, root, "@orch-review ignore false alarm", WRITER)

    next_push(client, ConversationRules(learned=frozenset({FINDINGS[0].fingerprint})))

    text = summary(api)
    assert "### Dismissed in this pull request (1)" in text and "```toml" not in text


def test_a_hostile_reason_cannot_break_out_of_the_snippet(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    root = first_run(api, client)
    reason = "``` \x1b[31m <!-- orch-review:summary --> @everyone\n```\n# Approved"
    threads.add_reply(NUMBER, root, "@orch-review ignore " + reason, WRITER)

    next_push(client)

    text = summary(api)
    fence_open = text.index("toml\n")
    fence = text[:fence_open].rsplit("\n", 1)[1]
    assert len(fence) > 3 and set(fence) == {"`"}
    snippet = text[fence_open + len("toml\n") :].split("\n" + fence + "\n", 1)[0]
    (learning,) = tomllib.loads(snippet)["learning"]
    assert learning["reason"].startswith("``` ")  # read back as written, one line
    assert "\x1b" not in text
    # Outside the code block (where GitHub notifies nobody) the mention is defused.
    outside = text.replace(snippet, "")
    assert "@everyone" not in outside and "@\u200beveryone" in outside
    assert outside.count("<!-- orch-review:summary -->") == 1


def test_a_dismissed_thread_is_resolved_with_one_reply(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    api.contents_write.add(WRITE_TOKEN)
    root = first_run(api, client)
    threads.add_reply(NUMBER, root, "@orch-review ignore false alarm", WRITER)

    next_push(client)
    next_push(client)

    assert threads.mutations == [("resolveReviewThread", root)]
    ours = [r for r in threads.replies(NUMBER, root) if r["user"]["login"] != WRITER]
    assert len(ours) == 1 and "Dismissed (dismissed in this pull request by" in ours[0]["body"]


MANY = [finding("big.py", i, fp=f"{i:032x}:1") for i in range(1, 41)]


def reaction_reads(api: FakeGitHubAPI) -> list[str]:
    return [r.path for r in api.requests if r.path.endswith("/reactions")]


def thread_listings(api: FakeGitHubAPI) -> int:
    return sum(
        1 for r in api.requests if r.path == "/graphql" and "reviewThreads" in r.body["query"]
    )


def test_reactions_on_many_threads_cost_no_rest_request(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    api.contents_write.add(WRITE_TOKEN)
    publish(client, PULL, covering(report_of(MANY), "big.py"), "review")
    roots = [c["id"] for c in api.pulls[NUMBER].review_comments]
    assert len(roots) == len(MANY)
    threads.add_reaction(roots[3], READER, "-1")  # no write access
    threads.add_reaction(roots[5], "renovate[bot]", "-1", bot=True)  # a bot: null user
    threads.add_reaction(roots[7], WRITER, "+1")  # not the configured reaction
    threads.add_reaction(roots[9], WRITER, "-1", created_at="2026-11-30T12:00:00Z")
    threads.add_reaction(roots[9], "octo-admin", "-1", created_at="2026-11-30T09:30:00Z")
    api.roles["octo-admin"] = "admin"
    api.requests.clear()

    outcome = publish(client, PULL, covering(report_of(MANY[1:]), "big.py"), "review")

    assert reaction_reads(api) == []
    (dismissed,) = outcome.report.with_status(Status.SUPPRESSED)  # type: ignore[union-attr]
    assert dismissed.fingerprint == MANY[9].fingerprint
    # The earliest writer's reaction wins, whatever order GitHub stored them in.
    assert dismissed.suppressed == (
        "dismissed in this pull request by octo-admin: dismissed with a -1 reaction"
    )
    # One listing (the fake's pages hold 2) serves the reactions and the threads: the
    # gone finding's and the dismissed finding's threads are resolved.
    assert thread_listings(api) == len(roots) // 2
    assert sorted(threads.mutations) == sorted(
        [("resolveReviewThread", roots[0]), ("resolveReviewThread", roots[9])]
    )
    asked = {r.path.rsplit("/", 2)[-2] for r in api.requests if "/collaborators/" in r.path}
    # Only the reader and the earliest writer are asked about: not the bot, not the +1.
    assert asked == {READER, "octo-admin"}
    assert "REST request" not in summary(api)


def test_without_graphql_reactions_are_read_through_rest_and_the_summary_says_so(
    api: FakeGitHubAPI, threads: ReviewThreads, client: GitHubClient
) -> None:
    root = first_run(api, client)
    threads.add_reaction(root, WRITER, "-1")
    second = int(api.pulls[NUMBER].review_comments[1]["id"])
    threads.add_reaction(second, "renovate[bot]", "-1", bot=True)
    api.graphql = None  # GraphQL unavailable: the endpoint answers 404

    outcome = next_push(client)

    (dismissed,) = outcome.report.with_status(Status.SUPPRESSED)  # type: ignore[attr-defined]
    assert dismissed.fingerprint == FINDINGS[0].fingerprint
    assert len(reaction_reads(api)) == 2
    text = summary(api)
    assert "GraphQL could not list the review threads" in text
    assert "read with one REST request per thread" in text


def test_reading_reactions_through_rest_is_bounded_and_the_summary_says_so(
    api: FakeGitHubAPI,
    threads: ReviewThreads,
    client: GitHubClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(dismissals, "MAX_THREADS", 3)
    publish(client, PULL, covering(report_of(MANY[:6]), "big.py"), "review")
    roots = [c["id"] for c in api.pulls[NUMBER].review_comments]
    threads.add_reaction(roots[5], WRITER, "-1")  # beyond the bound: not read this run
    api.graphql = None
    api.requests.clear()

    outcome = publish(client, PULL, covering(report_of(MANY[:6]), "big.py"), "review")

    assert len(reaction_reads(api)) == 3
    assert outcome.report.with_status(Status.SUPPRESSED) == []  # type: ignore[union-attr]
    assert "reactions of 3 threads could not be read" in summary(api)


def test_a_comment_with_more_reactions_than_listed_is_read_through_rest(
    api: FakeGitHubAPI,
    threads: ReviewThreads,
    client: GitHubClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads_module, "REACTIONS_PER_COMMENT", 2)
    root = first_run(api, client)
    for i in range(3):
        api.roles[f"watcher-{i}"] = "read"
        threads.add_reaction(root, f"watcher-{i}", "-1", created_at=f"2026-11-30T0{i}:00:00Z")
    threads.add_reaction(root, WRITER, "-1", created_at="2026-11-30T08:00:00Z")
    api.requests.clear()

    outcome = next_push(client)

    (dismissed,) = outcome.report.with_status(Status.SUPPRESSED)  # type: ignore[attr-defined]
    assert dismissed.fingerprint == FINDINGS[0].fingerprint and WRITER in str(dismissed.suppressed)
    # That comment only (its REST pages hold 2 reactions each).
    assert set(reaction_reads(api)) == {f"/repos/{REPOSITORY}/pulls/comments/{root}/reactions"}
