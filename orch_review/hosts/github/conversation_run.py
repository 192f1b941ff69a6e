"""``orch-review github`` started by a comment: answer it where it was written.

A comment on a pull request (``issue_comment``, ``pull_request_review_comment``) that
mentions the trigger gets one reply: in the review thread it was written in, or as a
conversation comment. Only a person with write access (GitHub's answer, not the payload's
``author_association``) may ask; bots never, orch-review's own replies never.

- ``@orch-review <question>`` continues the pull request's last review with orchestration
  mode off, as ``orch-review ask``; ``deep`` switches the mode on for that turn. In a
  finding's thread, the finding is given to the model with the question.
- ``@orch-review ignore <reason>`` in a finding's thread acknowledges the dismissal with the
  learning to commit; the review run of the next push does the suppressing.

An ``issue_comment`` run holds the base repository's secrets even for a fork's pull request:
its configuration comes from the pull request's base commit, and the pull request's code is
only read by agents, in the sandbox, from a checkout of its head commit that git fetched
(see :func:`orch_review.core.answer_follow_up`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from orch_review.config.learnings import LEARNINGS_FILE, Learning, to_toml
from orch_review.errors import CredentialsMissing, ExitCode
from orch_review.findings.records import Finding
from orch_review.hosts import mentions
from orch_review.hosts.base import Answered, Asking, Echo
from orch_review.hosts.comment_body import posted_category
from orch_review.hosts.github import artifacts, outputs
from orch_review.hosts.github.api import ACTIONS_BOT, GitHubClient, PermissionDenied
from orch_review.hosts.github.comments import written_by
from orch_review.hosts.github.event import CommentEvent, GitHubContext, PullRequest
from orch_review.hosts.github.host import GITHUB, GitHubConnection
from orch_review.hosts.markers import FINDING_MARKER, REPLY_MARKER, marked_fingerprint
from orch_review.hosts.replies import reply_body
from orch_review.sanitize import fence, line, markdown, markdown_url
from orch_review.scope.git.fetch_change import auth_env, ensure_history

if TYPE_CHECKING:
    import git

    from orch_review.config.settings import Config
    from orch_review.events import EventSink

MAX_DIFF = 40_000  # characters of the diff given to a session that starts afresh
NO_KEY_ON_FORK = (
    "no Anthropic API key, because GitHub gives no secrets to runs started by review comments "
    "on a fork's pull request (the `issue_comment` event has them)"
)


@dataclass(frozen=True, slots=True)
class TriggeringThread:
    """The review thread a comment was written in, when its top comment is orch-review's."""

    top_id: int
    fingerprint: str | None
    path: str
    line: int | None
    posted: str  # the top comment's text without its marker


def skip_reason(comment: CommentEvent) -> str | None:
    """Why a comment is none of orch-review's business, known from the payload alone."""
    if not comment.on_pull_request:
        return "the comment is on an issue, not a pull request"
    if comment.action != "created":
        # An edit would answer again what was answered, or answer an old comment.
        return f"the comment was {comment.action or 'changed'}, not created"
    if mentions.is_bot(comment.user):
        return "the comment is by a bot"
    if mentions.from_orch_review({"body": comment.body}):
        return "the comment is one of orch-review's replies"
    if not any("@" in text for text in mentions.own_lines(comment.body)):
        # Every trigger is an @-mention in the commenter's own words (not a quote, not code).
        return "the comment mentions no one outside quotes and code"
    return None


