"""Running the cases: one review per case through the library front door, then matching.

Cases run on a small thread pool (``jobs`` at once); each review keeps its own pool of
agents, given ``max_concurrent // jobs`` slots so the requests in flight stay within the
configured cap. Every review is journaled as usual (in its repository's git folder), so an
interrupted evaluation, rerun, pays only for what never finished.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from orch_review.core import ReviewOptions, prepare, run
from orch_review.engine.api.budget import Usage
from orch_review.engine.memory.journal import Journal, JournalLike, NullJournal
from orch_review.errors import GitError, OrchReviewError
from orch_review.eval.budget import CasesEstimate, TotalBudget, estimate_cases
from orch_review.eval.cases import Case
from orch_review.eval.matching import (
    DEFAULT_JUDGE_MODEL,
    DEFAULT_JUDGE_PROMPT,
    DEFAULT_TOLERANCE,
    CaseMatch,
    Judge,
    match_case,
)
from orch_review.eval.sources import case_worktree, local_repository
from orch_review.findings.records import Finding
from orch_review.findings.report import Report
from orch_review.trust import JOURNAL, signer_for

VERIFICATION_OFF = "verification off"


@dataclass(frozen=True, slots=True)
class EvalSettings:
    """How to run an evaluation; ``settings`` override configuration keys for every review."""

    cache: Path
    base_dir: Path = Path()
    settings: Mapping[str, object] = field(default_factory=dict)
    jobs: int = 2
    tolerance: int = DEFAULT_TOLERANCE
    judge_model: str = DEFAULT_JUDGE_MODEL
    judge_prompt: str = DEFAULT_JUDGE_PROMPT
    journal: bool = True
    max_total_cost_usd: float | None = None  # all the cases' reviews together


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What one case's review reported and how it matched."""

    case: Case
    findings: tuple[Finding, ...] = ()
    match: CaseMatch | None = None
    cost_usd: float = 0.0
    wall_seconds: float = 0.0
    error: str | None = None  # the review could not run, or did not finish
    reused_agents: int = 0  # agents served from the journal: their cost is not counted again


@dataclass(frozen=True, slots=True)
class EvalResult:
    """Every case's result, and what the judge used."""

    results: tuple[CaseResult, ...]
    judge_usage: Usage
    judge_from_journal: int
    wall_seconds: float

    @property
    def scored(self) -> list[CaseResult]:
        """The cases whose review finished and was matched."""
        return [r for r in self.results if r.match is not None]

    @property
    def failed(self) -> list[CaseResult]:
        """The cases whose review failed or was incomplete."""
        return [r for r in self.results if r.error is not None]


def reported_findings(report: Report, verify: bool) -> list[Finding]:
    """What the review reports: confirmed findings, or with verification off the subagents'
    unverified findings that the diff filter and suppressions keep."""
    if verify:
        return report.confirmed
    return [
        f
        for f in report.findings
        if f.verdict is None and f.filtered is None and f.suppressed is None
    ]


def incompleteness(report: Report, verify: bool) -> str | None:
    """Why the review did not finish, ignoring the expected gap of verification off."""
    if report.usage.cap_reached is not None:
        return f"budget reached: {report.usage.cap_reached}"
    reused_all = report.coverage is not None and report.coverage.complete
    if not report.concerns and not reused_all:  # all reused from a complete review: scored
        return "no review workflow ran"
    for concern in report.uncovered:
        if verify or concern.error != VERIFICATION_OFF:
            return f"concern not covered ({concern.status}): {concern.error}"
    return None


def _review_case(
    case: Case, repo: Path, settings: EvalSettings, env: Mapping[str, str], judge: Judge | None
) -> CaseResult:
    try:
        with case_worktree(repo, case.head if case.patch is None else case.base) as work:
            return _review_in(case, work, settings, env, judge)
    except OrchReviewError as exc:
        return CaseResult(case, error=f"{type(exc).__name__}: {exc}")


