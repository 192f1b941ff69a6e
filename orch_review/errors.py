"""Exit codes and the exception hierarchy that maps onto them.

Every error a user can cause or fix is an :class:`OrchReviewError` whose message is one
sentence saying what happened and what to do. The CLI's single handler turns it into the
exit code it carries; anything else is a crash and gets a crash log.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes; 1 never means "crashed"."""

    CLEAN = 0
    FINDINGS = 1
    USAGE = 2
    INCOMPLETE = 3
    CRASH = 4
    HANGUP = 129
    INTERRUPTED = 130
    TERMINATED = 143


#: Noted on the exception that ends a review without a journal (Ctrl-C, a signal): nothing
#: it finished is kept for a rerun, so what is said on the way out must not promise a resume.
NO_JOURNAL_NOTE = "orch-review: the journal was off; nothing is kept for a rerun"


class OrchReviewError(Exception):
    """Base class: an error the user can act on, carrying its exit code."""

    exit_code: ExitCode = ExitCode.USAGE


class ConfigError(OrchReviewError):
    """Configuration is unreadable or invalid (names the key and the file)."""


class UsageError(OrchReviewError):
    """Options that contradict each other or cannot be carried out (names what to change)."""


class ReviewDeclined(OrchReviewError):
    """The person at the terminal chose not to start a review estimated above
    `confirm-above-usd` (exit 2: nothing ran; the message says how not to be asked)."""


class OutputError(OrchReviewError):
    """A report file cannot be written where it was asked for."""


class GitError(OrchReviewError):
    """Not a git repository, a bad ref, or git refusing what we asked."""


class MissingProgram(OrchReviewError):
    """A program orch-review runs (git, bash) is not installed (names the package)."""


class ScratchSpaceError(OrchReviewError):
    """What a review writes to the temporary directory (the snapshot) does not fit there."""


class CredentialsMissing(OrchReviewError):
    """No API key and no base URL that could do without one."""


class AuthenticationFailed(OrchReviewError):
    """The API rejected the credentials."""


class ApiUnusable(OrchReviewError):
    """No request to the API can succeed: its endpoint cannot be reached, or the account
    may not use it (no credit left). Names the endpoint and what to do."""


class ApiUnavailable(OrchReviewError):
    """The API could not be used at all (for example the main agent kept failing)."""

    exit_code = ExitCode.INCOMPLETE


class BudgetExceeded(OrchReviewError):
    """A session-wide budget cap was reached before anything could be reviewed."""

    exit_code = ExitCode.INCOMPLETE


class RequestRejected(OrchReviewError):
    """The API refused one request for good (for example the prompt was too long)."""

    exit_code = ExitCode.INCOMPLETE
