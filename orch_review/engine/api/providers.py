"""Where the models run: the Claude API (or a gateway), Amazon Bedrock, Google Vertex AI or
Microsoft Foundry, each through the anthropic SDK's own client class.

Everything a client needs is read here from the review's copy of the environment and passed
to the constructor explicitly: a library caller's ``env`` may differ from the process
environment, where the AWS and Google credential chains would otherwise look, lazily.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orch_review import sanitize
from orch_review.errors import AuthenticationFailed, ConfigError, CredentialsMissing

BEDROCK_RETRYABLE_EXCEPTIONS = frozenset(
    {
        "throttlingException",
        "serviceUnavailableException",
        "internalServerException",
        "modelStreamErrorException",
        "modelTimeoutException",
    }
)
NO_KEY_PLACEHOLDER = "no-key"  # a custom ANTHROPIC_BASE_URL may need no key at all
GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# The Entra ID audience of Claude in Microsoft Foundry, as the SDK's Foundry documentation
# names it (the Azure CLI asks for `--resource https://ai.azure.com`).
FOUNDRY_SCOPE = "https://ai.azure.com/.default"
# DefaultAzureCredential's sources a CI job or a developer does not use: managed identity
# would probe the instance metadata service (a wait on any machine that is not an Azure VM),
# the others read desktop tools' caches. AZURE_TOKEN_CREDENTIALS overrides this choice.
_AZURE_UNUSED_SOURCES = (
    "managed_identity",
    "shared_token_cache",
    "visual_studio_code",
    "powershell",
    "developer_cli",
    "interactive_browser",
    "broker",
)

_MISSING = {
    "anthropic": (
        "No API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or point "
        "ANTHROPIC_BASE_URL at an Anthropic-compatible server."
    ),
    "bedrock": (
        "No AWS credentials for Bedrock: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
        "AWS_SESSION_TOKEN for temporary ones), AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK; in "
        "GitHub Actions use aws-actions/configure-aws-credentials."
    ),
    "vertex": (
        "No Google credentials for Vertex AI: run `gcloud auth application-default login`, set "
        "GOOGLE_APPLICATION_CREDENTIALS or CLOUDSDK_AUTH_ACCESS_TOKEN; in GitHub Actions use "
        "google-github-actions/auth."
    ),
    "foundry": (
        "No credentials for Microsoft Foundry: set ANTHROPIC_FOUNDRY_API_KEY, or sign in with "
        "Microsoft Entra ID: `az login`, a service principal (AZURE_TENANT_ID, AZURE_CLIENT_ID "
        "and AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH) or workload identity "
        "(AZURE_FEDERATED_TOKEN_FILE); in GitHub Actions use azure/login."
    ),
}
# What to check when the provider answers 401.
CREDENTIALS = {
    "anthropic": "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)",
    "bedrock": "the AWS credentials and their access to Bedrock",
    "vertex": "the Google credentials and their access to Vertex AI",
    "foundry": (
        "ANTHROPIC_FOUNDRY_API_KEY, or the Entra ID identity's role on the Foundry resource"
    ),
}
# Where the endpoint is set, for a message about one that cannot be reached.
ENDPOINT_SETTING = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "bedrock": "AWS_REGION (or ANTHROPIC_BEDROCK_BASE_URL)",
    "vertex": "CLOUD_ML_REGION (or ANTHROPIC_VERTEX_BASE_URL)",
    "foundry": "ANTHROPIC_FOUNDRY_RESOURCE (or ANTHROPIC_FOUNDRY_BASE_URL)",
}
_EXTRAS = {
    "bedrock": ("botocore", "boto3"),
    "vertex": ("google.auth", "google-auth"),
    "foundry": ("azure.identity", "azure-identity"),
}


@dataclass(frozen=True, slots=True)
class SdkSetup:
    """Which SDK client to build, with its constructor's keyword arguments."""

    provider: str
    options: Mapping[str, Any] = field(repr=False)  # holds secrets
    # Vertex without an access token: the GOOGLE_APPLICATION_CREDENTIALS of the review's
    # environment (None: Application Default Credentials' own search).
    google_credentials_file: str | None = None
    # Foundry without a key: the review's environment, for the Entra ID credential chain.
    azure_env: Mapping[str, str] | None = field(default=None, repr=False)

    @property
    def event_stream(self) -> bool:
        """Whether responses stream as AWS event-stream frames rather than SSE lines."""
        return self.provider == "bedrock"

    @property
    def counts_tokens(self) -> bool:
        """Whether the provider serves the token-counting endpoint."""
        return self.provider != "bedrock"