def _review_in(
    case: Case, repo: Path, settings: EvalSettings, env: Mapping[str, str], judge: Judge | None
) -> CaseResult:
    try:
        head = case.head if case.patch is None else _patched_head(case, repo, env)
        options = ReviewOptions(base=case.base, head=head, settings=settings.settings)
        prepared = prepare(repo, options, env)
        per_review = max(1, prepared.config.max_concurrent // max(1, settings.jobs))
        config = dataclasses.replace(prepared.config, max_concurrent=per_review)
        prepared = dataclasses.replace(prepared, config=config)
        report = run(prepared)
        verify = config.verify
        findings = reported_findings(report, verify)
        usage = report.usage.total
        reused = sum(report.usage.agents_from_journal.values())
        problem = incompleteness(report, verify)
        if problem is not None:
            return CaseResult(
                case, tuple(findings), None, usage.cost_usd, report.wall_seconds, problem, reused
            )
        match = match_case(case.expected, findings, judge, settings.tolerance)
    except OrchReviewError as exc:
        return CaseResult(case, error=f"{type(exc).__name__}: {exc}")
    return CaseResult(
        case, tuple(findings), match, usage.cost_usd, report.wall_seconds, None, reused
    )


def _within_budget(
    budget: TotalBudget,
    index: int,
    case: Case,
    repo: Path,
    settings: EvalSettings,
    env: Mapping[str, str],
    judge: Judge | None,
) -> CaseResult:
    """The case reviewed with its share of the total budget as its cost cap; not started
    when nothing is left."""
    allowed = budget.open(index)
    cost = 0.0
    try:
        if allowed is not None and allowed < 0.01:
            return CaseResult(
                case,
                error=f"not run: the total budget (--max-total-cost-usd {budget.cap:g}) is spent",
            )
        if allowed is not None:
            own = settings.settings.get("max_cost_usd")
            cap = min(allowed, own) if isinstance(own, int | float) else allowed
            settings = dataclasses.replace(
                settings, settings={**settings.settings, "max_cost_usd": cap}
            )
        result = _review_case(case, repo, settings, env, judge)
        cost = result.cost_usd
        return result
    finally:
        budget.close(index, cost)


def _repository(
    case: Case, settings: EvalSettings, notice: Callable[[str], None] | None
) -> Path | GitError:
    """The case's local repository (a URL's mirror), or why git could not provide it (a
    clone URL that cannot be reached, a fetch that fails). A path that is no folder is
    refused for the whole run."""
    try:
        return local_repository(case, settings.base_dir, settings.cache, notice)
    except GitError as exc:
        return exc


def _patched_head(case: Case, repo: Path, env: Mapping[str, str]) -> str:
    """The commit of the case's patch on its base, made without touching the work tree."""
    from orch_review.scope.git import history, open_repo

    assert case.patch is not None
    opened = open_repo(repo, env)
    try:
        return history.commit_patch(opened, case.base, case.patch, f"orch-review eval: {case.id}")
    finally:
        opened.close()


def _judge_journal(settings: EvalSettings, env: Mapping[str, str]) -> JournalLike:
    if not settings.journal or settings.settings.get("journal") is False:
        return NullJournal()
    signer = signer_for(env, "anthropic", JOURNAL)  # the judge's client is the default one
    return Journal(settings.cache / "eval-judge.sqlite3", signer=signer)


def run_cases(
    cases: Sequence[Case],
    settings: EvalSettings,
    env: Mapping[str, str],
    *,
    progress: Callable[[CaseResult], None] | None = None,
    notice: Callable[[str], None] | None = None,
    before: Callable[[CasesEstimate], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> EvalResult:
    """Review every case and match its findings; a case that fails is recorded, not raised.
    ``notice`` hears of each repository cloned (once per URL, and not again while cached);
    ``before`` gets the estimate of every case, before any request (it may raise to stop).
    No case starts beyond ``settings.max_total_cost_usd``; each gets a share of what is left
    as its own cost cap."""
    from orch_review.config.settings import Config
    from orch_review.engine.agents.session_setup import new_client

    started = clock()
    # Repositories first, one at a time: two cases of one URL must not clone it twice at once.
    # A clone or fetch that fails leaves its case not scored, as a missing ref does.
    repos = [_repository(case, settings, notice) for case in cases]
    if before is not None:
        before(estimate_cases(cases, repos, settings.settings, env))
    budget = TotalBudget(settings.max_total_cost_usd, settings.jobs)
    needs_judge = any(not issue.located for case in cases for issue in case.expected)
    with ExitStack() as stack:
        judge = None
        if needs_judge:
            client = new_client(Config(max_output_tokens=8000, effort="medium"), env)
            stack.callback(client.close)
            journal = stack.enter_context(_judge_journal(settings, env))
            judge = Judge(client, journal, model=settings.judge_model, prompt=settings.judge_prompt)

        def one(index: int) -> CaseResult:
            repo = repos[index]
            if isinstance(repo, GitError):
                result = CaseResult(cases[index], error=f"{type(repo).__name__}: {repo}")
            else:
                result = _within_budget(budget, index, cases[index], repo, settings, env, judge)
            if progress is not None:
                progress(result)
            return result

        jobs = max(1, min(settings.jobs, len(cases)))
        pool = ThreadPoolExecutor(jobs, thread_name_prefix="orch-review-eval")
        try:
            results = tuple(pool.map(one, range(len(cases))))
        except BaseException:
            # Ctrl-C: start no further case; the reviews under way finish and are journaled.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    return EvalResult(
        results,
        judge.usage if judge else Usage(),
        judge.from_journal if judge else 0,
        clock() - started,
    )
