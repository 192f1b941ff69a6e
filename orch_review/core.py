"""The library front door: review a repository from Python exactly as the CLI does.

    from orch_review import review, ReviewOptions
    report = review("path/to/repo", ReviewOptions(base="origin/main"))
    print(report.exit_code("high"), len(report.confirmed))

The CLI, the pre-commit hook and ``orch-review github`` are thin callers of
:func:`prepare` and :func:`run`. Nothing here imports click or rich.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orch_review.environment import SECRET_VARIABLES
from orch_review.errors import OutputError, UsageError
from orch_review.events import EventSink

if TYPE_CHECKING:
    import git

    from orch_review.config.choices import FilterMode
    from orch_review.config.learnings import Learning
    from orch_review.config.settings import Config
    from orch_review.cost import Estimate
    from orch_review.engine.memory.journal import JournalLike
    from orch_review.findings.records import Finding
    from orch_review.findings.report import Report
    from orch_review.reporters.files import ReportFile
    from orch_review.scope.resolve import Scope, ScopeRequest
    from orch_review.scope.stated_intent import Intent


def has_credentials(env: Mapping[str, str], provider: str | None = None) -> bool:
    """True when a request to ``provider`` could be authenticated (or a custom server is
    configured); with no provider, when credentials for any provider are in sight."""
    from orch_review.engine.api.providers import has_credentials as provider_has_credentials

    return provider_has_credentials(env, provider)


def take_environment(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """For a program's own start (the CLI's commands): a copy of the environment for the
    review to read, the secrets then removed from ``environ`` (the process environment by
    default). A second guard: each child is also given its environment explicitly, without
    them. The library's functions never call this: they leave their caller's environment
    as it is."""
    source = os.environ if environ is None else environ
    env = dict(source)
    for name in SECRET_VARIABLES:
        source.pop(name, None)
    return env


@dataclass(frozen=True, slots=True)
class ReviewOptions:
    """What to review and how: the library's form of the review command's flags.

    With no scope option, the change on the current branch is reviewed (committed and
    uncommitted, against the merge-base with the default branch). ``paths`` are git
    pathspecs relative to the repository's top. ``settings`` overrides configuration keys by
    their :class:`~orch_review.config.settings.Config` field names (``model``,
    ``max_agents``, ``max_cost_usd``, ...), over ``[tool.orch-review]`` and the environment.
    """

    staged: bool = False
    base: str | None = None
    head: str | None = None
    all_files: bool = False
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    settings: Mapping[str, object] = field(default_factory=dict)
    filter_mode: FilterMode | None = None
    baseline: Path | None = None
    json_file: Path | None = None
    sarif_file: Path | None = None
    shard: str | None = None  # "K/N": review a deterministic, size-balanced 1/N of the files
    config_file: Path | None = None  # read instead of the repository's configuration file
    # What the change says it does (a pull request's text, --intent): the intent concern.
    intent: Intent | None = None
    # Ask for a walkthrough of the change (for a summary comment), unless `walkthrough` is off.
    walkthrough: bool = False

    def __post_init__(self) -> None:
        # Callers pass lists and strings; keep the record immutable and typed.
        for name in ("paths", "exclude"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in ("baseline", "json_file", "sarif_file", "config_file"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, Path(value))

    def scope_request(self, pathspecs: tuple[str, ...]) -> ScopeRequest:
        """The scope these options ask for; raises :class:`UsageError` on contradictions."""
        from orch_review.scope.resolve import ScopeRequest

        chosen = [
            flag
            for flag, on in (
                ("--staged", self.staged),
                ("--base", self.base),
                ("--all", self.all_files),
            )
            if on
        ]
        if len(chosen) > 1:
            raise UsageError(f"{' and '.join(chosen)} cannot be combined: choose one scope.")
        if self.head is not None and self.base is None:
            raise UsageError("--head needs --base (the branch the change will merge into).")
        if self.staged:
            return ScopeRequest("staged", pathspecs=pathspecs)
        if self.all_files:
            return ScopeRequest("all", pathspecs=pathspecs)
        if self.base is not None:
            if self.head is not None:
                return ScopeRequest("base", base=self.base, head=self.head, pathspecs=pathspecs)
            return ScopeRequest("change", base=self.base, head=self.head, pathspecs=pathspecs)
        return ScopeRequest("change", pathspecs=pathspecs)

    @property
    def report_files(self) -> list[ReportFile]:
        """The report files asked for, as (format, path)."""
        from orch_review.reporters.files import report_files

        return report_files(self.json_file, self.sarif_file)


@dataclass(frozen=True, slots=True)
class PreparedReview:
    """A review ready to run: its configuration and resolved scope, no API call made yet."""

    repo: git.Repo
    config: Config
    scope: Scope
    env: Mapping[str, str]
    options: ReviewOptions
    learnings: tuple[Learning, ...] = ()  # .orch-review/learnings.toml, read like the config
    head: str | None = None  # HEAD when the scope was resolved


def prepare(
    repo: str | Path,
    options: ReviewOptions,
    env: Mapping[str, str],
    *,
    cwd: Path | None = None,
    warn: Callable[[str], None] | None = None,
) -> PreparedReview:
    """Open the repository at ``repo``, read its configuration (from the base revision with
    ``--base``) and resolve the scope. ``options.paths`` are relative to ``cwd`` when given
    (as typed on a command line), else to the repository's top. Raises
    :class:`~orch_review.scope.resolve.NothingToReview` when nothing reviewable is in scope,
    and checks the report files can be written. ``warn`` is given each warning about
    configuration that is ignored (a misspelled variable, a nested config file)."""
    from orch_review.config.from_revision import load_learnings, settings_and_scope
    from orch_review.reporters.files import check_writable
    from orch_review.scope.git import open_repo, work_tree
    from orch_review.scope.pathspecs import from_cwd

    opened = open_repo(Path(repo), env)
    top = work_tree(opened)
    pathspecs = from_cwd(options.paths, cwd or top, top)
    request = options.scope_request(pathspecs)
    config, scope = settings_and_scope(
        opened,
        request,
        env,
        options.settings,
        options.exclude,
        config_file=options.config_file,
        warn=warn,
    )
    if options.shard is not None:
        from orch_review.scope.shard import parse_shard, shard_scope

        scope = shard_scope(scope, parse_shard(options.shard))
    learnings = load_learnings(opened, request)
    check_writable(options.report_files)
    return PreparedReview(opened, config, scope, env, options, learnings, head=_head_of(opened))


def _head_of(repo: git.Repo) -> str | None:
    """HEAD's commit, or None before the first commit."""
    from orch_review.scope.git import head_commit

    return head_commit(repo)


