"""Running a proof: orch-review, not the model, runs the prover's test in the sandbox.

The test is written into a private copy of the reviewed head (from git objects: the user's
working tree is never written, and of it the shells read only the installed ``node_modules``,
which git does not hold) and run there with a time limit and an output cap; then
again in a copy of head with the finding's verified patch applied, or else in a copy of the
base revision when the file existed there. A finding is proven only when the first run is a
test failure (:meth:`.runners.Runner.failed_by_a_test`) and the second a pass.

The runs go through the :class:`~.sandbox.Sandbox` only, and only when it gives a sandboxed
shell: the test is code a model wrote after reading content anyone may have written, so
``--sandbox off`` (an unconfined shell) runs no proof, and neither does ``tools`` (no shell).
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from orch_review import tempdirs
from orch_review.engine.proofs.runners import (
    PROBES,
    Runner,
    missing_module,
    preferred_runners,
    runner_from_probe,
)
from orch_review.engine.shell.bash import BashSession
from orch_review.engine.shell.bwrap import BubblewrapLauncher
from orch_review.engine.shell.landlock import LandlockLauncher
from orch_review.engine.shell.sandbox import Sandbox
from orch_review.engine.shell.scratch_tree import (
    ScratchPathError,
    export_tree,
    replace_file,
    write_file,
)
from orch_review.engine.shell.toolchains import exposure, go_module_cache
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

    @cached_property
    def node_modules(self) -> Path | None:
        """The project's installed ``node_modules`` (in the working tree, as a job installs
        it), which the copies link to, read-only: git holds no installed package."""
        work_tree = self.repo.working_tree_dir
        if work_tree is None:
            return None
        found = Path(work_tree, "node_modules")
        return Path(os.path.realpath(found)) if found.is_dir() else None

    @cached_property
    def module_cache(self) -> Path | None:
        """The job's Go module cache, which go reads the module's dependencies from."""
        return go_module_cache(self.env)

    @cached_property
    def _also_read(self) -> tuple[Path, ...]:
        return tuple(p for p in (self.node_modules, self.module_cache) if p is not None)

    @cached_property
    def shell_sandbox(self) -> Sandbox:
        """The sandbox, with the project's ``node_modules`` and the Go module cache
        readable as well."""
        launcher = self.sandbox.launcher
        if not self._also_read:
            return self.sandbox
        if not isinstance(launcher, (BubblewrapLauncher, LandlockLauncher)):
            return self.sandbox  # no proof runs in any other (no_proof_reason)
        more = dataclasses.replace(launcher, also_read=self._also_read)
        return dataclasses.replace(self.sandbox, launcher=more)

    @cached_property
    def note(self) -> str:
        """What of the job's tools the shells were not shown, and why ("" when all were)."""
        return exposure(self.env, self._also_read).note

    def environment(self, runner: Runner) -> str:
        """The shell lines run before ``runner``'s command: its own, and for go the job's
        module cache (read-only: go only reads what ``go mod download`` put there)."""
        if runner.name != "go" or self.module_cache is None:
            return runner.environment
        cache = self.module_cache
        if not any(cache.is_relative_to(p) for p in exposure(self.env, self._also_read).paths):
            return runner.environment
        return runner.environment + f"export GOMODCACHE={shlex.quote(str(cache))}\n"

    def probe(self, language: str) -> Runner | None:
        """The runner the sandboxed shells have for ``language`` (Python: pytest, else
        unittest; JavaScript: the project's vitest or jest, else node's own; TypeScript:
        vitest or jest; Go: go), or None."""
        with tempdirs.directory("proof") as scratch:
            scratch.chmod(0o755)
            self._link_node_modules(scratch)
            run, _, _ = self._run(scratch, PROBES[language], timeout=30.0)
        if run.exit_code != 0:
            return None
        return runner_from_probe(
            run.output, preferred_runners(blob(self.repo, self.head, "package.json"))
        )

    def _link_node_modules(self, tree: Path) -> None:
        """Point ``tree/node_modules`` at the project's, unless the tree has its own."""
        if self.node_modules is not None and not os.path.lexists(tree / "node_modules"):
            (tree / "node_modules").symlink_to(self.node_modules, target_is_directory=True)

    def prove(self, finding: Finding, report: ProverReport, runner: Runner) -> Proof:
        """Run ``report``'s test on head and with the fix; proven only as the module says."""
        command = runner.command(report.test_path, report.test_code)
        shown = {"test_path": report.test_path, "test_code": report.test_code}

        def failed(reason: str, head: ProofRun | None = None, **more: object) -> Proof:
            if self.note:
                reason = f"{reason} ({self.note})"
            return Proof("not-proven", reason, **shown, command=command, head=head, **more)  # type: ignore[arg-type]

        if not report.test_path.endswith(runner.test_suffixes):
            return failed(f"the test is not a file {runner.name} runs")
        data = report.test_code.encode("utf-8", "surrogateescape")
        try:
            head, why = self._phase(
                self.head, None, report.test_path, data, self.environment(runner) + command
            )
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
                self.environment(runner) + command,
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
            self._link_node_modules(tree)
            tree.chmod(0o555)  # the test may not add files next to itself
            run, timed_out, overflowed = self._run(tree, _PRELUDE + command, self.timeout)
        if timed_out:
            return run, f"the test did not finish within the {self.timeout:g} s time limit"
        if overflowed:
            return run, f"the test printed more than the {self.output_cap:,}-character cap"
        return run, None

    def _run(self, cwd: Path, command: str, timeout: float) -> tuple[ProofRun, bool, bool]:
        with BashSession(
            cwd,
            env=self.env,
            timeout=timeout,
            output_cap=self.output_cap,
            sandbox=self.shell_sandbox,
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