def run_comment(
    repo: git.Repo,
    comment: CommentEvent,
    context: GitHubContext,
    env: Mapping[str, str],
    *,
    overrides: Mapping[str, object],
    fetch: bool,
    echo: Echo,
    events: EventSink | None = None,
    today: Callable[[], dt.date] = dt.date.today,
) -> ExitCode:
    """Answer ``comment`` if it asks orch-review something and its author may ask."""

    def skip(why: str) -> ExitCode:
        echo(f"orch-review: no reply: {line(why)}.")
        _job_summary(env, f"No reply to comment {comment.comment_id}: {markdown(why, 500)}.")
        return ExitCode.CLEAN

    why = skip_reason(comment)
    if why is not None:
        return skip(why)
    if not context.token:
        return skip("no GitHub token (set GITHUB_TOKEN) to read the pull request")
    with GitHubClient(context.api_url, context.repository, context.token) as client:
        # Before anything is fetched: anyone may comment on a public pull request, and a
        # comment by someone without write access must cost no more than this one question.
        if not client.may_write(comment.login):
            return skip(f"{comment.login} has no write access to the repository")
        pull = comment.pull or PullRequest.from_payload(
            client.pull(comment.number), context.repository
        )
        if fetch:
            ensure_history(
                repo,
                pull.base_sha,
                pull.head_sha,
                env=auth_env(context.server_url, context.token, repo),
            )
        config = base_config(repo, pull, env, overrides)
        mention = mentions.parse(comment.body, config.trigger)
        if mention is None:
            return skip(f"the comment does not mention {config.trigger}")
        if mention.kind != "ignore":
            from orch_review import core

            if not core.has_credentials(env, config.provider):
                if pull.from_fork and comment.event != "issue_comment":
                    return skip(NO_KEY_ON_FORK)
                raise CredentialsMissing(
                    "no Anthropic API key to answer with: set the `anthropic-api-key` input "
                    "(or ANTHROPIC_API_KEY) from a repository secret."
                )
        connection = GitHubConnection(client, context, pull, comment=comment, today=today)
        answered = GITHUB.answer_questions(connection, Asking(repo, config, env, events=events))
    echo(f"orch-review: replied to comment {comment.comment_id} ({mention.kind}).")
    url = answered.links[0] if answered.links else ""
    where = f"[a reply]({markdown_url(url)})" if markdown_url(url) else "a reply"
    _job_summary(
        env, f"Posted {where} to comment {comment.comment_id} of {markdown(comment.login, 100)}."
    )
    return ExitCode.CLEAN


def answer_comment(connection: GitHubConnection, asking: Asking) -> Answered:
    """Reply to the comment that started the run (``connection.comment``): an answer to
    its question, or the acknowledgement of its ``ignore``; nothing when it asks nothing."""
    comment = connection.comment
    mention = None if comment is None else mentions.parse(comment.body, asking.config.trigger)
    if comment is None or mention is None:
        return Answered()
    client, pull = connection.client, connection.pull
    author = client.login() or ACTIONS_BOT
    thread = find_thread(client, comment, author)
    if mention.kind == "ignore":
        body = dismissal_reply(comment, thread, mention.text, pull, connection.today())
    else:
        body = _answer(
            asking.repo,
            asking.config,
            asking.env,
            client,
            comment,
            pull,
            thread,
            mention,
            asking.events,
        )
    posted = _post_reply(client, comment, pull, body)
    url = str(posted.get("html_url") or "") if isinstance(posted, dict) else ""
    return Answered((body,), (url,))


def _job_summary(env: Mapping[str, str], text: str) -> None:
    """The job summary and the step outputs of a comment's run (no review: no findings)."""
    outputs.write_step_summary(env, f"## orch-review\n\n{text}\n")
    outputs.write_outputs(env, outputs.output_values(None, None, None))


def base_config(
    repo: git.Repo, pull: PullRequest, env: Mapping[str, str], overrides: Mapping[str, object]
) -> Config:
    """The configuration from the pull request's base commit, never from its head."""
    from orch_review.config.from_revision import load_settings
    from orch_review.scope.resolve import ScopeRequest

    request = ScopeRequest(base=pull.base_sha, head=pull.head_sha)
    return load_settings(repo, request, env, overrides)


def find_thread(
    client: GitHubClient, comment: CommentEvent, author: str
) -> TriggeringThread | None:
    """The review thread of ``comment``, described by its top comment; None outside one."""
    top_id = comment.thread_top
    if top_id is None:
        return None
    try:
        top = client.review_comment(top_id)
    except PermissionDenied:
        return None  # deleted meanwhile
    body = str(top.get("body") or "")
    fingerprint = marked_fingerprint(body) if written_by(top, author) else None
    found_line = top.get("line")
    return TriggeringThread(
        top_id=top_id,
        fingerprint=fingerprint,
        path=str(top.get("path") or ""),
        line=found_line if isinstance(found_line, int) else None,
        posted=body.removeprefix(FINDING_MARKER.format(fingerprint)).strip() if fingerprint else "",
    )


def _answer(
    repo: git.Repo,
    config: Config,
    env: Mapping[str, str],
    client: GitHubClient,
    comment: CommentEvent,
    pull: PullRequest,
    thread: TriggeringThread | None,
    mention: mentions.Mention,
    events: EventSink | None,
) -> str:
    from orch_review import core

    stored: artifacts.StoredReview | None = None
    missing = ""
    try:
        stored = artifacts.fetch_review(client, pull.base_repository, pull.number, pull.head_sha)
    except artifacts.ArtifactUnusable as exc:
        missing = str(exc)
    finding = (
        stored.finding(thread.fingerprint) if stored and thread and thread.fingerprint else None
    )
    diff = "" if stored is not None else pull_diff(client, pull.number)
    question = compose_question(comment, thread, finding, mention, diff)
    answer = core.answer_follow_up(
        repo,
        config,
        env,
        question,
        commit=pull.head_sha,
        scope=f"pull request #{pull.number} at {pull.head_sha[:12]}",
        conversation=stored.conversation if stored else None,
        orchestrate=mention.kind == "deep",
        events=events,
    )
    notes = list(answer.notes)
    if not answer.continued:
        reason = missing or "it could not be continued"
        notes.insert(
            0,
            f"the review's conversation was not found ({reason}), so this answer "
            "comes from the finding, the diff and the code",
        )
    return reply_body(answer.text, answer.orchestrated, notes, pull.head_sha)


