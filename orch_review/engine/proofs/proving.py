"""The prover stage: confirmed findings at or above the ``prove`` level, each shown (or not)
by a test that a prover agent writes and orch-review runs (:mod:`.proof_run`).

It runs after verification, on findings already triaged for the report: a prover that fails,
is stopped by a cap or an interruption, or runs out of time leaves its finding as verified by
reading, marked ``not-proven`` with the reason. A prover's test is journaled under the
finding, the head and the fix, so a re-review does not pay for it again.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import CancelledError
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

if TYPE_CHECKING:
    import git

# Part of every prover's journal key; raise it when a stored test would mean something else.
PROOF_FORMAT = 1
# Seconds all proofs of one review may take: past it, no new proof starts.
PROOFS_BUDGET = 900.0
NO_LANGUAGE = "no runner: proofs know Python and JavaScript files only"
NO_RUNNER = {
    "python": "no runner: the sandboxed shells' python3 has neither pytest nor unittest",
    "javascript": "no runner: the sandboxed shells have no node with its test runner",
    "": NO_LANGUAGE,
}


def wanted(finding: Finding, level: ProveLevel) -> bool:
    """Whether ``finding`` is at or above ``level`` and confirmed for the report."""
    if level == "off" or finding.status is not Status.CONFIRMED:
        return False
    return level == "all" or finding.severity is Severity.HIGH


@dataclass(frozen=True)
class Provers:
    """The prover stage of one review."""

    session: Session
    repo: git.Repo
    head: str
    base: str | None
    env: Mapping[str, str]
    level: ProveLevel | None  # None: "high" where a runner is found, else off
    budget: float = PROOFS_BUDGET
    clock: Callable[[], float] = time.monotonic

    def prove_all(self, findings: Sequence[Finding], warnings: list[str]) -> list[Finding]:
        """``findings``, those to prove each with its :class:`Proof`."""
        level: ProveLevel = self.level or "high"
        due = [n for n, f in enumerate(findings) if wanted(f, level) and language_of(f.path)]
        unknown = [n for n, f in enumerate(findings) if wanted(f, level) and n not in due]
        out = list(findings)
        if self.level is not None:  # asked for: say why what cannot be proven is not
            for n in unknown:
                out[n] = _with(out[n], not_proven(NO_LANGUAGE))
        if not due:
            return out
        sandbox = self.session.shell_sandbox
        refusal = no_proof_reason(sandbox)
        if refusal is not None:
            if self.level is not None:
                warnings.append(f"No finding was proven: {refusal}.")
                for n in due:
                    out[n] = _with(out[n], not_proven(refusal))
            return out
        config = self.session.config
        # Each run of a test has the limits of one command of an agent.
        runner = ProofRunner(
            self.repo,
            self.head,
            self.base,
            sandbox,
            self.env,
            timeout=config.bash_timeout,
            output_cap=config.tool_output_cap,
        )
        languages = {language_of(findings[n].path) for n in due}
        probed = {lang: runner.probe(lang) for lang in sorted(filter(None, languages))}
        runners = {lang: found for lang, found in probed.items() if found is not None}
        for n in list(due):
            language = language_of(findings[n].path) or ""
            if language not in runners:
                due.remove(n)
                if self.level is not None:
                    out[n] = _with(out[n], not_proven(NO_RUNNER.get(language, NO_LANGUAGE)))
        deadline = self.clock() + self.budget
        # Provers run side by side on the session's pool, as verifiers do: a review waits
        # for the slowest proof, not for their sum.
        queued = {
            n: self.session.pool.submit(
                VERIFY,
                partial(
                    self._prove,
                    out[n],
                    order,
                    runner,
                    runners[language_of(out[n].path) or ""],
                    deadline,
                ),
            )
            for order, n in enumerate(due, 1)
        }
        for n, future in queued.items():
            try:
                proof = waiting.result(future)
            except CancelledError:
                proof = not_proven("not run: the review was interrupted")
            out[n] = _with(out[n], proof)
        return out

    def _prove(
        self,
        finding: Finding,
        order: int,
        runner: ProofRunner,
        test_runner: Runner,
        deadline: float,
    ) -> Proof:
        session = self.session
        if session.cancel.is_set():
            return not_proven("not run: the review was interrupted")
        if self.clock() >= deadline:
            return not_proven(f"not run: proofs used the {self.budget:g} s they have per review")
        key = self._key(finding, test_runner)
        stored = session.journal.get(key)
        report = _stored_report(stored)
        agent_id = f"p{order}"
        if report is None:
            if not session.budget.start_agent("prover"):
                cap = session.budget.report().cap_reached or "a cap was reached"
                session.emit(agent_id, "prover", finding.location, "skipped", cap)
                return not_proven(f"not run: {cap}")
            # A negative place: the budget keys what an agent spends by (role, place) and
            # counts the places of covered concerns as verified work.
            ranked_session = gated_session(session, "prover", -order)
            try:
                report = run_prover(ranked_session, agent_id, finding, test_runner)
            except OrchReviewError as exc:
                return not_proven(f"the prover wrote no test: {exc}")
            session.journal.put(
                key,
                "prover",
                {
                    "test_path": report.test_path,
                    "test_code": report.test_code,
                    "command": report.command,
                },
            )
        else:
            session.budget.reused("prover")
            session.emit(agent_id, "prover", finding.location, "cached")
        return runner.prove(finding, report, test_runner)

    def _key(self, finding: Finding, test_runner: Runner) -> str:
        config = self.session.config
        return journal_key(
            "prover",
            TOOLS_VERSION,
            PROOF_FORMAT,
            config.agent_model,
            config.effort,
            config.subagent_max_turns,
            self.session.toolset,
            test_runner.name,
            # The content, not the commit: a working tree's snapshot commit is new each run.
            tree_of(self.repo, self.head),
            None if self.base is None else tree_of(self.repo, self.base),
            finding.path,
            finding.start_line,
            finding.end_line,
            finding.claim,
            finding.evidence,
            finding.verified_patch,
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