def has_credentials(env: Mapping[str, str], provider: str | None = None) -> bool:
    """True when requests to ``provider`` could be authenticated; with no provider, when
    credentials for any of them are in sight."""
    if provider is None:
        return any(_credentials_visible(name, env) for name in _MISSING)
    return _credentials_visible(provider, env)


def sdk_setup(provider: str, env: Mapping[str, str], *, timeout: float) -> SdkSetup:
    """Check ``env`` has what ``provider`` needs and say what to set when it does not."""
    if provider not in _MISSING:
        raise ValueError(f"unknown provider {provider!r}")  # the config checked it: a bug
    # The AWS and Google credential chains are resolved for real while the client is built:
    # an EC2 instance role or a GCE service account leaves no trace in the environment.
    if provider in ("anthropic", "foundry") and not _credentials_visible(provider, env):
        raise CredentialsMissing(_MISSING[provider])
    options: dict[str, Any] = {"timeout": timeout, "max_retries": 0}
    if provider == "vertex":
        credentials_file = env.get("GOOGLE_APPLICATION_CREDENTIALS") or None
        return SdkSetup(provider, options | _vertex(env), credentials_file)
    if provider == "bedrock":
        options |= _bedrock(env)
    elif provider == "foundry":
        options |= _foundry(env)
        if "api_key" not in options:
            return SdkSetup(provider, options, azure_env=dict(env))
    else:
        options |= _anthropic(env)
    return SdkSetup(provider, options)


def build_sdk(setup: SdkSetup) -> Any:
    """The SDK client for ``setup`` (slow: imports the SDK and builds its HTTP client)."""
    import anthropic

    options = dict(setup.options)
    if setup.provider == "bedrock":
        _check_aws_credentials(options)
        return anthropic.AnthropicBedrock(**options)
    if setup.provider == "vertex":
        if options.get("access_token") is None:
            options["credentials"] = _google_credentials(setup.google_credentials_file)
        return anthropic.AnthropicVertex(**options)
    if setup.provider == "foundry":
        if setup.azure_env is not None:
            options["azure_ad_token_provider"] = _entra_token_provider(setup.azure_env)
        return anthropic.AnthropicFoundry(**options)
    return anthropic.Anthropic(**options)


