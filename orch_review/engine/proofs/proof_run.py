"""Running a proof: orch-review, not the model, runs the prover's test in the sandbox.

The test is written into a private copy of the reviewed head (from git objects: the user's
working tree is never read or written) and run there with a time limit and an output cap; then
again in a copy of head with the finding's verified patch applied, or else in a copy of the
base revision when the file existed there. A finding is proven only when the first run is a
test failure (:meth:`.runners.Runner.failed_by_a_test`) and the second a pass.

The runs go through the :class:`~.sandbox.Sandbox` only, and only when it gives a sandboxed
shell: the test is code a model wrote after reading content anyone may have written, so
``--sandbox off`` (an unconfined shell) runs no proof, and neither does ``tools`` (no shell).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.engine.proofs.runners import PROBES, Runner, missing_module, runner_from_probe
from orch_review.engine.shell.bash import BashSession
from orch_review.engine.shell.sandbox import Sandbox
from orch_review.engine.shell.scratch_tree import (
    ScratchPathError,
    export_tree,
    replace_file,
    write_file,
)
from orch_review.findings.patches import PatchError, apply, decode
from orch_review.findings.proof import Against, Proof, ProofRun, not_proven
from orch_review.findings.records import Finding
from orch_review.scope.git.blobs import blob

if TYPE_CHECKING:
    import git

PROOF_TIMEOUT = 120.0  # seconds one run of a test may take
OUTPUT_CAP = 4000  # characters of a run's output kept (its end holds the runner's summary)
# Python must not try to write bytecode next to the read-only copy.
_PRELUDE = "export PYTHONDONTWRITEBYTECODE=1\n"
# The sandboxes that confine a shell; "none" (--sandbox off) and "tools" run no proof.
CONFINING = frozenset({"bubblewrap", "landlock"})


@dataclass(frozen=True, slots=True)
class ProverReport:
    """What a prover agent answered: a test that should fail because of the bug."""

    test_path: str
    test_code: str
    command: str = ""  # what the model said runs it; orch-review runs the runner's own


def no_proof_reason(sandbox: Sandbox) -> str | None:
    """Why no proof may run under ``sandbox``; None when one may."""
    if sandbox.kind in CONFINING and sandbox.has_shell:
        return None
    if sandbox.kind == "tools":
        return "agents get no shell here (sandbox mode `tools`), so no test may run"
    return "no sandboxed shell (--sandbox off): a test a model wrote is never run unconfined"


@dataclass(frozen=True)
class ProofRunner:
    """Runs proofs for one review: the repository and revisions, the sandbox, the limits."""

    repo: git.Repo
    head: str
    base: str | None
    sandbox: Sandbox
    env: Mapping[str, str]
    timeout: float = PROOF_TIMEOUT
    output_cap: int = OUTPUT_CAP

    def probe(self, language: str) -> Runner | None:
        """The runner the sandboxed shells have for ``language`` (Python: pytest, else
        unittest; JavaScript: node's own), or None."""
        with tempdirs.directory("proof") as scratch:
            scratch.chmod(0o755)
            run, _, _ = self._run(scratch, PROBES[language], timeout=30.0)
        return runner_from_probe(run.output) if run.exit_code == 0 else None

    def prove(self, finding: Finding, report: ProverReport, runner: Runner) -> Proof:
        """Run ``report``'s test on head and with the fix; proven only as the module says."""
        command = runner.command(report.test_path)
        shown = {"test_path": report.test_path, "test_code": report.test_code}

        def failed(reason: str, head: ProofRun | None = None, **more: object) -> Proof:
            return Proof("not-proven", reason, **shown, command=command, head=head, **more)  # type: ignore[arg-type]

        if not report.test_path.endswith(runner.test_suffixes):
            return failed(f"the test is not a file {runner.name} runs")
        data = report.test_code.encode("utf-8", "surrogateescape")
        try:
            head, why = self._phase(self.head, None, report.test_path, data, command)
        except ScratchPathError as exc:
            return failed(f"the test cannot be written there: {exc}")
        if why is not None:
            return failed(f"on head, {why}", head)
        if runner.passed(head):
            return failed("the test passes on head: it does not show the bug", head)
        if not runner.failed_by_a_test(head):
            return failed(_not_a_test_failure(head), head)
        against, patch = self._comparison(finding)
        if against is None:
            return failed(
                "there is no verified patch, and the file is new since the base: nothing "
                "shows that the test passes without the bug",
                head,
            )
        try:
            fixed, why = self._phase(
                self.head if against == "patch" else self.base or "",
                patch,
                report.test_path,
                data,
                command,
            )
        except ScratchPathError as exc:
            return failed(f"the test cannot be written there: {exc}", head)
        where = "with the fix" if against == "patch" else "on the base"
        if why is not None:
            return failed(f"{where}, {why}", head, fixed=fixed, against=against)
        if not runner.passed(fixed):
            reason = f"the test does not pass {where} (exit {_status(fixed)})"
            return failed(reason, head, fixed=fixed, against=against)
        reason = f"fails on head with a test failure and passes {where}"
        return Proof(
            "proven", reason, **shown, command=command, head=head, fixed=fixed, against=against
        )

    def _comparison(self, finding: Finding) -> tuple[Against | None, tuple[str, bytes] | None]:
        """What the second run compares with: head with the verified patch, or the base."""
        patch = finding.verified_patch
        if patch is not None:
            data = blob(self.repo, self.head, finding.path)
            if data is not None:
                try:
                    text = apply(decode(data), finding.start_line, finding.end_line, patch)
                    return "patch", (finding.path, text.encode("utf-8", "surrogateescape"))
                except PatchError:
                    pass
        if self.base is not None and blob(self.repo, self.base, finding.path) is not None:
            return "base", None
        return None, None

    def _phase(
        self,
        commit: str,
        patch: tuple[str, bytes] | None,
        test_path: str,
        test: bytes,
        command: str,
    ) -> tuple[ProofRun, str | None]:
        """One run of the test in a fresh copy of ``commit`` (with ``patch`` applied); the
        run, and why it says nothing when it does not (timed out, printed too much)."""
        with tempdirs.directory("proof") as scratch:
            # A sandbox that drops to another uid without a mount namespace (Landlock, as
            # root) must walk to the tree by its path.
            scratch.chmod(0o711)
            tree = scratch / "tree"
            tree.mkdir()
            export_tree(self.repo, commit, tree)
            if patch is not None:
                replace_file(tree, *patch)
            write_file(tree, test_path, test)
            tree.chmod(0o555)  # the test may not add files next to itself
            run, timed_out, overflowed = self._run(tree, _PRELUDE + command, self.timeout)
        if timed_out:
            return run, f"the test did not finish within the {self.timeout:g} s time limit"
        if overflowed:
            return run, f"the test printed more than the {self.output_cap:,}-character cap"
        return run, None

    def _run(self, cwd: Path, command: str, timeout: float) -> tuple[ProofRun, bool, bool]:
        with BashSession(
            cwd, env=self.env, timeout=timeout, output_cap=self.output_cap, sandbox=self.sandbox
        ) as shell:
            result = shell.run(command)
        return ProofRun(result.exit_code, result.output), result.timed_out, result.overflowed


def _status(run: ProofRun) -> str:
    return "stopped" if run.exit_code is None else str(run.exit_code)


def _not_a_test_failure(run: ProofRun) -> str:
    module = missing_module(run.output)
    if module is not None:
        return (
            f"the project's dependencies are not installed where the test runs (no module "
            f"named {module!r}): install them before the review"
        )
    return (
        f"the test did not fail with a test failure on head (exit {_status(run)}): a "
        "collection, import, syntax or usage error proves nothing"
    )


def not_run(reason: str) -> Proof:
    """A finding whose proof did not run, and why."""
    return not_proven(reason)
