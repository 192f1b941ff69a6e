"""Microsoft Foundry with Microsoft Entra ID: the credential chain, end to end, offline.

A fake `az` on PATH plays a signed-in Azure CLI (what `azure/login` leaves in a GitHub
Actions job): DefaultAzureCredential's AzureCliCredential runs
`az account get-access-token --output json --resource ...` and reads `accessToken` and
`expires_on` from its JSON output. The fake Messages API then must see that token as a Bearer
on Foundry's wire format. A trap managed-identity endpoint proves the chain never probes one.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from orch_review.engine.api.providers import has_credentials
from tests.conftest import GitRepoFactory
from tests.engine.api.test_providers import (
    FOUNDRY_KEY,
    REVIEW_REQUESTS,
    assert_planted_findings,
    base_env,
    foundry_env,
    review,
)
from tests.fakes.http_server import Exchange, LocalHTTPServer
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script

pytest.importorskip("azure.identity", reason="the test extra installs orch-review[foundry]")

__all__ = ["base_env"]  # the fixture, used by name

ENTRA_TOKEN = "eyJ0eXAi.entra-canary-6d2"
EXPIRES_ON = 4102444800  # 2100-01-01: no refresh during a test
NOT_LOGGED_IN = "ERROR: Please run 'az login' to setup account.\n"


class FakeAzureCli:
    """An `az` executable: answers `account get-access-token` as a signed-in CLI does (or,
    signed out, as the real one fails), and logs each argv."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "az-bin"
        self.bin.mkdir()
        self.log = root / "az-calls.log"
        self.config = root / "azure-config"  # AZURE_CONFIG_DIR
        self.config.mkdir()
        self.sign_in(ENTRA_TOKEN)

    def sign_in(self, token: str) -> None:
        answer = {
            "accessToken": token,
            "expiresOn": "2100-01-01 00:00:00.000000",
            "expires_on": EXPIRES_ON,
            "subscription": "00000000-0000-0000-0000-000000000001",
            "tenant": "00000000-0000-0000-0000-000000000002",
            "tokenType": "Bearer",
        }
        self._write(f"cat <<'EOF'\n{json.dumps(answer)}\nEOF\n")
        (self.config / "msal_token_cache.json").write_text("{}")

    def sign_out(self) -> None:
        self._write(f"printf '%s' {NOT_LOGGED_IN!r} >&2\nexit 1\n")

    @property
    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def _write(self, body: str) -> None:
        script = self.bin / "az"
        script.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{self.log}'\n{body}")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def az(tmp_path: Path) -> FakeAzureCli:
    return FakeAzureCli(tmp_path)


def entra_env(
    base_env: dict[str, str], fake_api: FakeMessagesAPI, az: FakeAzureCli
) -> dict[str, str]:
    env = foundry_env(base_env, fake_api)
    del env["ANTHROPIC_FOUNDRY_API_KEY"]
    return {
        **env,
        "PATH": f"{az.bin}{os.pathsep}{env['PATH']}",
        "AZURE_CONFIG_DIR": str(az.config),
    }


