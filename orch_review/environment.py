"""The secrets in an environment, and a copy of it without them for a child process.

A leaf: it imports nothing from orch-review, so git on the host and the engine both use it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# The Claude API's and the code hosts' credentials.
API_SECRET_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")
# The cloud providers' own (where to find credentials, such as AWS_PROFILE, is not a secret).
PROVIDER_SECRET_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "CLOUDSDK_AUTH_ACCESS_TOKEN",
    "ANTHROPIC_FOUNDRY_API_KEY",
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
)
SECRET_VARIABLES = (*API_SECRET_VARIABLES, *PROVIDER_SECRET_VARIABLES)


def user_cache_home(environ: Mapping[str, str]) -> str | None:
    """The user's cache directory: ``$XDG_CACHE_HOME`` or ``$HOME/.cache``, each only when
    absolute; None without either."""
    cache = environ.get("XDG_CACHE_HOME") or ""
    if os.path.isabs(cache):
        return cache
    home = environ.get("HOME") or ""
    return os.path.join(home, ".cache") if os.path.isabs(home) else None


def without_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``environ`` for a child process: every variable but the secrets."""
    return {name: value for name, value in environ.items() if name not in SECRET_VARIABLES}


def blanked_secrets() -> dict[str, str]:
    """Each secret set to the empty string: for a child that a library (GitPython) starts
    with the process environment plus overrides, and that can therefore only be given
    values, not have variables removed."""
    return dict.fromkeys(SECRET_VARIABLES, "")
