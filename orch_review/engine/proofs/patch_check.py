"""Which suggested replacements are verified patches.

A replacement becomes a committable fix only when its finding is confirmed (and reported),
its verifier approved the fix too (``fix_ok``: the reporter may have been misled by the content
it reviewed, so the agent whose job is to refute judges the replacement as well), it applies
to exactly the reviewed lines and changes them, and, when ``suggestion-check`` is configured,
that command passes in the agents' sandbox on a scratch copy with the replacement applied.
Neither the snapshot agents read nor the user's working tree is ever written: the patched file
is a private scratch copy.

Where the check runs:

* bubblewrap: the content under review as agents see it, read-only, with the scratch copy of
  the one file mounted over it, so the command can read the rest of the tree (imports,
  configuration);
* Landlock: a scratch tree of hard links to the content (copies across file systems) with
  the patched file in place of the one file, read-only to the command, which is confined
  exactly as agents' shells are;
* with no shell sandbox (``--sandbox tools``, or ``auto`` where neither can run) or
  ``--sandbox off``: nowhere. The command runs the content's code (``python3 -m doctest``
  executes the module), and unconfined that code could read the environment orch-review's
  processes were started with from ``/proc/*/environ`` (scrubbing ``os.environ`` does not
  change it), the user's files, and the network. A review runs no check there: the fix
  stays prose, and :func:`unconfined_reason` says why. (A checker given another launcher
  directly runs the command in a scratch directory holding only the patched file at its
  path.)
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from orch_review import tempdirs
from orch_review.engine.shell.bash import BashSession, ShellLauncher
from orch_review.engine.shell.bwrap import BubblewrapLauncher
from orch_review.engine.shell.landlock import LandlockLauncher
from orch_review.engine.shell.sandbox import Sandbox
from orch_review.findings.patches import PatchError, apply, decode, original_lines
from orch_review.findings.records import Finding, PatchCheck, Status, Verdict
from orch_review.scope.view import View

CHECK_TIMEOUT = 60.0  # seconds, like one bash command of an agent
# Seconds all checks of one review may take: a model that sends hundreds of replacements must
# not keep the review running for hours. Past it, no new check starts.
CHECKS_BUDGET = 300.0
_OUTPUT_CAP = 2000  # characters of the check's output kept
_REASON_OUTPUT = 400  # characters of it quoted in the reason
# The content is read-only: tools that write caches next to the file (Python's bytecode, as
# `python3 -m py_compile` does) write them under the private home instead.
_PRELUDE = 'export PYTHONPYCACHEPREFIX="$HOME/.cache/pycache"\n'

_NOT_REPORTED = {
    Status.REFUTED: "the verifier refuted the finding",
    Status.UNVERIFIED: "the finding was not verified",
    Status.FILTERED: "the finding is filtered out of the report",
    Status.SUPPRESSED: "the finding is suppressed",
}


_UNCONFINED = {
    "tools": "no sandboxed shell can run here (agents read the content with read-only tools), "
    "and the command would run the reviewed code unconfined, where it could read your files "
    "and your processes' environment and reach the network",
    "none": "--sandbox off, and the command would run the reviewed code unconfined",
}


def unconfined_reason(sandbox: Sandbox) -> str | None:
    """Why ``suggestion-check`` may not run under ``sandbox``; None when it may (bubblewrap
    or Landlock).

    The check executes content anyone may have written; only a shell sandbox keeps it from
    orch-review's environment (``/proc/<pid>/environ``), the user's files and the network.
    """
    if sandbox.kind in ("bubblewrap", "landlock"):
        return None
    return _UNCONFINED[sandbox.kind]


@dataclass(frozen=True)
class PatchChecker:
    """Checks findings' replacements against the content under review.

    ``read`` gives a file of the content under review (None when it has no such file);
    ``root`` is where the sandbox shows that content; ``sandbox`` runs ``command``; without
    one, no command runs and ``unavailable`` says why.
    """

    read: Callable[[str], bytes | None]
    command: str | None = None
    sandbox: Sandbox | None = None
    root: Path | None = None
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    timeout: float = CHECK_TIMEOUT
    budget: float = CHECKS_BUDGET
    clock: Callable[[], float] = time.monotonic
    unavailable: str = "no sandbox"

    def check_all(self, findings: Sequence[Finding]) -> list[Finding]:
        """``findings``, each with a replacement carrying its :class:`PatchCheck`."""
        deadline = self.clock() + self.budget
        return [
            f
            if f.replacement is None
            else dataclasses.replace(f, patch_check=self.check(f, deadline))
            for f in findings
        ]

    def check(self, finding: Finding, deadline: float | None = None) -> PatchCheck:
        """Whether ``finding``'s replacement is a verified patch, and why (not); no check
        command starts after ``deadline`` (on :attr:`clock`)."""
        assert finding.replacement is not None
        if finding.status is not Status.CONFIRMED:
            return PatchCheck(False, _NOT_REPORTED[finding.status])
        assert finding.verdict is not None  # confirmed
        if finding.verdict.fix_ok is not True:
            return PatchCheck(False, _not_approved(finding.verdict))
        data = self.read(finding.path)
        if data is None:
            return PatchCheck(False, "the file is not in the reviewed content")
        try:
            text = decode(data)
            reviewed = "\n".join(original_lines(text, finding.start_line, finding.end_line))
            patched = apply(text, finding.start_line, finding.end_line, finding.replacement)
        except PatchError as exc:
            return PatchCheck(False, str(exc))
        if self.command is None:
            why = "applies to the reviewed lines (no suggestion-check set)"
            return PatchCheck(True, why, reviewed)
        if deadline is not None and self.clock() >= deadline:
            why = f"not checked: suggestion-check used the {self.budget:g} s it has per review"
            return PatchCheck(False, why, reviewed)
        ran = self._run(finding.path, patched.encode("utf-8"))
        return dataclasses.replace(ran, reviewed=reviewed)

    def _run(self, path: str, patched: bytes) -> PatchCheck:
        assert self.command is not None
        if self.sandbox is None or self.root is None:
            return PatchCheck(False, f"suggestion-check did not run: {self.unavailable}")
        command = self.command.replace("{path}", shlex.quote(path))
        with tempdirs.directory("patch-check") as scratch:
            launcher, cwd = _scratch_launcher(self.sandbox, self.root, scratch, path, patched)
            with BashSession(
                cwd, env=self.env, timeout=self.timeout, output_cap=_OUTPUT_CAP, sandbox=launcher
            ) as shell:
                result = shell.run(_PRELUDE + command)
        said = _tail(result.output)
        if result.timed_out:
            return PatchCheck(False, f"`{self.command}` timed out after {self.timeout:g} s")
        if result.exit_code != 0:
            status = "was stopped" if result.exit_code is None else f"exit {result.exit_code}"
            return PatchCheck(False, f"`{self.command}` failed ({status})" + said)
        return PatchCheck(True, f"applies to the reviewed lines; `{self.command}` passed")


def _not_approved(verdict: Verdict) -> str:
    if verdict.fix_ok is None:
        why = verdict.fix_reason or "it did not judge the fix"
    else:
        why = verdict.fix_reason or "it rejected the fix"
    return f"the verifier did not approve the fix: {why}"


def _tail(output: str) -> str:
    text = output.strip()
    if not text:
        return ""
    if len(text) > _REASON_OUTPUT:
        text = "…" + text[-_REASON_OUTPUT:]
    return ": " + text


def _scratch_launcher(
    sandbox: Sandbox, root: Path, scratch: Path, path: str, patched: bytes
) -> tuple[ShellLauncher, Path]:
    """A launcher that shows the patched file at ``path``, and where the command starts."""
    copy = scratch / "patched"
    copy.write_bytes(patched)
    copy.chmod(0o444)
    launcher = sandbox.launcher
    assert launcher is not None  # unconfined_reason refuses a sandbox without a shell
    if isinstance(launcher, BubblewrapLauncher):
        target = str(root / path)
        view = launcher.view
        if view is not None and view.root.resolve() == root.resolve():
            # Mounted before the read-only remounts, after every other mount of the path.
            steps = list(view.steps)
            at = next((i for i, s in enumerate(steps) if s[0] == "readonly"), len(steps))
            steps.insert(at, ("bind", str(copy), target))
            view = View(view.root, tuple(steps), view.extra)
        else:  # the content written out at root: show it, and the copy over the one file
            view = View(root, (("bind", str(root), str(root)), ("bind", str(copy), target)), ())
        return dataclasses.replace(launcher, view=view), root
    if isinstance(launcher, LandlockLauncher):
        # Root's shells run as another uid, which must walk to the tree by its path (Python
        # lists the directory it imports from by its absolute path).
        scratch.chmod(0o711)
        tree = scratch / "tree"
        link_tree(root, tree)
        (tree / path).unlink(missing_ok=True)
        copy.rename(tree / path)
        return launcher, tree
    alone = scratch / "tree"
    target_file = alone / path
    target_file.parent.mkdir(parents=True)
    copy.rename(target_file)
    for directory in [target_file.parent, *target_file.parent.parents]:
        if directory == scratch:
            break
        directory.chmod(0o555)
    return launcher, alone


def link_tree(source: Path, target: Path) -> None:
    """``source`` again at ``target``: directories made, files hard-linked (copied where a
    link cannot be made, as across file systems), symbolic links copied as links."""
    for directory, dirs, files in os.walk(source):
        here = Path(directory)
        there = target / here.relative_to(source)
        there.mkdir(exist_ok=True)
        there.chmod(0o755)
        for name in [*files, *(d for d in dirs if (here / d).is_symlink())]:
            item = here / name
            if item.is_symlink():
                os.symlink(os.readlink(item), there / name)
                continue
            try:
                os.link(item, there / name)
            except OSError:
                shutil.copy2(item, there / name)