def compose_question(
    comment: CommentEvent,
    thread: TriggeringThread | None,
    finding: Finding | None,
    mention: mentions.Mention,
    diff: str,
) -> str:
    """The user turn: where the question was asked, the finding it is about, the question."""
    parts = [f"{comment.login} asks on pull request #{comment.number}"]
    if finding is not None:
        verdict = finding.verdict
        lines = f"{finding.start_line}-{finding.end_line}"
        parts[0] += " in the review thread of this finding of yours:"
        parts += [
            f"- file: {finding.path}, lines {lines}",
            f"- severity: {finding.severity.value}, category: {finding.category}",
            f"- claim: {finding.claim}",
            f"- evidence: {finding.evidence}",
        ]
        if verdict is not None:
            outcome = "confirmed" if verdict.confirmed else "refuted"
            parts.append(
                f"- verdict: {outcome} by a verifier ({verdict.confidence} confidence): "
                f"{verdict.reason}"
            )
    elif thread is not None and thread.fingerprint is not None:
        parts[0] += (
            f" in the review thread of a finding of yours on {thread.path}"
            f"{f' line {thread.line}' if thread.line else ''}, posted as:"
        )
        parts.append(thread.posted)
    elif thread is not None:
        parts[0] += f" in a review thread on {thread.path}:"
    else:
        parts[0] += ":"
    parts += ["", "Question:", mention.text or "(no question: explain the review's findings)"]
    if diff:
        parts += [
            "",
            "The pull request's diff (your review's conversation is not available: check "
            "what you need in the content):",
            diff,
        ]
    parts += ["", "Answer in Markdown for a pull request comment, briefly."]
    return "\n".join(parts)


def pull_diff(client: GitHubClient, number: int) -> str:
    """The pull request's patches, cut at :data:`MAX_DIFF` characters."""
    chunks = []
    for entry in client.pull_files(number):
        patch = entry.get("patch")
        header = f"--- {entry.get('filename')} ({entry.get('status')})"
        chunks.append(f"{header}\n{patch}" if isinstance(patch, str) else header)
    text = "\n".join(chunks)
    return text if len(text) <= MAX_DIFF else text[:MAX_DIFF] + "\n[diff cut here]"


def dismissal_reply(
    comment: CommentEvent,
    thread: TriggeringThread | None,
    reason: str,
    pull: PullRequest,
    today: dt.date,
) -> str:
    """The acknowledgement of ``@orch-review ignore``, with the learning to commit."""
    if thread is None or thread.fingerprint is None:
        return (
            f"{REPLY_MARKER}\n`ignore` dismisses a finding: reply "
            "`@orch-review ignore <reason>` in the review thread of one of orch-review's "
            "inline comments.\n"
        )
    reason = " ".join(reason.split()) or f"dismissed on pull request #{pull.number}"
    learning = Learning(
        reason=reason,
        who=comment.login,
        when=when(comment, today),
        fingerprint=thread.fingerprint,
        category=posted_category(thread.posted),
    )
    entry = to_toml(learning)
    fenced = fence(entry)
    return (
        f"{REPLY_MARKER}\nDismissed for this pull request: {markdown(reason, 500)}. "
        "orch-review will not raise this finding again on it.\n\n"
        "To keep it for the repository, commit this learning to "
        f"`{LEARNINGS_FILE}`:\n\n{fenced}toml\n{entry}{fenced}\n"
    )


def when(comment: CommentEvent, today: dt.date) -> str:
    """The comment's date (ISO 8601), else today's."""
    match = re.match(r"\d{4}-\d{2}-\d{2}", comment.created_at)
    return match.group() if match else today.isoformat()


def _post_reply(
    client: GitHubClient, comment: CommentEvent, pull: PullRequest, body: str
) -> dict[str, Any]:
    top = comment.thread_top
    if top is not None:
        return client.reply_to_review_comment(pull.number, top, body)
    return client.create_issue_comment(pull.number, body)