def _head_moved(prepared: PreparedReview, report: Report) -> Report:
    """``report`` with a warning when HEAD moved while the review ran (a commit, a checkout,
    a rebase): what it reviewed is the content as it was, not what HEAD is now."""
    import dataclasses

    now = _head_of(prepared.repo)
    if prepared.head is None or now is None or now == prepared.head:
        return report
    warning = (
        f"HEAD moved during the review, from {prepared.head[:12]} to {now[:12]}: this report "
        f"is about the content as it was at {prepared.head[:12]}; run orch-review again to "
        "review what HEAD is now."
    )
    return dataclasses.replace(report, warnings=(*report.warnings, warning))


def estimate(prepared: PreparedReview, *, guidance: bool = True) -> Estimate:
    """What the prepared review is expected to cost, with no API call (``orch_review/cost.py``).
    ``guidance``: look up the guidance every agent carries (False: there is none)."""
    from orch_review.cost import estimate_cost
    from orch_review.engine.review import critic_wanted, load_review_guidance
    from orch_review.scope import git as gitops

    config, scope = prepared.config, prepared.scope
    # Every agent's prompt carries the guidance: read as the review will read it (from the
    # base revision with --base, else what is under review; HEAD for the working tree).
    revision = scope.config_revision or scope.head_commit or gitops.head_commit(prepared.repo)
    chars = 0
    if guidance and revision is not None:
        loaded = load_review_guidance(config, prepared.repo, scope, revision, prepared.learnings)
        chars = len(loaded.for_main()[0])
    return estimate_cost(scope, config, critic=critic_wanted(config, scope), guidance_chars=chars)


