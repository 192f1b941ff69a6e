"""The errors a host's API client raises, whatever the host: one base carrying the HTTP
status, and the two kinds a client retries (a rate limit, a server that failed or did not
answer). Each adapter's own refusals (a permission, a content) subclass the base."""

from __future__ import annotations

from orch_review.errors import ExitCode, OrchReviewError


class HostApiError(OrchReviewError):
    """A request the host's API refused or could not answer; carries the HTTP status if any."""

    exit_code = ExitCode.INCOMPLETE

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RateLimited(HostApiError):
    """403/429 from a rate limit; ``wait`` is how long the host asked us to wait."""

    def __init__(self, message: str, status: int, wait: float) -> None:
        super().__init__(message, status)
        self.wait = wait


class ServerError(HostApiError):
    """5xx, or no answer at all."""