def _credentials_visible(provider: str, env: Mapping[str, str]) -> bool:
    def given(*names: str) -> bool:
        return any(env.get(name) for name in names)

    home = Path(env["HOME"]) if env.get("HOME") else None
    if provider == "bedrock":
        shared = [env.get("AWS_SHARED_CREDENTIALS_FILE"), env.get("AWS_CONFIG_FILE")]
        if home is not None:
            shared += [str(home / ".aws" / "credentials"), str(home / ".aws" / "config")]
        return (
            given("AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE")
            or given("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")
            or (given("AWS_ACCESS_KEY_ID") and given("AWS_SECRET_ACCESS_KEY"))
            or any(path and Path(path).is_file() for path in shared)
        )
    if provider == "vertex":
        gcloud = Path(env["CLOUDSDK_CONFIG"]) if env.get("CLOUDSDK_CONFIG") else None
        if gcloud is None and home is not None:
            gcloud = home / ".config" / "gcloud"
        adc = gcloud is not None and (gcloud / "application_default_credentials.json").is_file()
        return given("CLOUDSDK_AUTH_ACCESS_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS") or adc
    if provider == "foundry":
        return given("ANTHROPIC_FOUNDRY_API_KEY") or _entra_visible(env, home)
    return given("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


def _anthropic(env: Mapping[str, str]) -> dict[str, Any]:
    api_key = env.get("ANTHROPIC_API_KEY") or None
    auth_token = env.get("ANTHROPIC_AUTH_TOKEN") or None
    if api_key is None and auth_token is None:
        api_key = NO_KEY_PLACEHOLDER
    return {
        "api_key": api_key,
        "auth_token": None if api_key else auth_token,
        "base_url": env.get("ANTHROPIC_BASE_URL") or None,
    }


def _bedrock(env: Mapping[str, str]) -> dict[str, Any]:
    _require_extra("bedrock")  # botocore decodes the event stream, whatever the credentials
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or _profile_region(env)
    if not region:
        raise ConfigError(
            "Bedrock needs a region: set AWS_REGION (or AWS_DEFAULT_REGION, or a region in your "
            "AWS profile)."
        )
    options: dict[str, Any] = {
        "aws_region": region,
        "base_url": env.get("ANTHROPIC_BEDROCK_BASE_URL") or None,
    }
    if env.get("AWS_BEARER_TOKEN_BEDROCK"):
        options["api_key"] = env["AWS_BEARER_TOKEN_BEDROCK"]
    elif env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
        options["aws_access_key"] = env["AWS_ACCESS_KEY_ID"]
        options["aws_secret_key"] = env["AWS_SECRET_ACCESS_KEY"]
        options["aws_session_token"] = env.get("AWS_SESSION_TOKEN") or None
    else:
        options["aws_profile"] = env.get("AWS_PROFILE") or None
    return options


def _profile_region(env: Mapping[str, str]) -> str | None:
    import botocore.session

    session = botocore.session.Session(profile=env.get("AWS_PROFILE") or None)
    try:
        region = session.get_config_variable("region")
    except Exception:  # a profile that does not exist: the credentials check says so
        return None
    return str(region) if region else None


def _check_aws_credentials(options: Mapping[str, Any]) -> None:
    """Resolve the AWS credential chain now, so a missing profile or role is a clear error
    rather than a failure to sign the first request."""
    if options.get("api_key") or options.get("aws_access_key"):
        return
    import boto3
    import botocore.exceptions

    try:
        session = boto3.Session(
            profile_name=options.get("aws_profile"), region_name=options["aws_region"]
        )
        found = session.get_credentials()
    except botocore.exceptions.BotoCoreError as exc:
        raise CredentialsMissing(f"{_MISSING['bedrock']} ({exc})") from None
    if found is None:
        raise CredentialsMissing(_MISSING["bedrock"])


def _vertex(env: Mapping[str, str]) -> dict[str, Any]:
    token = env.get("CLOUDSDK_AUTH_ACCESS_TOKEN") or None
    if token is None:
        _require_extra("vertex")
    region = env.get("CLOUD_ML_REGION")
    if not region:
        raise ConfigError(
            "Vertex AI needs a region: set CLOUD_ML_REGION (for example `global` or `us-east5`)."
        )
    project = env.get("ANTHROPIC_VERTEX_PROJECT_ID") or env.get("GOOGLE_CLOUD_PROJECT")
    if not project:
        raise ConfigError(
            "Vertex AI needs a project: set ANTHROPIC_VERTEX_PROJECT_ID (or GOOGLE_CLOUD_PROJECT)."
        )
    return {
        "region": region,
        "project_id": project,
        "access_token": token,
        "base_url": env.get("ANTHROPIC_VERTEX_BASE_URL") or None,
    }


def _google_credentials(path: str | None) -> Any:
    """Google credentials with a fresh token: a bad file, an unknown service account or a
    refused token exchange is reported now, not as a failure of the first request."""
    import google.auth
    import google.auth.exceptions
    import google.auth.transport.requests

    try:
        if path is not None:
            credentials, _ = google.auth.load_credentials_from_file(path, scopes=[GOOGLE_SCOPE])
        else:
            credentials, _ = google.auth.default(scopes=[GOOGLE_SCOPE])
    except google.auth.exceptions.DefaultCredentialsError as exc:
        raise CredentialsMissing(f"{_MISSING['vertex']} ({exc})") from None
    try:
        credentials.refresh(google.auth.transport.requests.Request())
    except google.auth.exceptions.GoogleAuthError as exc:
        raise AuthenticationFailed(
            f"Google refused the credentials for Vertex AI: {exc}. Check {CREDENTIALS['vertex']}."
        ) from None
    return credentials


def _foundry(env: Mapping[str, str]) -> dict[str, Any]:
    resource = env.get("ANTHROPIC_FOUNDRY_RESOURCE") or None
    base_url = env.get("ANTHROPIC_FOUNDRY_BASE_URL") or None
    if (resource is None) == (base_url is None):
        raise ConfigError(
            "Microsoft Foundry needs exactly one of ANTHROPIC_FOUNDRY_RESOURCE (the resource "
            "name) and ANTHROPIC_FOUNDRY_BASE_URL."
        )
    options = {"resource": resource} if resource else {"base_url": base_url}
    if env.get("ANTHROPIC_FOUNDRY_API_KEY"):  # a key wins over Entra ID
        return options | {"api_key": env["ANTHROPIC_FOUNDRY_API_KEY"]}
    _require_extra("foundry")
    return options


def _entra_visible(env: Mapping[str, str], home: Path | None) -> bool:
    """Whether a Microsoft Entra ID identity is in sight: a service principal or workload
    identity in the environment, a chosen credential, or a signed-in Azure CLI."""
    identity = env.get("AZURE_TENANT_ID") and env.get("AZURE_CLIENT_ID")
    secret = ("AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_FEDERATED_TOKEN_FILE")
    if (identity and any(env.get(name) for name in secret)) or env.get("AZURE_TOKEN_CREDENTIALS"):
        return True
    config = Path(env["AZURE_CONFIG_DIR"]) if env.get("AZURE_CONFIG_DIR") else None
    if config is None and home is not None:
        config = home / ".azure"
    # `az login` (and azure/login, which runs it) keeps its tokens there.
    return config is not None and any(config.glob("msal_token_cache.*"))


def _entra_token_provider(env: Mapping[str, str]) -> Callable[[], str]:
    """A Foundry bearer token provider from the Entra ID credential chain, tried now, so that
    no identity, or one Entra ID refuses, is reported before the first request."""
    from azure.core.exceptions import ClientAuthenticationError
    from azure.identity import get_bearer_token_provider

    provide = get_bearer_token_provider(_azure_credential(env), FOUNDRY_SCOPE)
    try:
        provide()
    except ClientAuthenticationError as exc:
        raise CredentialsMissing(f"{_MISSING['foundry']} Entra ID: {_reason(exc)}") from None

    def token() -> str:  # the SDK asks before every request; tokens are cached till expiry
        try:
            return provide()
        except ClientAuthenticationError as exc:
            raise AuthenticationFailed(
                f"Microsoft Entra ID gave no token for Foundry: {_reason(exc)}. Check "
                f"{CREDENTIALS['foundry']}."
            ) from None

    return token


def _azure_credential(env: Mapping[str, str]) -> Any:
    """DefaultAzureCredential, its environment step fed from the review's environment (the
    client secret is no longer in the process's); by default without the sources a review
    never uses (see _AZURE_UNUSED_SOURCES)."""
    from azure.identity import (
        CertificateCredential,
        ChainedTokenCredential,
        ClientSecretCredential,
        DefaultAzureCredential,
    )

    tenant, client = env.get("AZURE_TENANT_ID"), env.get("AZURE_CLIENT_ID")
    chain: list[Any] = []
    if tenant and client and env.get("AZURE_CLIENT_SECRET"):
        chain.append(ClientSecretCredential(tenant, client, env["AZURE_CLIENT_SECRET"]))
    elif tenant and client and env.get("AZURE_CLIENT_CERTIFICATE_PATH"):
        chain.append(
            CertificateCredential(
                tenant,
                client,
                env["AZURE_CLIENT_CERTIFICATE_PATH"],
                password=env.get("AZURE_CLIENT_CERTIFICATE_PASSWORD") or None,
            )
        )
    chosen = (env.get("AZURE_TOKEN_CREDENTIALS") or "").strip().lower()
    if chosen != "environmentcredential":
        unused = () if chosen else _AZURE_UNUSED_SOURCES  # the user chose: no second-guessing
        excluded = {f"exclude_{source}_credential": True for source in unused}
        chain.append(
            DefaultAzureCredential(
                exclude_environment_credential=True,
                workload_identity_tenant_id=tenant,
                workload_identity_client_id=client,
                **excluded,
            )
        )
    return ChainedTokenCredential(*chain)


def _reason(exc: Exception, limit: int = 400) -> str:
    """The credential chain's account of what it tried, on one line (azure-identity
    already hides tokens in it)."""
    text = sanitize.line(str(getattr(exc, "message", None) or exc))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _require_extra(provider: str) -> None:
    from orch_review.version import install_command

    module, package = _EXTRAS[provider]
    try:
        installed = importlib.util.find_spec(module) is not None
    except ImportError:  # its parent package is missing
        installed = False
    if not installed:
        raise ConfigError(
            f"provider = {provider} needs {package}, which is not installed: "
            f"{install_command(provider)}"
        )
