"""The pre-commit hook: review exactly what is about to be committed (or pushed).

Fits a commit: nothing reviewable staged means exit 0 at once with no API call; no API key
fails the hook (exit 2) saying what to set and how to skip it, because a hook that passes
without reviewing is a green tick for nothing (``require-key = false`` or
``--no-require-key`` make it pass with one line instead); the journal is the one manual
runs use, so retrying a commit pays only for what changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from orch_review.core import ReviewOptions
from orch_review.errors import CredentialsMissing, ExitCode

SKIP_HINT = "skip this hook for one commit with `SKIP=orch-review git commit ...`"


@dataclass(frozen=True, slots=True)
class HookRequest:
    """What pre-commit asked for: the files it passed and the stage it runs in."""

    files: tuple[str, ...]
    from_ref: str | None = None
    to_ref: str | None = None

    @classmethod
    def from_env(cls, files: Sequence[str], env: Mapping[str, str]) -> HookRequest:
        """Read ``PRE_COMMIT_FROM_REF``/``PRE_COMMIT_TO_REF`` (set for pre-push)."""
        return cls(tuple(files), env.get("PRE_COMMIT_FROM_REF"), env.get("PRE_COMMIT_TO_REF"))

    def options(self, settings: Mapping[str, object]) -> ReviewOptions:
        """The review: the pushed commits for pre-push, else the index, narrowed to the files.

        File names are literal pathspecs: pre-commit passes real names, which may contain
        characters git would otherwise treat as globs or magic.
        """
        pathspecs = tuple(f":(literal){name}" for name in self.files)
        if self.from_ref and self.to_ref:
            return ReviewOptions(
                base=self.from_ref, head=self.to_ref, paths=pathspecs, settings=settings
            )
        return ReviewOptions(staged=True, paths=pathspecs, settings=settings)


def missing_key(require_key: bool, provider: str) -> tuple[str, ExitCode]:
    """The one line printed without credentials, and the exit code it goes with; raises
    CredentialsMissing (exit 2) unless ``require_key`` was turned off deliberately."""
    what = (
        "ANTHROPIC_API_KEY"
        if provider == "anthropic"
        else f"the credentials of {provider} (see docs/providers.md)"
    )
    if require_key:
        raise CredentialsMissing(
            f"no API key, so the commit was not reviewed: set {what}, or {SKIP_HINT} "
            "(`require-key = false` in the configuration lets commits pass unreviewed)."
        )
    return (
        f"orch-review: review skipped: no API key (set {what} to review; require-key is off).",
        ExitCode.CLEAN,
    )
