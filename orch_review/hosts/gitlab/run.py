"""``orch-review gitlab``: review the merge request a GitLab CI job runs for, and report on it.

The review is the same core as ``orch-review --base BASE --head HEAD``, with the latest
merge request version's commits (the diff GitLab shows). GitLab CI clones shallow
(``GIT_DEPTH`` 20 by default): missing commits are fetched, or the run stops saying to set
``GIT_DEPTH: 0``. Then: the Code Quality report (always, so findings reach the merge request
widget even when nothing can be posted), the discussions and the summary note when the
token may write, and an exit code per ``fail_on``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review.errors import CredentialsMissing, ExitCode, GitError
from orch_review.hosts.base import Asking, Echo
from orch_review.hosts.dismissals import ConversationRules
from orch_review.hosts.gitlab.api import Forbidden, GitLabClient
from orch_review.hosts.gitlab.event import GitLabEventError, MergeRequestJob
from orch_review.hosts.gitlab.host import GITLAB, GitLabConnection, connect
from orch_review.hosts.gitlab.positions import Refs, refs_of
from orch_review.hosts.http_errors import HostApiError
from orch_review.hosts.run_flow import learned_fingerprints, prepare_with_intent
from orch_review.scope.stated_intent import DESCRIPTION_LIMIT, TITLE_LIMIT, Intent, clean

if TYPE_CHECKING:
    import git

    from orch_review.events import EventSink
    from orch_review.findings.report import Report
    from orch_review.hosts.gitlab.publish import Published

DEPTH_HINT = "set `GIT_DEPTH: 0` in the job's variables so the merge request's history is there"
JOB_TOKEN_ONLY = (
    "orch-review: only CI_JOB_TOKEN is set, and a job token cannot write merge request notes: "
    "findings are in the job log and the Code Quality report. Set GITLAB_TOKEN (a project "
    "access token with `api` scope and the Developer role) to get discussions on the diff."
)
FORK = (
    "orch-review: this merge request comes from a fork, whose pipeline cannot write to the "
    "target project: findings are in the job log and the Code Quality report."
)


@dataclass(frozen=True, slots=True)
class GitLabRun:
    """What the `gitlab` command was asked to do."""

    fail_on: str = "high"
    overrides: Mapping[str, object] = field(default_factory=dict)
    codequality_file: Path | None = Path("gl-code-quality-report.json")
    json_file: Path | None = None
    post: bool = True
    # Post these merged shard reports (`orch-review --shard K/N --json`) instead of reviewing.
    from_reports: tuple[Path, ...] = ()
    # Add the walkthrough to the summary note (the `walkthrough` setting can turn it off).
    walkthrough: bool = True


def job_intent(
    client: GitLabClient,
    job: MergeRequestJob,
    env: Mapping[str, str],
    readable: bool,
    other_projects: Collection[str] = (),
) -> Intent:
    """The merge request's intent: from the API when the token may read it, else from CI's
    CI_MERGE_REQUEST_TITLE and CI_MERGE_REQUEST_DESCRIPTION (no linked issue read then).
    Issues of another project are read only when ``other_projects`` names it."""
    from orch_review.hosts.gitlab.intent import merge_request_intent

    if readable:
        try:
            merge_request = client.merge_request(job.iid)
        except HostApiError:
            pass
        else:
            return merge_request_intent(
                client, merge_request, job.server_url, other_projects=other_projects
            )
    fallback = {
        "iid": job.iid,
        "title": env.get("CI_MERGE_REQUEST_TITLE", ""),
        "description": env.get("CI_MERGE_REQUEST_DESCRIPTION", ""),
    }
    return Intent(
        f"merge request !{job.iid}",
        clean(fallback["title"], TITLE_LIMIT),
        clean(fallback["description"], DESCRIPTION_LIMIT),
    )


def latest_version(client: GitLabClient, job: MergeRequestJob) -> tuple[Refs, dict[str, object]]:
    """The diff version of the commit under review (else the latest): its refs and diffs."""
    versions = client.versions(job.iid)
    for version in versions:
        if version.get("head_commit_sha") == job.head_sha:
            chosen = version
            break
    else:
        chosen = versions[0] if versions else {}
    refs = refs_of([chosen])
    if refs is None or not isinstance(chosen.get("id"), int):
        raise GitLabEventError(
            f"merge request !{job.iid} has no diff version yet: run the pipeline again."
        )
    return refs, client.version(job.iid, int(chosen["id"]))


def _discuss(
    connection: GitLabConnection,
    report: Report,
    learned: frozenset[str],
    asking: Asking | None = None,
) -> tuple[Report, Published]:
    """The team's dismissals applied to ``report``, then everything posted, then the
    pending questions answered."""
    done = GITLAB.publish(connection, report, ConversationRules(learned=learned))
    report = done.report or report  # the team's dismissals suppressed
    if asking is not None:
        findings = {f.fingerprint: f for f in report.findings}
        asked = replace(asking, findings=findings)
        done.answered = GITLAB.answer_questions(connection, asked).count
    return report, done


def run_gitlab(
    repo: git.Repo,
    run: GitLabRun,
    env: Mapping[str, str],
    *,
    echo: Echo,
    warn: Echo,
    events: EventSink | None = None,
) -> tuple[ExitCode, Report | None]:
    """Review the merge request, report on it; the exit code and the report."""
    from orch_review import core
    from orch_review.reporters.files import check_writable_path, write_text
    from orch_review.scope.git.fetch_change import ensure_history

    job = MergeRequestJob.from_env(env)
    token = job.token or job.job_token
    if token is None:
        raise CredentialsMissing(
            "neither GITLAB_TOKEN nor CI_JOB_TOKEN is set: run orch-review gitlab in a GitLab CI "
            "job, with GITLAB_TOKEN (a project access token with `api` scope and the Developer "
            "role) to post."
        )
    if not run.from_reports and not core.has_credentials(env):
        raise CredentialsMissing(
            "no Anthropic API key: add ANTHROPIC_API_KEY as a masked, protected CI/CD variable."
        )
    # Posting needs GITLAB_TOKEN, and a fork's pipeline cannot write to the target: then the
    # review's range comes from CI's own variables, with no API call.
    can_post = run.post and job.token is not None and not job.from_fork
    with connect(job, env) as connection:
        if can_post:
            refs, version = latest_version(connection.client, job)
        else:
            refs, version = Refs(job.diff_base_sha, job.diff_base_sha, job.head_sha), {}
        connection.latest = (refs, version)
        if run.codequality_file is not None:
            check_writable_path(run.codequality_file, "the Code Quality report")
        learned: frozenset[str] = frozenset()
        asking: Asking | None = None  # no review here, so no conversation
        if run.from_reports:
            report = core.merge(
                run.from_reports, json_file=run.json_file, asked_by="orch-review gitlab"
            )
        else:
            try:
                for line in ensure_history(repo, refs.base_sha, refs.head_sha):
                    warn(f"orch-review: {line}")
            except GitError as exc:
                raise GitError(f"{str(exc).split(': set ', 1)[0]}: {DEPTH_HINT}.") from None
            options = core.ReviewOptions(
                base=refs.base_sha,
                head=refs.head_sha,
                walkthrough=run.walkthrough and can_post,
                settings=run.overrides,
                json_file=run.json_file,
            )
            prepared = prepare_with_intent(
                repo, options, env, lambda issues: GITLAB.read_intent(connection, issues)
            )
            learned = learned_fingerprints(prepared)
            report = core.run(prepared, events=events, notices=warn)  # the sandbox in force
            asking = Asking(repo, prepared.config, env, core.review_conversation(prepared))
        if run.codequality_file is not None:
            from orch_review.reporters import codequality

            write_text(run.codequality_file, codequality.render(report), "the Code Quality report")
        if not run.post:
            echo("orch-review: --no-post: nothing posted to the merge request.")
        elif job.from_fork:
            warn(FORK)
        elif job.token is None:
            warn(JOB_TOKEN_ONLY)
        else:
            try:
                report, done = _discuss(connection, report, learned, asking)
            except Forbidden as exc:
                warn(f"orch-review: could not post to the merge request ({exc}).")
            else:
                echo(
                    f"orch-review: {done.posted} new discussion(s), {done.already} already "
                    f"posted, {len(done.outside)} in the summary only, {done.resolved} resolved, "
                    f"{done.answered} question(s) answered."
                )
                if done.not_resolved:
                    warn(
                        f"orch-review: GitLab refused to resolve {done.not_resolved} thread(s): "
                        "give the token at least the Developer role."
                    )
    return report.exit_code(run.fail_on), report
