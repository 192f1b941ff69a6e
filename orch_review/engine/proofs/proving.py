"""The prover stage: confirmed findings at or above the ``prove`` level, each shown (or not)
by a test that a prover agent writes and orch-review runs (:mod:`.proof_run`).

A proof never delays the report for long: a prover starts as soon as a verifier confirms a
finding that will be reported (:meth:`Provers.offer`), side by side with the rest of the
review, and once verification has ended the report waits at most ``prove-timeout`` seconds
for the proofs still running (:meth:`Provers.prove_all`). A proof not finished by then, one
a cap stopped, or one still running when the review is interrupted leaves its finding as
verified by reading, marked ``not-proven`` with the reason; the report carries every
verified finding all the same. A prover's test is journaled under the finding and the
content under review (what the prover is shown), so a re-review does not pay for it again;
the test is run again, against the fix the report has now.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from orch_review import waiting
from orch_review.config.choices import ProveLevel
from orch_review.engine.agents.gated_client import gated_session
from orch_review.engine.agents.review_session import Session
from orch_review.engine.agents.tools import TOOLS_VERSION
from orch_review.engine.api.scheduler import VERIFY
from orch_review.engine.memory.journal import journal_key
from orch_review.engine.proofs.proof_run import ProofRunner, ProverReport, no_proof_reason
from orch_review.engine.proofs.prover import run_prover
from orch_review.engine.proofs.runners import Runner
from orch_review.errors import OrchReviewError
from orch_review.findings.proof import Proof, not_proven
from orch_review.findings.records import Finding, Severity, Status
from orch_review.scope.git import tree_of
from orch_review.scope.languages import language_of
from orch_review.wording import counted

if TYPE_CHECKING:
    import git

# Part of every prover's journal key; raise it when a stored test would mean something else.
# 2: keyed by what the prover is shown (severity and category too), not by the fix, which
# it never sees: a prover starts before the fix is checked.
PROOF_FORMAT = 2
NO_LANGUAGE = "no runner: proofs know Python, JavaScript, TypeScript and Go files only"
NO_RUNNER = {
    "python": "no runner: the sandboxed shells' python3 has neither pytest nor unittest",
    "javascript": "no runner: the sandboxed shells have no node with its test runner",
    "typescript": "no runner: the project's node_modules has neither vitest nor jest",
    "go": "no runner: the sandboxed shells find no go on their PATH",
    "": NO_LANGUAGE,
}
INTERRUPTED = "interrupted: the review was stopped before this proof finished"


def wanted(finding: Finding, level: ProveLevel) -> bool:
    """Whether ``finding`` is at or above ``level`` and confirmed for the report."""
    if level == "off" or finding.status is not Status.CONFIRMED:
        return False
    return level == "all" or finding.severity is Severity.HIGH


def _identity(finding: Finding) -> tuple[object, ...]:
    """What a prover is shown of a finding: one prover per identity in a review."""
    return (
        finding.path,
        finding.start_line,
        finding.end_line,
        finding.severity.value,
        finding.category,
        finding.claim,
        finding.evidence,
    )


@dataclass(frozen=True, slots=True)
class _Written:
    """What a prover left: a test to run, or the proof that was not made (``quiet``: say
    nothing of it, as when nobody asked for proofs and no runner is there)."""

    report: ProverReport | None = None
    runner: Runner | None = None
    proof: Proof | None = None
    quiet: bool = False


class Provers:
    """The prover stage of one review: provers started early, and the wait for them."""

    def __init__(
        self,
        session: Session,
        repo: git.Repo,
        head: str,
        base: str | None,
        env: Mapping[str, str],
        level: ProveLevel | None,  # None: "high" where a runner is found, else off
        *,
        timeout: float,
        notices: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._session = session
        self._repo = repo
        self._head = head
        self._base = base
        self._level = level
        self._timeout = timeout
        self._notices = notices
        self._clock = clock
        self._refusal = no_proof_reason(session.shell_sandbox)
        config = session.config
        # Each run of a test has the limits of one command of an agent.
        self._runner = ProofRunner(
            repo,
            head,
            base,
            session.shell_sandbox,
            env,
            timeout=config.bash_timeout,
            output_cap=config.tool_output_cap,
        )
        # Under a cap, provers wait for the end of verification: money a prover spends early
        # could leave a file without the concern or verifier that would have covered it.
        self._early = (
            config.max_agents is None
            and config.max_total_tokens is None
            and config.max_cost_usd is None
        )
        self._lock = threading.Lock()
        self._probing = threading.Lock()
        self._runners: dict[str, Runner | None] = {}
        self._started: dict[tuple[object, ...], Future[_Written]] = {}

    @property
    def level(self) -> ProveLevel:
        """The level in effect."""
        return self._level or "high"

    def warm(self, paths: Sequence[str]) -> None:
        """Find, in the background, the runners of the languages of ``paths`` (the files
        under review), so that no prover waits for that when it starts."""
        if self._refusal is not None:
            return
        languages = {language_of(p) for p in paths}
        for language in sorted(filter(None, languages)):
            self._session.pool.submit(VERIFY, partial(self._runner_for, language))

    def offer(self, finding: Finding) -> None:
        """A verifier confirmed ``finding`` (triaged alone, as the report will triage it):
        start its prover now if it is to be proven and no cap asks to wait."""
        if self._early and self._refusal is None and self._due(finding):
            self._start(finding)

    def _due(self, finding: Finding) -> bool:
        return wanted(finding, self.level) and language_of(finding.path) is not None

    def _start(self, finding: Finding) -> Future[_Written]:
        with self._lock:
            key = _identity(finding)
            started = self._started.get(key)
            if started is None:
                order = len(self._started) + 1
                started = self._session.pool.submit(
                    VERIFY, partial(self._write_test, finding, order)
                )
                self._started[key] = started
            return started

    def prove_all(self, findings: Sequence[Finding], warnings: list[str]) -> list[Finding]:
        """``findings`` (triaged, fixes checked), those to prove each with its
        :class:`Proof`: waited for at most ``timeout`` seconds from now, or until the review
        is interrupted, after which the proofs not finished are not-proven with the reason.
        The first Ctrl-C or signal here stops the provers and returns; a second one, later,
        is the caller's."""
        level = self.level
        due = [n for n, f in enumerate(findings) if self._due(f)]
        out = list(findings)
        if self._level is not None:  # asked for: say why what cannot be proven is not
            for n, finding in enumerate(findings):
                if wanted(finding, level) and n not in due:
                    out[n] = _with(finding, not_proven(NO_LANGUAGE))
        if not due:
            return out
        if self._refusal is not None:
            if self._level is not None:
                warnings.append(f"No finding was proven: {self._refusal}.")
                for n in due:
                    out[n] = _with(out[n], not_proven(self._refusal))
            return out
        proofs = {n: self._then_run(self._start(out[n]), out[n]) for n in due}
        stopped = self._wait(list(proofs.values()))
        late = 0
        for n, future in proofs.items():
            if future.done() and not future.cancelled():
                proof = future.result()
            elif stopped:
                proof = not_proven(INTERRUPTED)
            else:
                late += 1
                proof = not_proven(
                    f"time limit: not finished {self._timeout:g} s after verification ended "
                    "(prove-timeout)"
                )
            if proof is not None:
                out[n] = _with(out[n], proof)
        if stopped:
            warnings.append(
                "The review was interrupted during the proofs: every verified finding is "
                "reported, those whose proof had not finished are not-proven (interrupted)."
            )
        elif late:
            warnings.append(
                f"{counted(late, 'proof')} did not finish within prove-timeout "
                f"({self._timeout:g} s after verification ended); "
                f"{'its finding is' if late == 1 else 'their findings are'} reported unproven."
            )
            self._stop()
        return out

    def _wait(self, proofs: list[Future[Proof | None]]) -> bool:
        """Wait for ``proofs`` until the deadline; True when the review was interrupted
        (Ctrl-C, a signal, or the session's cancel) before they were all done."""
        session = self._session
        deadline = self._clock() + self._timeout
        pending = [f for f in proofs if not f.done()]
        try:  # from here, a Ctrl-C stops the proofs, not the review
            if pending and self._notices is not None:
                self._notices(
                    f"orch-review: verification done; waiting up to {self._timeout:g} s for "
                    f"{counted(len(pending), 'proof')} (prove-timeout); Ctrl-C reports the "
                    "findings without them."
                )
            while pending:
                left = deadline - self._clock()
                if left <= 0:
                    return False
                if session.cancel.is_set():  # a caller's cancel (an MCP client's)
                    self._stop()
                    return True
                wait(pending, min(left, waiting.SIGNAL_CHECK_SECONDS), FIRST_COMPLETED)
                pending = [f for f in pending if not f.done()]
        except BaseException as exc:
            if isinstance(exc, (Exception, SystemExit, GeneratorExit)):
                raise
            # Ctrl-C, SIGTERM or SIGHUP: the review itself is complete and verified, so it
            # is reported; only the proofs stop. Another one, from here on, is not caught.
            if self._notices is not None:
                self._notices(
                    "orch-review: interrupted during the proofs: the report is written with "
                    "the proofs not finished marked not-proven (interrupted); press Ctrl-C "
                    "again to stop at once."
                )
            self._stop()
            return True
        return False

    def _stop(self) -> None:
        """Stop the provers at once: none starts, none sends a request, and nothing waits
        for the ones running, not even the end of the session (a reply on its way is not
        waited for: the report comes first)."""
        self._session.cancel.set()
        self._session.pool.cancel_pending()

    def _then_run(self, written: Future[_Written], finding: Finding) -> Future[Proof | None]:
        """The proof of ``finding``: its test, once written, run on the session's pool
        against the report's own ``finding`` (its fix checked by now)."""
        session = self._session
        proof: Future[Proof | None] = Future()

        def settle(ran: Future[Proof]) -> None:
            if ran.cancelled():
                proof.set_result(not_proven(INTERRUPTED))
            elif ran.exception() is not None:
                proof.set_exception(ran.exception())
            else:
                proof.set_result(ran.result())

        def run(done: Future[_Written]) -> None:
            if done.cancelled():
                proof.set_result(not_proven(INTERRUPTED))
                return
            if done.exception() is not None:
                proof.set_exception(done.exception())
                return
            left = done.result()
            if left.report is None or left.runner is None:
                proof.set_result(None if left.quiet else left.proof)
            elif session.cancel.is_set():
                proof.set_result(not_proven(INTERRUPTED))
            else:
                task = partial(self._runner.prove, finding, left.report, left.runner)
                session.pool.submit(VERIFY, task).add_done_callback(settle)

        written.add_done_callback(run)
        return proof

    def _runner_for(self, language: str) -> Runner | None:
        """The runner the sandboxed shells have for ``language``, probed once."""
        with self._probing:
            if language not in self._runners:
                self._runners[language] = self._runner.probe(language)
            return self._runners[language]

    def _write_test(self, finding: Finding, order: int) -> _Written:
        """The prover's test for ``finding`` (from the journal, or a prover's run)."""
        session = self._session
        if session.cancel.is_set():
            return _Written(proof=not_proven(INTERRUPTED))
        language = language_of(finding.path) or ""
        test_runner = self._runner_for(language)
        if test_runner is None:
            reason = NO_RUNNER.get(language, NO_LANGUAGE)
            note = self._runner.note
            reason = f"{reason} ({note})" if note else reason
            return _Written(proof=not_proven(reason), quiet=self._level is None)
        key = self._key(finding, test_runner)
        report = _stored_report(session.journal.get(key))
        agent_id = f"p{order}"
        if report is not None:
            session.budget.reused("prover")
            session.emit(agent_id, "prover", finding.location, "cached")
            return _Written(report, test_runner)
        if not session.budget.start_agent("prover"):
            cap = session.budget.report().cap_reached or "a cap was reached"
            session.emit(agent_id, "prover", finding.location, "skipped", cap)
            return _Written(proof=not_proven(f"cap: {cap}"))
        # A negative place: the ledger keys what an agent spends by (role, place) and
        # counts the places of covered concerns as verified work.
        ranked_session = gated_session(session, "prover", -order)
        try:
            report = run_prover(ranked_session, agent_id, finding, test_runner)
        except OrchReviewError as exc:
            if session.cancel.is_set():
                return _Written(proof=not_proven(INTERRUPTED))
            return _Written(proof=not_proven(f"the prover wrote no test: {exc}"))
        session.journal.put(
            key,
            "prover",
            {
                "test_path": report.test_path,
                "test_code": report.test_code,
                "command": report.command,
            },
        )
        return _Written(report, test_runner)

    def _key(self, finding: Finding, test_runner: Runner) -> str:
        config = self._session.config
        return journal_key(
            "prover",
            TOOLS_VERSION,
            PROOF_FORMAT,
            config.agent_model,
            config.effort,
            config.subagent_max_turns,
            self._session.toolset,
            test_runner.name,
            # The content, not the commit: a working tree's snapshot commit is new each run.
            tree_of(self._repo, self._head),
            None if self._base is None else tree_of(self._repo, self._base),
            *_identity(finding),
        )


def _with(finding: Finding, proof: Proof) -> Finding:
    return dataclasses.replace(finding, proof=proof)


def _stored_report(stored: Mapping[str, object] | None) -> ProverReport | None:
    if stored is None:
        return None
    values = [stored.get(k) for k in ("test_path", "test_code", "command")]
    if not all(isinstance(v, str) for v in values):
        return None
    path, code, command = (str(v) for v in values)
    return ProverReport(path, code, command)
