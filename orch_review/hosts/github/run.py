"""``orch-review github``: review the pull request an Actions run is about and report on it.

The review is the same core as ``orch-review --base BASE --head HEAD`` with the PR's base
and head commits (configuration read from the base, so a PR cannot weaken its own review).
Then: SARIF/JSON files if asked, comments per the comment mode, annotations and the job
summary when comments cannot be posted, step outputs, and an exit code per ``fail_on``.
The review itself goes through the library front door (:mod:`orch_review.core`), so this
package does not depend on the engine that produces reports.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.errors import CredentialsMissing, ExitCode
from orch_review.findings.report import Report
from orch_review.hosts import summary
from orch_review.hosts.base import Echo
from orch_review.hosts.dismissals import ConversationRules
from orch_review.hosts.github import artifacts, outputs
from orch_review.hosts.github.api import GitHubClient
from orch_review.hosts.github.conversation_run import run_comment
from orch_review.hosts.github.event import (
    COMMENT_EVENTS,
    GitHubContext,
    PullRequest,
    comment_from_event,
    load_event,
    pull_request_from_event,
)
from orch_review.hosts.github.host import GITHUB, connect
from orch_review.hosts.github.publish import CommentMode, Outcome
from orch_review.hosts.run_flow import conversation_rules, prepare_with_intent
from orch_review.reporters import workflow_commands
from orch_review.reporters.files import ReportNotWritten, report_files, write_reports
from orch_review.sanitize import line as safe_line
from orch_review.scope.git.fetch_change import auth_env, ensure_history

if TYPE_CHECKING:
    import git

    from orch_review.config.choices import FilterMode
    from orch_review.events import EventSink
    from orch_review.scope.stated_intent import Intent


PR_TARGET_WARNING = (
    "orch-review runs on `pull_request_target`: that job holds secrets and a write token, so "
    "no step may check out, build or run the pull request's code (see "
    "docs/github-actions.md); prefer "
    "`pull_request`."
)
NO_KEY_ON_FORK = (
    "review skipped: no Anthropic API key, because GitHub does not give secrets to workflows "
    "started by pull requests from forks."
)


@dataclass(frozen=True, slots=True)
class GitHubRun:
    """What the `github` command was asked to do."""

    comment_mode: CommentMode = "review"
    fail_on: str = "never"
    pathspecs: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    overrides: Mapping[str, object] = field(default_factory=dict)
    filter_mode: FilterMode | None = None
    sarif_file: Path | None = None
    json_file: Path | None = None
    event_path: Path | None = None
    pr_number: int | None = None
    repository: str | None = None
    fetch: bool = True
    # Post these merged shard reports (`orch-review --shard K/N --json`) instead of reviewing.
    from_reports: tuple[Path, ...] = ()
    # Keep the review's conversation here for comments' runs (the Action uploads it).
    conversation_file: Path | None = None
    # Add the walkthrough to the summary comment (the `walkthrough` setting can turn it off).
    walkthrough: bool = True


def find_pull_request(
    run: GitHubRun, context: GitHubContext, env: Mapping[str, str], warn: Echo
) -> PullRequest:
    """The pull request: from ``--pr`` through the API, else from the event payload."""
    if run.pr_number is not None:
        with GitHubClient(context.api_url, context.repository, context.token) as client:
            return PullRequest.from_payload(client.pull(run.pr_number), context.repository)
    name, payload = load_event(env, run.event_path)
    if name == "pull_request_target":
        warn(workflow_commands.command("warning", PR_TARGET_WARNING, title="orch-review"))
    return pull_request_from_event(name, payload, context.repository)


def run_github(
    repo: git.Repo,
    run: GitHubRun,
    env: Mapping[str, str],
    *,
    echo: Echo,
    warn: Echo,
    events: EventSink | None = None,
) -> ExitCode:
    """Review the pull request, post the results, write outputs; returns the exit code."""
    from orch_review import core
    from orch_review.scope.resolve import NothingToReview

    context = GitHubContext.from_env(env, run.repository)
    if run.pr_number is None and env.get("GITHUB_EVENT_NAME") in COMMENT_EVENTS:
        return _answer_comment(repo, run, context, env, echo, events)
    pull = find_pull_request(run, context, env, warn)
    if run.from_reports:
        return _report_on(merged_report(run, env), run, pull, context, env, echo, warn)
    if not core.has_credentials(env):
        if not pull.from_fork:
            raise CredentialsMissing(
                "no Anthropic API key: set the `anthropic-api-key` input (or ANTHROPIC_API_KEY) "
                "from a repository secret."
            )
        echo(workflow_commands.command("warning", NO_KEY_ON_FORK, title="orch-review"))
        _finish(env, None, run, f"## orch-review\n\n{NO_KEY_ON_FORK}\n")
        return ExitCode.CLEAN
    if run.fetch:
        for line in ensure_history(
            repo,
            pull.base_sha,
            pull.head_sha,
            env=auth_env(context.server_url, context.token, repo),
        ):
            warn(f"orch-review: {safe_line(line)}")
    options = core.ReviewOptions(
        base=pull.base_sha,
        head=pull.head_sha,
        walkthrough=run.walkthrough,
        paths=run.pathspecs,
        exclude=run.exclude,
        settings=run.overrides,
        filter_mode=run.filter_mode,
        json_file=run.json_file,
        sarif_file=run.sarif_file,
    )

    def intent_of(projects: Collection[str]) -> Intent:
        with connect(context, pull) as connection:
            return GITHUB.read_intent(connection, projects)

    try:
        prepared = prepare_with_intent(repo, options, env, intent_of)
    except NothingToReview as exc:
        core.write_empty_reports(options, str(exc))
        _finish(env, None, run, f"## orch-review\n\nNothing to review: {exc}\n")
        return ExitCode.CLEAN
    nothing = prepared.scope.nothing_reviewable()
    if nothing is not None:  # every changed file skipped: said as when none changed
        _finish(env, None, run, f"## orch-review\n\nNothing to review: {nothing}\n")
        return ExitCode.CLEAN
    unwritten: ReportNotWritten | None = None
    try:
        # It writes the report files; the log says which sandbox the agents work in.
        report = core.run(prepared, events=events, notices=warn)
    except ReportNotWritten as exc:  # paid for: posted all the same, then the error
        report, unwritten = exc.report, exc
    if run.conversation_file is not None:
        keep_conversation(run.conversation_file, core.review_conversation(prepared), report, pull)
    code = _report_on(report, run, pull, context, env, echo, warn, conversation_rules(prepared))
    if unwritten is not None:
        raise unwritten
    return code


def keep_conversation(
    path: Path, conversation: dict[str, object] | None, report: Report, pull: PullRequest
) -> None:
    """Write the review's conversation and findings for comments' runs; nothing (and no
    stale file) when the review left no conversation about the head."""
    path.unlink(missing_ok=True)
    if conversation is None:
        return
    stored = artifacts.StoredReview(
        pull.base_repository, pull.number, pull.head_sha, conversation, report.findings
    )
    artifacts.write(path, stored)


def _answer_comment(
    repo: git.Repo,
    run: GitHubRun,
    context: GitHubContext,
    env: Mapping[str, str],
    echo: Echo,
    events: EventSink | None,
) -> ExitCode:
    name, payload = load_event(env, run.event_path)
    comment = comment_from_event(name, payload, context.repository)
    return run_comment(
        repo,
        comment,
        context,
        env,
        overrides=run.overrides,
        fetch=run.fetch,
        echo=echo,
        events=events,
    )


def merged_report(run: GitHubRun, env: Mapping[str, str]) -> Report:
    """The merged report of shard JSON reports, its files written; ConfigError when none is
    usable. Verified patches count only when signed with ``env``'s credential."""
    from orch_review import core

    return core.merge(
        run.from_reports,
        json_file=run.json_file,
        sarif_file=run.sarif_file,
        asked_by="--from-reports",
        env=env,
    )