def run(
    prepared: PreparedReview,
    *,
    events: EventSink | None = None,
    notices: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> Report:
    """Run the prepared review end to end, write the report files asked for, and return the
    report (partial failure is in the report, not raised). Setting ``cancel`` stops it as
    Ctrl-C does: no new agent starts, running ones stop before their next request, what
    finished stays in the journal, and KeyboardInterrupt is raised in the caller."""
    from orch_review.engine.agents.session_setup import open_journal
    from orch_review.engine.review import ReportOptions, review_scope
    from orch_review.findings.provenance import sign_patches
    from orch_review.findings.triage import load_baseline
    from orch_review.reporters.files import check_writable, write_reports
    from orch_review.trust import report_signer

    options = prepared.options
    check_writable(options.report_files)  # again: the folder may have gone since prepare()
    report_options = ReportOptions(
        filter_mode=options.filter_mode or prepared.config.filter_mode,
        baseline=load_baseline(options.baseline) if options.baseline else frozenset(),
        learnings=prepared.learnings,
        intent=options.intent,
        walkthrough=options.walkthrough and prepared.config.walkthrough,
    )
    scope = prepared.scope
    # Opened once, its key derived once: the review's session stores its agents' results in
    # it, and the report is kept in it afterwards. On a failure the session closes it (or
    # leaves it open for an agent that may still store a paid-for result).
    journal = open_journal(
        prepared.config, scope.git_dir, prepared.env, notices, checkout=scope.root
    )
    report = review_scope(
        prepared.config,
        scope,
        prepared.env,
        events=events,
        options=report_options,
        notices=notices,
        cancel=cancel,
        journal=journal,
    )
    with journal:
        report = sign_patches(report, report_signer(prepared.env))  # for `orch-review merge`
        report = _with_estimate(report, prepared)
        report = _head_moved(prepared, report)
        kept = _keep_in(journal, prepared, report)  # paid for: never lost, whatever happens next
    try:
        written = write_reports(report, options.report_files)
    except OutputError as exc:
        from orch_review.engine.memory.last_report import not_written, rescue_report
        from orch_review.reporters.files import ReportNotWritten

        rescued = rescue_report(report, prepared.env)
        raise ReportNotWritten(not_written(exc, rescued, kept), report) from None
    remember_reports(prepared.repo, written)
    return report


def write_empty_reports(options: ReviewOptions, reason: str) -> None:
    """Write each report file ``options`` asks for as the report of an empty review (nothing
    in scope, ``reason`` says why): a CI step that reads them finds valid, empty reports."""
    from orch_review.findings.report import empty_report
    from orch_review.reporters.files import check_writable, write_reports

    if not options.report_files:
        return
    check_writable(options.report_files)
    written = write_reports(empty_report(reason), options.report_files)
    remember_reports(None, written)


def unshown(prepared: PreparedReview, report: Report, error: OutputError) -> OutputError:
    """The error to raise when a finished review's report could not be shown (``error``):
    the report kept in the journal and saved under the cache directory, and it says where."""
    from orch_review.engine.memory.last_report import not_written, rescue_report
    from orch_review.reporters.files import ReportNotWritten

    kept = _keep_report(prepared, report)
    rescued = rescue_report(report, prepared.env)
    return ReportNotWritten(not_written(error, rescued, kept), report)


def _with_estimate(report: Report, prepared: PreparedReview) -> Report:
    import dataclasses

    # The review said whether it read guidance files: without any, no need to look again.
    cost = estimate(prepared, guidance=bool(report.guidance_files))
    return dataclasses.replace(report, estimate=cost.range)


def _keep_in(journal: JournalLike, prepared: PreparedReview, report: Report) -> bool:
    """Keep ``report`` in the open ``journal`` as its working tree's last one."""
    from orch_review.engine.memory.last_report import keep_report
    from orch_review.scope.git import work_tree

    return keep_report(journal, report, work_tree(prepared.repo))


def _keep_report(prepared: PreparedReview, report: Report) -> bool:
    """Keep ``report`` in the journal as its working tree's last one."""
    from orch_review.engine.agents.session_setup import open_journal
    from orch_review.engine.memory.journal import JournalError
    from orch_review.engine.memory.last_report import keep_report
    from orch_review.scope.git import git_dir, work_tree

    try:
        # Quiet: the review has already said what is wrong with its journal, if anything.
        repo = prepared.repo
        opened = open_journal(
            prepared.config, git_dir(repo), prepared.env, quiet=True, checkout=work_tree(repo)
        )
        with opened as journal:
            return keep_report(journal, report, work_tree(repo))
    except JournalError:
        return False  # the review already said why the journal is unusable


def remember_reports(repo: git.Repo | None, written: Sequence[tuple[Path, bytes]]) -> None:
    """Record the report files just written inside ``repo``'s working tree (the repository
    around the current directory when None), so that no later review pays to review them."""
    from orch_review.errors import GitError
    from orch_review.scope.git import git_dir, open_repo, work_tree
    from orch_review.scope.own_reports import remember

    if not written:
        return
    if repo is None:
        try:
            repo = open_repo(Path.cwd())
        except GitError:
            return  # not in a repository: nothing will review these files
    remember(work_tree(repo), git_dir(repo), written)


def review(
    repo: str | Path = ".",
    options: ReviewOptions | None = None,
    *,
    env: Mapping[str, str] | None = None,
    events: EventSink | None = None,
    notices: Callable[[str], None] | None = None,
) -> Report:
    """Review the repository at ``repo`` and return the :class:`Report`.

    ``env`` defaults to a copy of the process environment, which is left as it is: call it
    as often as you like. No child process started during the review (git, an agent's
    shell) gets the API keys or tokens; each is given its environment explicitly. Raises an
    :class:`~orch_review.errors.OrchReviewError` for what the caller must fix (bad options,
    no credentials the API accepts, not a repository), and ``NothingToReview`` (exit code 0)
    when the scope has no reviewable file.
    """
    environment = dict(os.environ if env is None else env)
    prepared = prepare(repo, options or ReviewOptions(), environment)
    return run(prepared, events=events, notices=notices)


def merge(
    reports: Sequence[Path],
    *,
    json_file: Path | None = None,
    sarif_file: Path | None = None,
    asked_by: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Report:
    """One report from the JSON reports of sharded reviews, its report files written (checked
    first). A missing or unreadable shard makes it incomplete; ConfigError, naming
    ``asked_by`` (an option, such as ``--from-reports``) if given, when none can be read. A
    verified patch is trusted only when signed with the key of ``env``'s credential (the
    process environment by default), as the shard jobs sign them; others are shown
    unverified."""
    from orch_review.errors import ConfigError
    from orch_review.findings.merge import merge_files
    from orch_review.findings.provenance import sign_patches
    from orch_review.reporters.files import check_writable, report_files, write_reports
    from orch_review.trust import report_signer

    files = report_files(json_file, sarif_file)
    check_writable(files)
    signer = report_signer(dict(os.environ if env is None else env))
    try:
        report = merge_files(list(reports), signer)
    except ValueError as exc:
        raise ConfigError(f"{asked_by}: {exc}" if asked_by else str(exc)) from None
    report = sign_patches(report, signer)  # a merged report can be merged again
    remember_reports(None, write_reports(report, files))
    return report


def cwd_prefix(prepared: PreparedReview, cwd: Path) -> str:
    """``cwd`` relative to the repository's top, where terminal output shows paths from
    ("" at the top, or when ``cwd`` is outside the work tree, as with GIT_WORK_TREE)."""
    from orch_review.scope.git import work_tree

    try:
        return cwd.resolve().relative_to(work_tree(prepared.repo).resolve()).as_posix()
    except ValueError:
        return ""


def review_conversation(prepared: PreparedReview) -> dict[str, Any] | None:
    """The conversation the review of ``prepared`` left in its journal, JSON-ready, for a
    follow-up elsewhere (a pull request comment's run); None when the journal holds none
    about this content (journal off, or the main agent did not finish)."""
    from orch_review.engine.agents.session_setup import open_journal
    from orch_review.engine.memory.conversation import NoConversation, load_conversation
    from orch_review.scope.git import git_dir, work_tree

    repo, env = prepared.repo, prepared.env
    with open_journal(prepared.config, git_dir(repo), env, checkout=work_tree(repo)) as journal:
        try:
            conversation = load_conversation(journal, work_tree(prepared.repo))
        except NoConversation:
            return None
    head = prepared.scope.head_commit
    if head is None or conversation.snapshot_commit != head:
        return None  # a working copy's content, or an earlier review's conversation
    data = conversation.to_json()
    data["snapshot_objects"] = ""  # the head commit is in the repository: no pack needed
    return data


@dataclass(frozen=True, slots=True)
class FollowUpAnswer:
    """A follow-up answer, and how it was produced."""

    text: str
    continued: bool  # the review's conversation was continued; else a fresh session
    orchestrated: bool
    notes: tuple[str, ...] = ()


def answer_follow_up(
    repo: git.Repo,
    config: Config,
    env: Mapping[str, str],
    question: str,
    *,
    commit: str,
    scope: str,
    conversation: Mapping[str, Any] | None = None,
    orchestrate: bool = False,
    events: EventSink | None = None,
) -> FollowUpAnswer:
    """Answer ``question`` about the content of ``commit``, continuing ``conversation`` (the
    JSON form :func:`review_conversation` gives) when it is usable and about that commit,
    else in a fresh session. Nothing is stored. The model's commands run only in a working
    shell sandbox (bubblewrap or Landlock) unless ``config.sandbox`` is ``off``: without one
    (or with ``tools``) the model reads the content through the read-only tools."""
    import binascii
    import contextlib
    import dataclasses

    from orch_review.engine.agents.orchestration_mode import ModeState
    from orch_review.engine.memory.conversation import Conversation
    from orch_review.engine.memory.followup import FollowUp
    from orch_review.engine.shell.confinement import SandboxUnavailable
    from orch_review.errors import RequestRejected

    notes: list[str] = []
    continued: Conversation | None = None
    if conversation is not None:
        try:
            continued = Conversation.from_json(dict(conversation))
        except (KeyError, TypeError, ValueError, AttributeError, binascii.Error):
            notes.append("the review's conversation could not be read")
        else:
            if continued.snapshot_commit != commit:
                notes.append("the review's conversation is about other content")
                continued = None
    fresh = Conversation([], ModeState(), commit, scope)
    start = dataclasses.replace(continued or fresh, snapshot_objects=b"")  # only what git fetched
    config = dataclasses.replace(config, journal=False)
    # `auto` never opens an unsandboxed shell; an explicit shell mode that cannot run here
    # (and `tools`) reads the content through the read-only tools instead.

    def ask(stack: contextlib.ExitStack, begin: Conversation) -> tuple[str, bool]:
        try:
            follow_up = stack.enter_context(
                FollowUp(config, repo, env, events=events, conversation=begin)
            )
        except SandboxUnavailable:
            no_shell = dataclasses.replace(config, sandbox="tools")
            follow_up = stack.enter_context(
                FollowUp(no_shell, repo, env, events=events, conversation=begin)
            )
        text = follow_up.ask(question, orchestrate=orchestrate).text
        return text, follow_up.has_shell

    with contextlib.ExitStack() as stack:
        try:
            text, shell = ask(stack, start)
        except RequestRejected:
            if continued is None:
                raise
            # A stored conversation the API will not take (too long for the model's context,
            # a model retired since): the question still deserves an answer.
            notes.append("the API refused the review's conversation, so the answer starts afresh")
            continued = None
            text, shell = ask(stack, fresh)
    if not shell:
        notes.append("no shell ran here: the content was read through read-only tools")
    return FollowUpAnswer(text, continued is not None, orchestrate, tuple(notes))


def learn(
    repo: str | Path,
    *,
    reason: str,
    fingerprint: str | None = None,
    glob: str | None = None,
    category: str | None = None,
    who: str | None = None,
    today: date | None = None,
    report: Path | None = None,
) -> Path:
    """Add a learning to ``.orch-review/learnings.toml`` of the repository at ``repo`` and
    return the file's path. ``who`` defaults to git's ``user.name <user.email>``; ``report``,
    a JSON report holding the finding, names its place and claim beside the learning.
    ConfigError for an invalid learning or a broken file, UsageError when nobody can be
    named or the report does not hold the finding."""
    from dataclasses import replace

    from orch_review.config import learnings
    from orch_review.scope.git import open_repo, user_identity, work_tree

    opened = open_repo(Path(repo))
    who = who or user_identity(opened)
    if not who:
        raise UsageError(
            "who dismissed it? Set `git config user.name` (and user.email), or pass --who."
        )
    learning = learnings.new_learning(
        reason=reason,
        who=who,
        today=today or date.today(),
        fingerprint=fingerprint,
        glob=glob,
        category=category,
    )
    if report is not None:
        if fingerprint is None:
            raise UsageError("--report names a finding: it goes with --fingerprint.")
        found = _finding_in_report(report, fingerprint)
        learning = replace(learning, location=found.location, claim=found.claim)
    return learnings.append(work_tree(opened), learning)


def _finding_in_report(path: Path, fingerprint: str) -> Finding:
    """The finding with ``fingerprint`` in the JSON report at ``path``; UsageError if none."""
    import json

    from orch_review.findings.codec import finding_from_json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        found = [finding_from_json(f) for f in data["findings"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"--report {path}: not a readable orch-review JSON report ({exc}); pass a file "
            "written by `orch-review --json`."
        ) from None
    for finding in found:
        if finding.fingerprint == fingerprint:
            return finding
    raise UsageError(
        f"--report {path} has no finding with fingerprint {fingerprint}: check both, or leave "
        "--report out."
    )