def test_foundry_without_a_key_sends_the_azure_cli_token_as_bearer(
    fake_api: FakeMessagesAPI,
    base_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    az: FakeAzureCli,
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.expected_key = ENTRA_TOKEN

    result, _ = review(repo, entra_env(base_env, fake_api, az), tmp_path)

    assert_planted_findings(result)
    requests = fake_api.message_requests
    assert len(requests) == REVIEW_REQUESTS and {r.provider for r in requests} == {"foundry"}
    for request in requests:
        assert request.wire_path == "/anthropic/v1/messages"
        assert request.headers["authorization"] == f"Bearer {ENTRA_TOKEN}"
        assert "x-api-key" not in request.headers and "api-key" not in request.headers
    # One token for the whole review: the chain caches it until it nears expiry.
    assert az.calls == ["account get-access-token --output json --resource https://ai.azure.com"]


def test_the_chain_never_probes_a_managed_identity_endpoint(
    fake_api: FakeMessagesAPI,
    base_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    az: FakeAzureCli,
) -> None:
    trap: list[str] = []

    def answer(exchange: Exchange) -> None:
        trap.append(exchange.route)
        exchange.send_json(500, {"error": "a managed identity was asked"})

    server = LocalHTTPServer(answer, name="fake-managed-identity")
    server.start()
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    # What App Service sets: DefaultAzureCredential would ask there before the Azure CLI.
    env = {
        **entra_env(base_env, fake_api, az),
        "IDENTITY_ENDPOINT": f"{server.base_url}/msi/token",
        "IDENTITY_HEADER": "identity-header-canary",
    }
    try:
        result, _ = review(repo, env, tmp_path)
    finally:
        server.stop()

    assert_planted_findings(result)
    assert trap == []
    assert fake_api.message_requests[0].headers["authorization"] == f"Bearer {ENTRA_TOKEN}"


def test_a_key_wins_over_entra_id(
    fake_api: FakeMessagesAPI,
    base_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    az: FakeAzureCli,
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.expected_key = FOUNDRY_KEY
    env = {**entra_env(base_env, fake_api, az), "ANTHROPIC_FOUNDRY_API_KEY": FOUNDRY_KEY}

    result, _ = review(repo, env, tmp_path)

    assert_planted_findings(result)
    assert fake_api.message_requests[0].headers["x-api-key"] == FOUNDRY_KEY
    assert "authorization" not in fake_api.message_requests[0].headers
    assert az.calls == []


def test_a_signed_out_azure_cli_says_what_to_set_before_any_request(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory, az: FakeAzureCli
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    env = entra_env(base_env, fake_api, az)
    az.sign_out()

    result = run_cli(repo, env, "--all")

    assert result.returncode == 2, result.stderr
    assert "No credentials for Microsoft Foundry: set ANTHROPIC_FOUNDRY_API_KEY" in result.stderr
    assert "az login" in result.stderr and "azure/login" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(az.calls) == 1
    assert fake_api.requests == []


def test_a_token_the_provider_refuses_names_the_entra_identity(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory, az: FakeAzureCli
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.expected_key = "a-token-for-someone-else"

    result = run_cli(repo, entra_env(base_env, fake_api, az), "--all")

    assert result.returncode == 2, result.stderr
    assert "(401)" in result.stderr and "Entra ID identity's role" in result.stderr
    assert "Traceback" not in result.stderr


def test_without_azure_identity_the_foundry_extra_is_named(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory, az: FakeAzureCli
) -> None:
    repo = make_planted_repo(git_repo)
    # As if azure-identity were not installed: None in sys.modules stops its import.
    start = "import sys; sys.modules['azure'] = None; from orch_review.cli import main; main()"

    result = subprocess.run(
        [sys.executable, "-c", start, "--all"],
        cwd=repo,
        env=entra_env(base_env, fake_api, az),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )

    assert result.returncode == 2, result.stderr
    assert "pip install 'orch-review[foundry] @ git+" in result.stderr
    assert fake_api.requests == [] and az.calls == []


@pytest.mark.parametrize(
    ("env", "cache", "expected"),
    [
        ({}, False, False),
        ({}, True, True),  # a signed-in Azure CLI
        ({"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "s"}, False, True),
        ({"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c"}, False, False),
        (
            {"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_FEDERATED_TOKEN_FILE": "/t"},
            False,
            True,
        ),
        ({"AZURE_TOKEN_CREDENTIALS": "ManagedIdentityCredential"}, False, True),
    ],
    ids=["nothing", "azure-cli", "secret", "no-secret", "workload-identity", "chosen"],
)
def test_entra_id_in_sight_for_foundry(
    tmp_path: Path, env: dict[str, str], cache: bool, expected: bool
) -> None:
    if cache:
        (tmp_path / ".azure").mkdir()
        (tmp_path / ".azure" / "msal_token_cache.json").write_text("{}")

    assert has_credentials({**env, "HOME": str(tmp_path)}, "foundry") is expected