def _report_on(
    report: Report,
    run: GitHubRun,
    pull: PullRequest,
    context: GitHubContext,
    env: Mapping[str, str],
    echo: Echo,
    warn: Echo,
    conversation: ConversationRules | None = None,
) -> ExitCode:
    """Post the results, write the outputs; the exit code."""
    outcome = _post(report, pull, context, run.comment_mode, conversation)
    if outcome.report is not None and outcome.report is not report:
        report = outcome.report  # the team's dismissals suppressed: files and exit code agree
        write_reports(report, report_files(run.json_file, run.sarif_file))
    if outcome.fallback:
        warn(f"orch-review: {safe_line(outcome.fallback)}; the findings are annotations instead.")
    if outcome.annotate:
        echo(workflow_commands.render(report).rstrip("\n"))
    notes = [f"Not posted on the pull request: {outcome.fallback}"] if outcome.fallback else []
    markdown = summary.render(
        report,
        outcome.placement,
        head_sha=pull.head_sha,
        marker=False,
        notes=notes,
        all_findings=True,
    )
    _finish(env, report, run, markdown)
    return report.exit_code(run.fail_on)


def _post(
    report: Report,
    pull: PullRequest,
    context: GitHubContext,
    mode: CommentMode,
    conversation: ConversationRules | None,
) -> Outcome:
    if mode in ("review", "summary") and not context.token:
        placement = summary.Placement.none_inline(report, "not posted: no GitHub token")
        return Outcome(mode, placement, fallback="no GitHub token (set GITHUB_TOKEN)")
    with connect(context, pull, mode) as connection:
        return GITHUB.publish(connection, report, conversation or ConversationRules())


def _finish(env: Mapping[str, str], report: Report | None, run: GitHubRun, markdown: str) -> None:
    outputs.write_step_summary(env, markdown)
    files = (run.sarif_file, run.json_file) if report is not None else (None, None)
    outputs.write_outputs(env, outputs.output_values(report, *files))
